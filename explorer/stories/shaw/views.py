"""Cached calls into relpos_core: a frozen ViewParams (+ small ints) in, numpy float32 out.

Nothing here holds a tensor after it returns, and every cache has a bounded number of entries.
Tensors that grow as (n, n, d) are only built for as many query rows as a fixed budget allows.
Every function first asks ``explorer.frame.budget.plan_compute`` for its largest computation, so
whatever the controls or the URL say, an over-budget view is refused before anything is built.

Above DISPLAY_MAX positions every (n, n) view is the window ``params.window`` on both axes. The
relative terms depend on j - i only, so the diagonal block [s, s+W) x [s, s+W) of the relative
logits is exactly the relative logits of the W queries q[s:s+W] over a length-W sequence: the
logits and skew pages run their methods on that block. Attention needs every key of a row: it
runs ``relative_attention`` with ``query_offset`` on the window's query rows, one head, all n
keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

import relpos_core as rc
from explorer.frame.budget import plan_compute
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.example import ExampleInputs, example_inputs

CACHE_ENTRIES = 8
A_K_BUDGET = 2**22  # values of a materialized (rows, n, d) a^K block (16 MB of float32)
LOOP_PAIRS = 2048  # (i, j) pairs the Python-loop definition is run on


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


def materialized_rows(n: int, d: int) -> int:
    """Query rows of an (rows, n, d) a^K that fit in A_K_BUDGET (at least 1, at most n)."""
    return max(1, min(n, A_K_BUDGET // (n * d)))


def square_side(n: int, pairs: int) -> int:
    """Side of the top-left block of at most ``pairs`` (i, j) pairs, at most n: a slow method
    is drawn on a square block of the window, not on a few rows as long as the window."""
    return max(1, min(n, math.isqrt(pairs)))


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
        distance=_np(distance),
        clipped=_np(distance.clamp(-k, k)),
        index=_np(rc.relative_index(size, size, k)),
        table_k=_np(inputs.table_k),
        table_v=_np(inputs.table_v),
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


# ---- relative logits ------------------------------------------------------------------------


@dataclass(frozen=True)
class LogitsView:
    """Both terms of the logit as they enter the softmax, 1/sqrt(d_z) included."""

    content: np.ndarray  # (h, W, W) q_i · k_j / sqrt(d) of every head on the window
    relative: np.ndarray  # (h, W, W) the relative term q_i · a^K_ij / sqrt(d) (bucket method)
    definition: np.ndarray  # (h, m, m) one pair at a time, the window's top-left block
    einsum: np.ndarray  # (h, m', m') the top-left block a materialized a^K fits
    matmul: np.ndarray  # (h, m', m')
    max_diff: dict[str, float]  # method -> max |method - definition| over all heads


def window_inputs(params: ViewParams) -> tuple[ExampleInputs, torch.Tensor]:
    """The view's inputs and the window's queries q[:, :, s:s+W] / sqrt(d) (1, h, W, d).

    The queries are scaled first, as tensor2tensor's multi-head attention does, so that every
    product with them is a term of the logit exactly as it enters the softmax.
    """
    inputs = example_inputs(params)
    start, stop = params.window
    return inputs, inputs.q[:, :, start:stop] / math.sqrt(params.head_dim)


@cached(CACHE_ENTRIES)
def logits_view(params: ViewParams) -> LogitsView:
    """Every head's content and relative logits on the window, and each method's agreement."""
    inputs, q = window_inputs(params)  # relative logits on the window = those of q over W
    table, n, d, h, k = inputs.table_k, q.shape[-2], params.head_dim, params.heads, params.k
    start, stop = params.window
    # The slow methods run on the window's top-left m x m block: the relative term depends on
    # j - i only, so the block is exactly that corner of the full matrix.
    m_loop = square_side(n, LOOP_PAIRS)
    m_mat = square_side(n, A_K_BUDGET // d)
    for method, rows in (("loop", m_loop), ("einsum", m_mat), ("matmul", m_mat)):
        plan_compute("relative logits", method, rows, d, h, k=k, traces=2)
    plan_compute("relative logits", "skew", n, d, h, k=k, traces=2)
    plan_compute("relative logits", "bucket", n, d, h, k=k, traces=3)
    plan_compute("relative logits", "banded", n, d, h, k=k, traces=3)
    definition = rc.relative_logits(q[:, :, :m_loop], table, m_loop, method="loop")
    by_method = {
        "einsum": rc.relative_logits(q[:, :, :m_mat], table, m_mat, method="einsum"),
        "matmul": rc.relative_logits(q[:, :, :m_mat], table, m_mat, method="matmul"),
        "skew": rc.relative_logits(q, table, n, method="skew"),
        "bucket": rc.relative_logits(q, table, n, method="bucket"),
        "banded": rc.relative_logits(q, table, n, method="banded"),
    }
    max_diff = {
        name: float((rel[:, :, :m_loop, :m_loop] - definition).abs().max())
        for name, rel in by_method.items()
    }
    keys = inputs.k[0, :, start:stop]  # (h, W, d)
    return LogitsView(
        content=_np(q[0] @ keys.transpose(-2, -1)),  # (h,W,d),(h,d,W) -> (h,W,W)
        relative=_np(by_method["bucket"][0]),
        definition=_np(definition[0]),
        einsum=_np(by_method["einsum"][0]),
        matmul=_np(by_method["matmul"][0]),
        max_diff=max_diff,
    )


MATMUL_AXES = {
    "q": ("b", "h", "i", "d"),
    "a_k": ("i", "j", "d"),
    "q_t": ("i", "b", "h", "d"),
    "q_t_r": ("i", "b·h", "d"),
    "product": ("i", "b·h", "j"),
    "product_r": ("i", "b", "h", "j"),
    "result": ("b", "h", "i", "j"),
}
SLICES_MAX = 8  # slices of a tensor drawn (the leading axes' first combinations)


@dataclass(frozen=True)
class TensorStep:
    """One of tensor2tensor's steps as the tensor it is: its shape and axis names, and its first
    ``SLICES_MAX`` slices over the leading axes (each slice the last two axes)."""

    name: str
    formula: str
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    slices: np.ndarray  # (s, rows, cols): slice t is value[index[t]]
    index: tuple[tuple[int, ...], ...]  # leading-axes index of each slice

    @property
    def slice_count(self) -> int:
        """Slices of the whole tensor (the product of its leading axes)."""
        return int(np.prod(self.shape[:-2], dtype=np.int64))


@cached(CACHE_ENTRIES)
def matmul_steps(params: ViewParams) -> tuple[TensorStep, ...]:
    """tensor2tensor's six steps (seed 000) on the first ``materialized_rows`` queries.

    Above DISPLAY_MAX positions: the window's queries over the window's keys.
    """
    inputs, q = window_inputs(params)
    n = q.shape[-2]
    m = materialized_rows(n, params.head_dim)
    plan_compute(
        "tensor2tensor steps", "matmul", n, params.head_dim, params.heads, k=params.k, rows=m
    )
    trace = rc.trace_matmul_logits(q[:, :, :m], inputs.table_k, n)
    steps = []
    for step in trace.steps():
        value = _np(step.value)
        lead = value.shape[:-2]
        index = tuple(np.ndindex(*lead))[:SLICES_MAX]
        flat = value.reshape(-1, *value.shape[-2:])[:SLICES_MAX]
        steps.append(
            TensorStep(
                name=step.name,
                formula=step.formula,
                shape=tuple(value.shape),
                axes=MATMUL_AXES[step.name],
                slices=np.ascontiguousarray(flat),
                index=index,
            )
        )
    return tuple(steps)


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
    weight_inside: tuple[float, float]  # least and most weight a row puts on the window's keys
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
    inside = trace.weights[0, 0, :, start:stop]

    def block(t: torch.Tensor) -> np.ndarray:
        return _np(t[0, 0, :, start:stop])

    def blank(t: torch.Tensor) -> np.ndarray:
        return np.where(allowed.numpy(), block(t), np.nan).astype(np.float32)

    mass = inside.sum(-1)  # (W,) weight each row puts on the window's keys
    return AttentionView(
        content_logits=block(trace.content_logits),
        relative_logits=block(trace.relative_logits),
        scaled_logits=block(trace.scaled_logits),
        masked_logits=blank(trace.scaled_logits),
        allowed=_np(allowed.float()),
        weights=blank(trace.weights),
        content_output=_np(trace.content_output[0, 0]),
        relative_output=_np(trace.relative_output[0, 0]),
        output=_np(trace.output[0, 0]),
        weight_inside=(float(mass.min()), float(mass.max())),
        scale=trace.scale,
    )


def attention_weights_heads(params: ViewParams) -> np.ndarray:
    """(h, W, W) weights of every head on the window, NaN where the mask forbids."""
    return np.stack([attention_view(params, head).weights for head in range(params.heads)])


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
        index=_np(rc.relative_index(n, n, params.k)),
        diagonal_spread=spread,
    )
