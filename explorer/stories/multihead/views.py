"""Cached views of the Multi-head and masks page: frozen numpy in, never a tensor out.

Two views, one per section of the page:

* :func:`multihead_view`: one multi-head attention (``relpos_core.multihead``) on the first
  ``SHOWN`` query positions, every step kept; seeded random weights, or layer L of the family's
  ``nope`` model (plain causal attention, no position scheme) loaded into the same module;
* :func:`mask_view`: the padding and look-ahead masks of a list of token ids, applied to one
  set of seeded random logits.

Masks here are those of ``relpos_core.basics``: 1 = hidden (the attention introduction's
convention); the rest of the explorer draws the complement, 1 = allowed.
"""

# b batch · h heads · i query pos · j key pos · d d_model · c head width (d_model / heads)

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from explorer.figures.notes import distance_word
from explorer.frame.memory import cached
from explorer.frame.params import TRAINED_D_MODEL, TRAINED_HEADS, ViewParams
from explorer.weights.example import content_vector, derived_seed
from explorer.weights.trained import family_model, sequence, shown
from relpos_core.basics import (
    create_look_ahead_mask,
    create_padding_mask,
    scaled_dot_product_attention,
)
from relpos_core.multihead import MultiHeadAttention

SHOWN = 32  # query positions a view computes and draws (n reaches 4096)
TRAINED_MODEL = "nope"  # the family's model without position: plain causal attention
CACHE_ENTRIES = 8


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


# ---- multi-head attention, step by step ------------------------------------------------------


@dataclass(frozen=True)
class HeadsSpec:
    """What a multi-head view depends on and nothing more (k and the window do not enter).

    ``names``: one per key position: a random view's token names (each one's content vector),
    a trained view's characters. Positions from ``pad_from`` on are padding.
    """

    d_model: int
    heads: int
    names: tuple[str, ...]
    mask: str  # none, causal, padding, causal-padding
    pad_from: int
    seed: int
    layer: int | None = None  # trained: the layer of TRAINED_MODEL; None: random weights


def heads_spec(params: ViewParams) -> HeadsSpec:
    """The multi-head view of the sidebar's state.

    Under a causal mask the first SHOWN queries see only the first SHOWN keys, and the trained
    model is causal throughout (its LayerNorms and feed-forward layers act per position), so
    only those positions are read: the tensors are the same as on the whole sequence.
    """
    if params.trained:
        text = sequence(params)[:SHOWN]
        return HeadsSpec(TRAINED_D_MODEL, TRAINED_HEADS, tuple(text), "causal", len(text), 0,
                         params.layer)  # fmt: skip
    n = params.length
    names = params.tokens or tuple(f"#{i}" for i in range(n))
    if params.causal:
        names = names[:SHOWN]
    return HeadsSpec(params.d_model, params.heads, names, params.mask, n - params.n_pad,
                     params.seed)  # fmt: skip


def hidden_mask(kind: str, ids: list[int] | tuple[int, ...], rows: int) -> torch.Tensor | None:
    """The mask (1 = hidden) of ``kind`` for key ids ``ids`` (0 = padding), on the first
    ``rows`` queries: the padding row (1, 1, 1, n), the look-ahead (n, n) or both, the
    larger of the two in every cell (as the TensorFlow tutorial combines them) -> broadcastable
    to (1, h, rows, n); None for no mask."""
    n = len(ids)
    parts = []
    if "causal" in kind or "look-ahead" in kind or kind == "both":
        parts.append(create_look_ahead_mask(n)[:rows])  # (rows, n)
    if "padding" in kind or kind == "both":
        parts.append(create_padding_mask([list(ids)]))  # (1, 1, 1, n)
    if not parts:
        return None
    mask = parts[0]
    for part in parts[1:]:
        mask = torch.maximum(mask, part)  # hidden by either -> hidden
    return mask


