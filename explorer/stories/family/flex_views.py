"""The Masks and biases page's cached view: one head of FlexAttention on the view's q, k, v, with
the picked scheme's ``score_mod`` (``relpos_core.schemes.score_mods``) and the picked masks'
``mask_mod`` (``relpos_core.mask_mods``).

What is drawn, on the heatmaps' window of queries and keys:

    mask_ij     the mask_mod at (i, j)
    bias_ij     score_mod(s, b, h, i, j) - s, with s = q_i · k_j · scale (what the mod adds)
    logit_ij    score_mod(s, b, h, i, j) where the mask allows (i, j), blank elsewhere
    weight_ij   exp(logit_ij - lse_i), with lse_i FlexAttention's own log-sum-exp of row i

The score_mod and the mask_mod are evaluated on broadcast index grids, as FlexAttention's eager
CPU implementation evaluates them (it is a dense reference too): the row statistics and the
output follow by a softmax over the allowed keys, and the BlockMask's blocks by counting the
dense mask tile by tile (``mask_mods.tile_kinds``). The server never calls ``flex_attention`` or
``create_block_mask``: their first call loads torch's compiler (about 185 MB and 1.5 s on this
host, measured), which the explorer keeps out of its process. The tests hold every number here
equal to ``flex_attention`` and ``create_block_mask``, and the downloaded program runs them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.budget import REQUEST_BUDGET_BYTES
from explorer.frame.memory import admit, cached
from explorer.frame.params import ViewParams
from explorer.stories.family.flex_choice import NO_SCHEME, FlexChoice, mask_mod
from explorer.weights.example import example_inputs
from explorer.weights.schemes import scheme_for
from relpos_core import format_bytes, mask_mods
from relpos_core.mods import Mod
from relpos_core.schemes.score_mods import score_mod_of, value_term_words

# b batch (1) · h heads · i query pos · j key pos · d head dim

SCORE_COPIES = 4  # the scores, their mod, the weights and the mask: (n, n) grids of one head
NO_MODEL = "nope"  # with trained weights, no scheme draws the family's model without position


@dataclass(frozen=True)
class FlexInputs:
    """What the view runs: q, k, v (1, h, n, d) as the scheme sees them (RoPE's rotated), the
    score_mod (None: none, or words why the scheme has none), the mask_mod (None: no mask) and
    the softmax scale (None: FlexAttention's 1/sqrt(d))."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    score: Mod | None
    why_not: str | None
    value_words: str | None
    mask: Mod | None
    scale: float | None
    rotated: bool


def flex_inputs(params: ViewParams, choice: FlexChoice) -> FlexInputs:
    """The view's tensors and mods (ValueError in words for a bad mask number)."""
    n = params.length
    mask = mask_mod(choice, n)
    if choice.scheme == NO_SCHEME:
        inputs = example_inputs(params, NO_MODEL) if params.trained else example_inputs(params)
        return FlexInputs(inputs.q, inputs.k, inputs.v, None, None, None, mask, None, False)
    assert choice.config is not None
    scheme = scheme_for(params, choice.config)
    inputs = example_inputs(params, scheme.name)
    q, k = inputs.q, inputs.k
    with torch.no_grad():
        found = score_mod_of(scheme, q, k, causal=hides_ahead(mask, n))
        rotate = getattr(scheme, "rotate_queries_keys", None)
        rotated = isinstance(found, str) and rotate is not None
        if rotated:  # a scheme that rotates q and k runs as flex_attention(R q, R k, v)
            q, k = rotate(q, k)
    if isinstance(found, Mod):
        score, why_not, scale = found, None, found.scale
    else:
        score, why_not, scale = None, found, scheme.scale
    value_words = value_term_words(scheme.name)
    return FlexInputs(q, k, inputs.v, score, why_not, value_words, mask, scale, rotated)


@cached(4, resource=True)  # tensors and mods: read, never changed
def view_inputs(params: ViewParams, choice: FlexChoice) -> FlexInputs:
    """:func:`flex_inputs`, cached: the view and its code read the same tensors."""
    return flex_inputs(params, choice)


def hides_ahead(mask: Mod | None, n: int) -> bool:
    """Whether the mask hides every key ahead of its query (j > i): the scheme is then built
    causal, as a decoder runs it (T5's buckets and the Music Transformer's table follow it)."""
    return mask is not None and not bool(mask_mods.dense(mask, n, n).triu(1).any())


def attend(
    logits: torch.Tensor, allowed: torch.Tensor, v: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(output (n, d_v), lse (n,)) of one head from its logits (n, n) under ``allowed``, as
    FlexAttention returns them: a query with no key gets output 0 and lse -inf."""
    masked = logits.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(masked, -1)  # -inf for a row with no key
    weights = torch.exp(masked - torch.where(torch.isfinite(lse), lse, 0)[:, None])
    return weights @ v, lse


def score_grid(
    mod: Mod | None, q: torch.Tensor, k: torch.Tensor, head: int, scale: float,
    rows: range, cols: range,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(s, score_mod(s)) on rows x cols of one head, s = q_i · k_j · scale: the mod evaluated on
    broadcast index grids b (1,1,1,1), h (1,1,1,1), i (1,1,R,1), j (1,1,1,C)."""
    qi = torch.arange(rows.start, rows.stop).view(1, 1, -1, 1)
    kj = torch.arange(cols.start, cols.stop).view(1, 1, 1, -1)
    q_rows = q[:, head : head + 1, rows.start : rows.stop]
    k_cols = k[:, head : head + 1, cols.start : cols.stop]
    s = (q_rows @ k_cols.transpose(-2, -1)) * scale  # (1,1,R,d),(1,1,d,C) -> (1,1,R,C)
    if mod is None:
        return s[0, 0], s[0, 0]
    b = torch.zeros((1, 1, 1, 1), dtype=torch.long)
    h = torch.full((1, 1, 1, 1), head, dtype=torch.long)
    return s[0, 0], mod.fn(s, b, h, qi, kj).expand_as(s)[0, 0]


@dataclass(frozen=True)
class FlexView:
    """One head of the view, on the window [start, stop) of queries and keys (NaN = masked),
    and over the whole sequence its rows with no key, output and the BlockMask's blocks."""

    mask: np.ndarray  # (W, W) 1.0 allowed, 0.0 masked
    bias: np.ndarray  # (W, W) what the score_mod adds (0 without one), every cell
    logits: np.ndarray  # (W, W) the score_mod's logit, NaN where masked
    weights: np.ndarray  # (W, W) exp(logit - lse), NaN where masked
    output: np.ndarray  # (n, d) this head's output, as flex_attention gives it
    lse: np.ndarray  # (n,) its log-sum-exp per query (-inf: no key)
    no_key: tuple[int, ...]  # queries the masks leave with no key
    kinds: np.ndarray  # (blocks_q, blocks_k) 0 skipped, 1 partial, 2 full
    skipped: float  # share of blocks skipped
    scale: float  # the softmax scale used


def check_fits(params: ViewParams) -> None:
    """Refuse in words a view whose eager flex_attention would pass the per-request budget."""
    n = params.length
    need = SCORE_COPIES * n * n * 4
    if need > REQUEST_BUDGET_BYTES:
        raise ValueError(
            f"FlexAttention without torch.compile builds the whole (n, n) score grid of a head: "
            f"at n = {n} about {format_bytes(need)}, more than the per-request memory budget of "
            f"{format_bytes(REQUEST_BUDGET_BYTES)}; choose a smaller n"
        )
    admit("FlexAttention, one head", need)


@cached(6)
def flex_view(params: ViewParams, choice: FlexChoice, head: int) -> FlexView:
    """One head of FlexAttention at the view (ValueError in words for a bad mask)."""
    check_fits(params)
    n, (start, stop) = params.length, params.window
    inputs = view_inputs(params, choice)
    d = inputs.q.shape[-1]
    scale = inputs.scale if inputs.scale is not None else 1 / math.sqrt(d)
    allowed = (
        torch.ones(n, n, dtype=torch.bool)
        if inputs.mask is None
        else mask_mods.dense(inputs.mask, n, n)
    )
    try:
        mask_mods.check_rows(allowed)
        no_key: tuple[int, ...] = ()
    except ValueError:
        no_key = tuple((~allowed.any(-1)).nonzero().flatten().tolist())
    with torch.no_grad():
        every = range(n)
        _, whole = score_grid(inputs.score, inputs.q, inputs.k, head, scale, every, every)
        out, lse = attend(whole, allowed, inputs.v[0, head])
        window = range(start, stop)
        s, logits = score_grid(inputs.score, inputs.q, inputs.k, head, scale, window, window)
    shown = allowed[start:stop, start:stop]
    row_lse = lse[start:stop, None]
    weights = torch.where(shown, torch.exp(logits - row_lse), torch.nan)
    kinds, skipped = mask_mods.tile_kinds(allowed, choice.block)
    return FlexView(
        mask=shown.numpy().astype(np.float32),
        bias=(logits - s).numpy().astype(np.float32),
        logits=torch.where(shown, logits, torch.nan).numpy().astype(np.float32),
        weights=weights.numpy().astype(np.float32),
        output=out.numpy().astype(np.float32),
        lse=lse.numpy().astype(np.float32),
        no_key=no_key,
        kinds=np.asarray(kinds, dtype=np.int8),
        skipped=float(skipped),
        scale=float(scale),
    )
