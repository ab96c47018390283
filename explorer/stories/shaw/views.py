"""Cached calls into relpos_core: a frozen ViewParams (+ small ints) in, numpy float32 out.

Nothing here holds a tensor after it returns, and every cache has a bounded number of entries.
Every function first asks ``explorer.frame.budget.plan_compute`` for its largest computation, so
whatever the controls or the URL say, an over-budget view is refused before anything is built.

Above DISPLAY_MAX positions every (n, n) view is the window ``params.window`` on both axes.
Attention needs every key of a row: it runs ``relative_attention`` with ``query_offset`` on the
window's query rows, one head, all n keys. The relative logits and tensor2tensor's steps are in
:mod:`explorer.stories.shaw.logits_views`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

import relpos_core as rc
from explorer.frame.budget import plan_compute
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs, view_array

CACHE_ENTRIES = 8


# ---- lookup ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookupView:
    distance: np.ndarray  # (W, W) j - i on the window (the whole (n, n) when n <= DISPLAY_MAX)
    clipped: np.ndarray  # (W, W) clip(j - i, -k, k)
    index: np.ndarray  # (W, W) clip(j - i, -k, k) + k
    table_k: np.ndarray  # (2k+1, d) w^K
    table_v: np.ndarray  # (2k+1, d) w^V


@cached(CACHE_ENTRIES)
def lookup_view(params: ViewParams) -> LookupView:
    start, stop = params.window
    size, k = stop - start, params.k
    plan_compute("lookup table", "bucket", size, params.head_dim, k=k, traces=3)
    inputs = example_inputs(params)
    distance = rc.relative_distances(size, size)  # a diagonal window: j - i as at its origin
    return LookupView(
        distance=view_array(distance),
        clipped=view_array(distance.clamp(-k, k)),
        index=view_array(rc.relative_index(size, size, k)),
        table_k=view_array(inputs.table_k),
        table_v=view_array(inputs.table_v),
    )


@cached(CACHE_ENTRIES)
def gathered_channel(params: ViewParams, channel: int) -> np.ndarray:
    """a^K[:, :, channel] on the window (W, W), without building a^K: w^K[index, channel]."""
    view = lookup_view(params)
    return view.table_k[:, channel][view.index.astype(np.int64)]


@cached(CACHE_ENTRIES)
def gathered_row(params: ViewParams, query: int) -> np.ndarray:
    """a^K[query, window] (W, d): the vectors query ``query`` meets at the window's keys."""
    view = lookup_view(params)
    start, stop = params.window
    index = rc.relative_index(1, stop - start, params.k, query_offset=query - start)[0]  # (W,)
    return view.table_k[index.numpy()]


# ---- attention ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionView:
    content_logits: np.ndarray  # (W, W) on the window
    relative_logits: np.ndarray  # (W, W)
    scaled_logits: np.ndarray  # (W, W) (content + relative) / sqrt(d)
    masked_logits: np.ndarray  # (W, W), NaN where the mask forbids
    allowed: np.ndarray  # (W, W) 1.0 / 0.0
    weights: np.ndarray  # (W, W), NaN where the mask forbids
    content_output: np.ndarray  # (W, d) sum_j a_ij v_j over all n keys
    relative_output: np.ndarray  # (W, d) sum_j a_ij a^V_ij
    output: np.ndarray  # (W, d) z_i
    # least and most share of its weight a row puts on the window's keys; None: no row has any
    weight_inside: tuple[float, float] | None
    scale: float


@cached(CACHE_ENTRIES)
def attention_view(params: ViewParams, head: int) -> AttentionView:
    """One head, the window's query rows against all n keys (rows are independent: exact)."""
    start, stop = params.window
    n, d = params.length, params.head_dim
    plan_compute("attention", "bucket", n, d, 1, k=params.k, rows=stop - start, traces=6)
    inputs = example_inputs(params)
    one = slice(head, head + 1)
    trace = rc.relative_attention(
        inputs.q[:, one, start:stop],
        inputs.k[:, one],
        inputs.v[:, one],
        inputs.table_k,
        inputs.table_v,
        mask=inputs.mask,
        causal=inputs.causal,
        query_offset=start,
        method="bucket",
        trace=True,
    )
    allowed = trace.allowed[0, 0, :, start:stop]

    def block(t: torch.Tensor) -> np.ndarray:
        return view_array(t[0, 0, :, start:stop])

    def blank(t: torch.Tensor) -> np.ndarray:
        return np.where(allowed.numpy(), block(t), np.nan).astype(np.float32)

    return AttentionView(
        content_logits=block(trace.content_logits),
        relative_logits=block(trace.relative_logits),
        scaled_logits=block(trace.scaled_logits),
        masked_logits=blank(trace.scaled_logits),
        allowed=view_array(allowed.float()),
        weights=blank(trace.weights),
        content_output=view_array(trace.content_output[0, 0]),
        relative_output=view_array(trace.relative_output[0, 0]),
        output=view_array(trace.output[0, 0]),
        weight_inside=_share_inside(trace.weights[0, 0].double(), start, stop),
        scale=trace.scale,
    )