def trained_layer(
    characters: str, layer: int
) -> tuple[MultiHeadAttention, torch.Tensor, torch.Tensor]:
    """Layer ``layer`` of TRAINED_MODEL as a ``MultiHeadAttention``, the x its attention reads
    on ``characters`` (LN of the residual stream entering the layer) (1, n, d), and what the
    model's own attention module returns on that x (1, n, d)."""
    model, vocabulary = family_model(TRAINED_MODEL)
    block = model.blocks[layer]
    with torch.no_grad():
        residual = model.embed(vocabulary.encode(characters)[None])  # (1, n, d)
        for earlier in model.blocks[:layer]:
            residual = earlier(residual)
        x = block.norm_attention(residual)
        own = block.attention(x)  # torch's SDPA, causal
    d = model.config.d_model
    mha = MultiHeadAttention(d, model.config.heads)
    # qkv's output is viewed as (b, n, 3, h, c): rows [0, d) of its weight make q, head-major,
    # exactly the channel order split_heads reads
    w_q, w_k, w_v = block.attention.qkv.weight.split(d)
    with torch.no_grad():
        for linear, weight in zip(
            (mha.w_q, mha.w_k, mha.w_v, mha.w_o),
            (w_q, w_k, w_v, block.attention.out.weight),
            strict=True,
        ):
            linear.weight.copy_(weight)
            linear.bias.zero_()  # the model's projections have no bias
    return mha, x, own


def loop_definition(
    mha: MultiHeadAttention, x_q: torch.Tensor, x_kv: torch.Tensor, hidden: torch.Tensor
) -> torch.Tensor:
    """MultiHead = Concat(head_1, ..., head_h) W^O, head_h = softmax(Q_h K_h^T / sqrt(c)) V_h,
    one head at a time: the reference the page checks the module against.
    x_q (i, d), x_kv (j, d), hidden (i, j) bool -> (i, d)."""
    q, k, v = (layer(x) for layer, x in ((mha.w_q, x_q), (mha.w_k, x_kv), (mha.w_v, x_kv)))
    c = mha.d_model // mha.heads
    heads = []
    for head in range(mha.heads):
        cols = slice(head * c, (head + 1) * c)
        e = (q[:, cols] @ k[:, cols].T / math.sqrt(c)).masked_fill(hidden, -math.inf)  # (i,j)
        alpha = torch.softmax(e, -1).nan_to_num(0.0)  # a row with every key hidden: no weight
        heads.append(alpha @ v[:, cols])  # (i,j),(j,c) -> (i,c)
    return mha.w_o(torch.cat(heads, -1))


@dataclass(frozen=True)
class MultiHeadView:
    """One multi-head attention, every step on the first ``rows`` queries and ``cols`` keys.

    Each query is computed against all ``keys`` keys; ``steps`` lists the whole computation
    (name, formula, shape). Weights are exact: 0 where ``hidden``.
    """

    x: np.ndarray  # (rows, d) the queries' input
    q: np.ndarray  # (rows, d)
    k: np.ndarray  # (cols, d)
    v: np.ndarray  # (cols, d)
    q_heads: np.ndarray  # (h, rows, c)
    k_heads: np.ndarray  # (h, cols, c)
    v_heads: np.ndarray  # (h, cols, c)
    weights: np.ndarray  # (h, rows, cols)
    hidden: np.ndarray  # (rows, cols) bool, True = hidden
    head_outputs: np.ndarray  # (h, rows, c)
    concat: np.ndarray  # (rows, d)
    output: np.ndarray  # (rows, d)
    head_share: np.ndarray  # (h,) each head's part of the output, |head_h W^O_h| / sum
    weight_drawn: np.ndarray  # (h, rows) each row's weight on the keys drawn
    steps: tuple[tuple[str, str, tuple[int, ...]], ...]
    keys: int
    labels: tuple[str, ...]  # axis labels of positions 0..cols-1; () for numbered axes
    definition_diff: float  # max |output - loop_definition|
    model_diff: float | None  # trained: max |output - the model's own attention|

    @property
    def rows(self) -> int:
        return self.x.shape[0]

    @property
    def cols(self) -> int:
        return self.k.shape[0]


