"""The multi-head view of the Multi-head and masks page: frozen numpy in, never a tensor out.

:func:`multihead_view`: one multi-head attention (``relpos_core.multihead``) on the first
``SHOWN`` query positions, every step kept; seeded random weights, or layer L of the family's
``nope`` model (plain causal attention, no position scheme) loaded into the same module. Its
mask is one of ``explorer.stories.multihead.masks`` (1 = hidden); the masks section's own view
is there too.
"""

# b batch · h heads · i query pos · j key pos · d d_model · c head width (d_model / heads)

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.frame.params import TRAINED_D_MODEL, TRAINED_HEADS, ViewParams
from explorer.stories.multihead.masks import hidden_mask
from explorer.weights.example import content_vector, view_array
from explorer.weights.reading import sequence, shown
from explorer.weights.trained import family_model
from relpos_core.multihead import MultiHeadAttention

SHOWN = 32  # query positions a view computes and draws (n reaches 4096)
TRAINED_MODEL = "nope"  # the family's model without position: plain causal attention
CACHE_ENTRIES = 8


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
    padded: int  # of those keys, the last ``padded`` are padding (hidden from every query)
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
        x=view_array(x[0, :rows]),
        q=view_array(trace.q[0]),
        k=view_array(trace.k[0, :cols]),
        v=view_array(trace.v[0, :cols]),
        q_heads=view_array(trace.q_heads[0]),
        k_heads=view_array(trace.k_heads[0, :, :cols]),
        v_heads=view_array(trace.v_heads[0, :, :cols]),
        weights=view_array(weights),
        hidden=hidden[:, :cols].numpy(),
        head_outputs=view_array(trace.head_outputs[0]),
        concat=view_array(trace.concat[0]),
        output=view_array(trace.output[0]),
        head_share=view_array(norms / norms.sum().clamp_min(1e-30)),
        weight_drawn=view_array(weights.sum(-1)),
        steps=steps,
        keys=keys,
        padded=keys - min(spec.pad_from, keys) if "padding" in spec.mask else 0,
        labels=labels[:cols],
        definition_diff=float((trace.output[0] - reference).abs().max()),
        model_diff=None if own is None else float((trace.output - own[:, :rows]).abs().max()),
    )