def _share_inside(weights: torch.Tensor, start: int, stop: int) -> tuple[float, float] | None:
    """Least and most share of a row's weight (W, n) on keys start..stop-1, over the rows that
    have any weight. Read from the weight outside, so a row whose every visible key lies in the
    window is exactly 1 (a masked weight is exactly 0), not a float sum a rounding below 1."""
    total = weights.sum(-1)
    outside = weights[:, :start].sum(-1) + weights[:, stop:].sum(-1)
    some = total > 0
    if not some.any():
        return None
    share = 1 - outside[some] / total[some]
    return float(share.min()), float(share.max())


def attention_weights_heads(params: ViewParams) -> np.ndarray:
    """(h, W, W) weights of every head on the window, NaN where the mask forbids."""
    return np.stack([attention_view(params, head).weights for head in range(params.heads)])


# ---- repeated tokens ------------------------------------------------------------------------


@dataclass(frozen=True)
class RepeatedTokens:
    """The tokens that occur more than once, and how far apart their copies' q, k and v lie.

    ``spread`` is, for q, k and v, the largest Euclidean distance between two copies of one
    token's vectors in any head; ``widest`` the token it belongs to. At a model's first layer,
    or on random weights, a token's vectors depend on the token alone (spread 0); above it they
    carry what earlier layers mixed in from the token's neighbours and position.
    """

    tokens: tuple[str, ...]  # in order of first occurrence
    spread: tuple[float, float, float]  # q, k, v
    widest: str

    @property
    def identical(self) -> bool:
        return max(self.spread) <= SAME_VECTOR


SAME_VECTOR = 1e-5  # float32 rounding of one matrix product on equal rows stays far below


@cached(CACHE_ENTRIES)
def repeated_tokens(params: ViewParams) -> RepeatedTokens | None:
    """Compare the copies of every repeated token in the view's q, k and v (all heads)."""
    tokens = params.tokens
    positions: dict[str, list[int]] = {}
    for i, token in enumerate(tokens):
        positions.setdefault(token, []).append(i)
    repeated = {t: at for t, at in positions.items() if len(at) > 1}
    if not repeated:
        return None
    inputs = example_inputs(params)
    spread, widest, largest = [0.0, 0.0, 0.0], next(iter(repeated)), -1.0
    for token, at in repeated.items():
        for which, x in enumerate((inputs.q, inputs.k, inputs.v)):
            copies = x[0, :, at].double()  # (h, copies, d)
            apart = float(torch.cdist(copies, copies).max())  # largest pair distance, any head
            spread[which] = max(spread[which], apart)
            if apart > largest:
                widest, largest = token, apart
    return RepeatedTokens(tuple(repeated), (spread[0], spread[1], spread[2]), widest)


# ---- absolute vs relative -------------------------------------------------------------------


@dataclass(frozen=True)
class EncodingView:
    encoding: np.ndarray  # (W, d_model) sinusoidal PE of the window's positions
    similarity: np.ndarray  # (W, W) PE_i · PE_j on the window
    index: np.ndarray  # (W, W) clip(j - i, -k, k) + k
    diagonal_spread: float  # max over offsets of (max - min) of the similarity along a diagonal


@cached(CACHE_ENTRIES)
def encoding_view(params: ViewParams) -> EncodingView:
    start, stop = params.window
    n = stop - start
    plan_compute("encoding", "loop", n, params.d_model, k=params.k, traces=4)
    pe = rc.sinusoidal_encoding(stop, params.d_model, dtype=torch.float64)[start:]
    sim = rc.encoding_similarity(pe).numpy()
    spread = max(float(np.ptp(np.diagonal(sim, offset))) for offset in range(-(n - 1), n))
    return EncodingView(
        encoding=pe.numpy().astype(np.float32),
        similarity=sim.astype(np.float32),
        index=view_array(rc.relative_index(n, n, params.k)),
        diagonal_spread=spread,
    )