@cached(CACHE_ENTRIES)
def multihead_view(spec: HeadsSpec) -> MultiHeadView:
    keys = len(spec.names)
    rows = min(keys, SHOWN)
    if spec.layer is None:
        mha = MultiHeadAttention(spec.d_model, spec.heads, seed=spec.seed)
        vectors = [content_vector(name, spec.d_model, spec.seed) for name in spec.names]
        x, own = torch.stack(vectors)[None], None  # (1, n, d)
        generated = spec.names[:SHOWN] == tuple(f"#{i}" for i in range(min(keys, SHOWN)))
        labels = () if generated else spec.names  # no typed text: numbered axes
    else:
        mha, x, own = trained_layer("".join(spec.names), spec.layer)
        labels = tuple(shown(c) for c in spec.names)
    ids = [0 if j >= spec.pad_from else 1 for j in range(keys)]  # 0 = padding
    mask = hidden_mask(spec.mask, ids, rows)
    with torch.no_grad():
        trace = mha(x[:, :rows], x, mask)  # rows queries against every key
        hidden = torch.zeros(rows, keys, dtype=torch.bool)
        if mask is not None:  # (rows, n), (1, 1, 1, n) or (1, 1, rows, n) -> (rows, n)
            hidden = (mask + torch.zeros(rows, keys)).reshape(rows, keys) != 0
        reference = loop_definition(mha, x[0, :rows], x[0], hidden)
        c = spec.d_model // spec.heads
        w_o = mha.w_o.weight  # (d, d): output = concat @ w_o.T + b
        parts = [
            trace.head_outputs[0, h] @ w_o[:, h * c : (h + 1) * c].T for h in range(spec.heads)
        ]  # output - b = sum over heads of head_h W^O_h
        norms = torch.stack([p.norm() for p in parts])
    cols = min(keys, SHOWN)
    weights = trace.weights[0, :, :, :cols]
    steps = (("x", "the input, one row per position", tuple(x.shape)),) + tuple(
        (step.name, step.formula, step.shape) for step in trace.steps()
    )
    return MultiHeadView(
        x=_np(x[0, :rows]),
        q=_np(trace.q[0]),
        k=_np(trace.k[0, :cols]),
        v=_np(trace.v[0, :cols]),
        q_heads=_np(trace.q_heads[0]),
        k_heads=_np(trace.k_heads[0, :, :cols]),
        v_heads=_np(trace.v_heads[0, :, :cols]),
        weights=_np(weights),
        hidden=hidden[:, :cols].numpy(),
        head_outputs=_np(trace.head_outputs[0]),
        concat=_np(trace.concat[0]),
        output=_np(trace.output[0]),
        head_share=_np(norms / norms.sum().clamp_min(1e-30)),
        weight_drawn=_np(weights.sum(-1)),
        steps=steps,
        keys=keys,
        labels=labels[:cols],
        definition_diff=float((trace.output[0] - reference).abs().max()),
        model_diff=None if own is None else float((trace.output - own[:, :rows]).abs().max()),
    )


def heads_note(weights: np.ndarray, unit: str = "position") -> str:
    """Where each head puts its weight, read from the weights drawn (h, rows, cols): the
    distance j - i, or the first key j = 0, with the most weight on average over query rows
    1.. (row 0 may have a single key to see).

    >>> w = np.stack([np.eye(3, k=-1) + np.eye(3) * [[1], [0], [0]], np.eye(3)])
    >>> print(heads_note(w, "character"))
    Over query rows 1-2: head 0 puts 100% of a row's weight on the previous character,
    head 1 100% on the same character.
    """
    h, rows, cols = weights.shape
    if not np.any(weights):
        return "Every key is hidden: no row has a key to attend to, and every weight is 0."
    if rows < 2:
        return "One query row: each head puts all its weight on the keys it sees."
    w = np.asarray(weights[:, 1:], dtype=np.float64)  # (h, rows - 1, cols), rows 1..
    i = np.arange(1, rows)[:, None]
    distance = np.arange(cols)[None, :] - i  # j - i
    parts = []
    for head in range(h):
        mass = {
            int(r): w[head][distance == r].sum() / (rows - 1) for r in np.unique(distance)
        }  # r -> mean over rows of the weight at j - i = r
        best = max(mass, key=lambda r: (mass[r], -abs(r)))
        first = w[head, :, 0].mean()
        if first > mass[best] and cols > 1:
            where, share = f"the first {unit} (j = 0)", first
        else:
            where, share = distance_word(best).replace("position", unit), mass[best]
        parts.append(f"head {head} puts {share:.0%} of a row's weight on {where}")
    parts[1:] = [p.replace(" puts", "", 1).replace(" of a row's weight", "") for p in parts[1:]]
    return f"Over query rows 1-{rows - 1}: " + ", ".join(parts) + "."


def shares_note(head_share: np.ndarray) -> str:
    """Which head's part of the output is largest: output = sum_h head_h W^O_h + b_o.

    >>> print(shares_note(np.array([0.1, 0.6, 0.3])))
    W^O mixes the heads: output = Σ_h head_h W^O_h + b_o, and head 1's part is the largest
    (60% of the summed part sizes), head 0's the smallest (10%).
    """
    high, low = int(np.argmax(head_share)), int(np.argmin(head_share))
    text = "W^O mixes the heads: output = Σ_h head_h W^O_h + b_o"
    if not np.any(head_share):
        return text + "; here every head's output is 0, so the output is the bias b_o alone."
    if len(head_share) == 1:
        return text + " with one head, h = 1: the output is that head's output times W^O."
    return (
        f"{text}, and head {high}'s part is the largest ({head_share[high]:.0%} of the summed "
        f"part sizes), head {low}'s the smallest ({head_share[low]:.0%})."
    )


# ---- masks -----------------------------------------------------------------------------------

MASK_KINDS = ("padding", "look-ahead", "both")
TOKENS_DEFAULT = "1 21 777 0 0"  # the attention introduction's example
TOKENS_MAX = 16
TOKEN_ID_MAX = 999_999
MASK_D_K = 16  # the width of the random q, k whose products are the logits


def parse_token_ids(text: str) -> tuple[int, ...]:
    """Token ids typed as whole numbers separated by spaces or commas; 0 is padding.

    >>> parse_token_ids("1 21 777 0 0"), parse_token_ids(" 3, 4 ")
    ((1, 21, 777, 0, 0), (3, 4))
    >>> parse_token_ids("1 two")
    Traceback (most recent call last):
    ...
    ValueError: must be 1 to 16 whole numbers from 0 to 999999 separated by spaces, got '1 two'
    """
    words = [w for w in re.split(r"[\s,]+", text) if w]
    fits = 1 <= len(words) <= TOKENS_MAX and all(
        w.isascii() and w.isdigit() and int(w) <= TOKEN_ID_MAX for w in words
    )
    if not fits:
        shown_text = text if len(text) <= 40 else text[:40] + "..."
        raise ValueError(
            f"must be 1 to {TOKENS_MAX} whole numbers from 0 to {TOKEN_ID_MAX} separated by "
            f"spaces, got {shown_text!r}"
        )
    return tuple(int(w) for w in words)


@dataclass(frozen=True)
class MaskView:
    """The masks of ``tokens`` (1 = hidden) and what they do to one set of logits."""

    tokens: tuple[int, ...]
    padding: np.ndarray  # (1, n) create_padding_mask's (1, 1, 1, n), the keys that are padding
    look_ahead: np.ndarray  # (n, n) create_look_ahead_mask(n)
    mask: np.ndarray  # (n, n) the one applied, broadcast to the logits
    logits: np.ndarray  # (n, n) q_i · k_j / sqrt(d_k), before the mask
    weights: np.ndarray  # (n, n) exactly 0 where hidden
    padding_text: str  # the tensor create_padding_mask returns, printed


@cached(CACHE_ENTRIES)
def mask_view(tokens: tuple[int, ...], kind: str, seed: int) -> MaskView:
    n = len(tokens)
    generator = torch.Generator().manual_seed(derived_seed(seed, "mask logits"))
    q, k = torch.randn(2, 1, 1, n, MASK_D_K, generator=generator)  # (b,h,n,d_k) each
    padding = create_padding_mask([list(tokens)])  # (1,1,1,n)
    mask = hidden_mask(kind, tokens, n)
    attention = scaled_dot_product_attention(q, k, k, mask)  # the values are not drawn
    return MaskView(
        tokens=tokens,
        padding=_np(padding[0, 0]),
        look_ahead=_np(create_look_ahead_mask(n)),
        mask=_np((mask + torch.zeros(n, n)).reshape(n, n)),
        logits=_np(attention.logits[0, 0]),
        weights=_np(attention.weights[0, 0]),
        padding_text=str(padding),
    )


def mask_note(mask: np.ndarray, weights: np.ndarray) -> str:
    """What the first and last rows see, and where their weight goes.

    >>> print(mask_note(np.array([[0, 1], [0, 0.0]]), np.array([[1, 0], [0.4, 0.6]])))
    Row 0 sees 1 of 2 keys; its weights sum to 1 over that 1 and are exactly 0 on the other 1.
    Row 1 sees 2 of 2 keys; its weights sum to 1 over those 2.
    """
    n = mask.shape[1]
    sentences = []
    for i in sorted({0, mask.shape[0] - 1}):
        seen = int((mask[i] == 0).sum())
        if seen == 0:
            sentences.append(
                f"Row {i} sees none of the {n} keys: its weights are all 0 (softmax has no key "
                "to spread over)."
            )
            continue
        total = float(weights[i][mask[i] == 0].sum())
        those = "that 1" if seen == 1 else f"those {seen}"
        rest = f" and are exactly 0 on the other {n - seen}" if seen < n else ""
        sentences.append(
            f"Row {i} sees {seen} of {n} keys; its weights sum to {total:.4g} over {those}{rest}."
        )
    return " ".join(sentences)


def scope_note(view: MultiHeadView, length: int, trained: bool) -> str:
    """What part of the sequence the page computes and draws, and why that part is exact."""
    rows, cols, keys = view.rows, view.cols, view.keys
    if length <= rows:
        return f"All {length} positions are drawn; the shapes are those of this computation, b = 1."
    if trained:
        text = (
            f"The page runs the model on the first {rows} of the {length} characters: it is "
            "causal (its attention looks back only, the rest acts per position), so their "
            f"tensors are the same as on all {length}."
        )
    elif keys == rows:
        text = (
            f"The page computes the first {rows} of the {length} queries; under the look-ahead "
            f"mask they see keys 0-{rows - 1} only, so those are all the keys they need."
        )
    else:
        text = (
            f"The page computes the first {rows} of the {length} queries, each against all "
            f"{keys} keys, and draws keys 0-{cols - 1}."
        )
    return text + " The shapes are those of this computation, b = 1."


def drawn_note(view: MultiHeadView, unit: str = "position") -> str:
    """With more keys than drawn (no look-ahead mask, long n): how much weight the drawn keys
    hold; else where each head puts its weight (:func:`heads_note`)."""
    if view.keys <= view.cols:
        return heads_note(view.weights, unit)
    low, high = float(view.weight_drawn.min()), float(view.weight_drawn.max())
    return (
        f"No look-ahead mask: every query row spreads its weight over all {view.keys} keys, "
        f"and the {view.cols} keys drawn hold between {low:.1%} and {high:.1%} of a row's "
        "weight (the rest falls on the keys not drawn)."
    )
