"""The figures of the Multi-head and masks page, each with what ``figure`` draws around it.

Every function returns ``(fig, about)``: the panel grid and the keyword arguments of
``explorer.figures.draw.figure`` (``latex``, ``shape``, ``caption``), so a page draws one with
``figure(fig, key, **about)``.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.draw import shape_text
from explorer.figures.heatmaps import Panel, grid_columns, panel_grid
from explorer.figures.scales import (
    WEIGHT_FLOOR_FACTOR,
    make_scale,
    own_scales,
    own_scales_caption,
)
from explorer.stories.multihead.masks import MaskView
from explorer.stories.multihead.plots import channel_cell_px
from explorer.stories.multihead.views import MultiHeadView
from explorer.weights.source import TensorSource

Drawn = tuple[go.Figure, dict[str, object]]


def _shapes(view: MultiHeadView) -> dict[str, tuple[int, ...]]:
    """Each step's shape by name, of the computation run (b = 1)."""
    return {name: shape for name, _, shape in view.steps}


def _row_at(view: MultiHeadView) -> dict[str, object]:
    return {"y_labels": view.labels or None, "x_title": "channel", "x_symbol": "channel"}


def _key_rows(split_of: str) -> dict[str, str]:
    """K and V rows are keys; Q rows are the panels' default, queries."""
    return {"y_title": "key j", "y_symbol": "j"} if split_of != "Q" else {}


def qkv_figure(view: MultiHeadView, split_of: str, source: TensorSource) -> Drawn:
    """x and one of Q, K, V (``split_of``), d_model wide."""
    rows, d, shapes, row_at = view.rows, view.x.shape[1], _shapes(view), _row_at(view)
    x_title = f"x = LN(residual entering layer {source.params.layer})" if source.trained else "x"
    projected = {"Q": view.q, "K": view.k, "V": view.v}[split_of]
    panels = [
        Panel(view.x, title=x_title, **row_at),
        Panel(projected, title=f"{split_of} = x W^{split_of}", **row_at, **_key_rows(split_of)),
    ]
    scales = own_scales("diverging", panels)
    return panel_grid(panels, scales, columns=2, cell_px=channel_cell_px(rows, d)), {
        "latex": r"Q = X W^Q + b^Q,\quad K = X W^K + b^K,\quad V = X W^V + b^V,\qquad "
        r"W^Q, W^K, W^V \in \mathbb{R}^{d_{model} \times d_{model}}",
        "shape": shapes[split_of.lower()],
        "caption": f"Q is (1, queries, d_model) = {shape_text(shapes['q'])}; x, K and V are (1, "
        f"keys, d_model) = {shape_text(shapes['k'])}; rows 0-{rows - 1} drawn. "
        + own_scales_caption(scales),
    }


def split_figure(view: MultiHeadView, split_of: str) -> Drawn:
    """One of Q, K, V split into its heads, (b, h, n, d_model / h)."""
    h, c = view.weights.shape[0], view.x.shape[1] // view.weights.shape[0]
    split = {"Q": view.q_heads, "K": view.k_heads, "V": view.v_heads}[split_of]
    head_at = {**_row_at(view), "x_title": "channel in head", **_key_rows(split_of)}
    panels = [Panel(split[m], title=f"{split_of}_{m}", **head_at) for m in range(h)]
    scale = make_scale("diverging", [p.z for p in panels])
    grid = panel_grid(
        panels, scale, columns=grid_columns(h, 2), cell_px=channel_cell_px(view.rows, c)
    )
    return grid, {
        "latex": rf"{split_of}_m = {split_of}_{{[\,:,\; m d\,:\,(m+1) d\,]}},\quad d = "
        rf"d_{{model}} / h = {c}",
        "shape": _shapes(view)[f"{split_of.lower()}_heads"],
        "caption": f"No new numbers: head m gets {_head_columns(c, 'column')} of {split_of} "
        "above (split_heads is a reshape and a transpose). " + scale.caption,
    }


def weights_figure(view: MultiHeadView, masked: bool) -> Drawn:
    """Each head's weights, hidden cells blank (``masked``: the view has a mask)."""
    h, labels = view.weights.shape[0], view.labels or None
    panels = [
        Panel(
            np.where(view.hidden, np.nan, view.weights[m]),
            title=f"head {m}",
            x_labels=labels,
            y_labels=labels,
        )
        for m in range(h)
    ]
    scale = make_scale("weights", [p.z for p in panels], n_keys=view.keys)
    per_row = 2 if view.rows > 16 and h <= 4 else 4  # the main picture: larger cells, few heads
    caption = floor_caption(scale.caption, view.keys)
    if not np.any(view.weights):  # the scale would name a largest weight where none is drawn
        caption = "Every key is hidden: no weight to draw."
    return panel_grid(panels, scale, columns=grid_columns(h, per_row)), {
        "latex": r"\alpha^{(m)} = \operatorname{softmax}_j\Bigl(\frac{Q_m K_m^\top}{\sqrt{d}} "
        r"+ M\Bigr),\qquad M_{ij} = -\infty \text{ where key } j \text{ is hidden, else } 0",
        "shape": _shapes(view)["weights"],
        "caption": (
            "Hidden cells (the mask's 1s) are blank; their weight is exactly 0. "
            if masked
            else "No cell is hidden. "
        )
        + caption,
    }


def output_figure(view: MultiHeadView) -> Drawn:
    """The heads' outputs concatenated, and the output after W^O, one above the other."""
    c = view.x.shape[1] // view.weights.shape[0]
    shapes, row_at = _shapes(view), _row_at(view)
    panels = [
        Panel(view.concat, title="Concat(head_0, ..., head_h-1)", **row_at),
        Panel(view.output, title="output = Concat W^O + b^O", **row_at),
    ]
    scales = own_scales("diverging", panels)
    # one above the other: channel c of the output sits under channel c of the concatenation
    cell_px = channel_cell_px(view.rows, view.x.shape[1])
    return panel_grid(panels, scales, columns=1, cell_px=cell_px), {
        "latex": r"\mathrm{head}_m = \alpha^{(m)} V_m,\qquad \operatorname{Concat}("
        r"\mathrm{head}_0, \dots, \mathrm{head}_{h-1}) \in \mathbb{R}^{n \times d_{model}},\qquad "
        r"\operatorname{MultiHead} = \operatorname{Concat}(\dots)\, W^O + b^O",
        "shape": shapes["output"],
        "caption": f"Each head's output {shape_text(shapes['head_outputs'])}: "
        + (
            "row i is the average of that head's value rows, weighted by row i of its weights."
            if np.any(view.weights)
            else "0 in every row, which sees no key."
        )
        + " The concatenation "
        f"sets them side by side (merge_heads): {_head_columns(c, 'channel')} "
        f"{'is' if c == 1 else 'are'} head m's. "
        f"Both panels are (1, queries, d_model) = {shape_text(shapes['output'])}. "
        + own_scales_caption(scales),
    }


def _head_columns(c: int, noun: str) -> str:
    """Head m's columns of a d_model-wide tensor, c = d_model / h of them."""
    return f"{noun} m" if c == 1 else f"{noun}s {c}m to {c}m + {c - 1}"


def floor_caption(scale_caption: str, keys: int) -> str:
    """The weights scale's caption with its floor's n written as the number it is: the keys
    each query drawn is computed against (under the look-ahead mask the first SHOWN queries
    need only the first SHOWN keys, whatever the sidebar's n)."""
    factor = WEIGHT_FLOOR_FACTOR
    return scale_caption.replace(
        f"= 1/({factor} n)",
        f"= 1/({factor} · {keys}), {keys} the keys each query drawn is computed against,",
    )


def _pair_at(masks: MaskView) -> dict[str, object]:
    ids = [str(t) for t in masks.tokens]
    return {"x_labels": ids, "y_labels": ids, "x_title": "key j (token id)",
            "y_title": "query i (token id)"}  # fmt: skip


def masks_figure(masks: MaskView, kind: str) -> Drawn:
    """The padding mask broadcast over the queries, the look-ahead mask and the one applied."""
    n, pair_at = len(masks.tokens), _pair_at(masks)
    broadcast = np.broadcast_to(masks.padding, (n, n))
    panels = [
        Panel(broadcast, title="padding (1, 1, 1, n), over every query", **pair_at,
              cell_text=broadcast.astype(int)),
        Panel(masks.look_ahead, title="look-ahead (n, n)", **pair_at,
              cell_text=masks.look_ahead.astype(int)),
        Panel(masks.mask, title=f"applied: {kind}", **pair_at, cell_text=masks.mask.astype(int)),
    ]  # fmt: skip
    scale = make_scale("index", [p.z for p in panels], zrange=(0, 1))
    return panel_grid(panels, scale, columns=3), {
        "latex": r"M^{\mathrm{pad}}_{ij} = [\,t_j = 0\,],\quad M^{\mathrm{look}}_{ij} = "
        r"[\,j > i\,],\quad M^{\mathrm{both}} = \max\bigl(M^{\mathrm{pad}}, "
        r"M^{\mathrm{look}}\bigr)\qquad (1 = \text{hidden})",
        "shape": (n, n),
        "caption": "1 = hidden (yellow), 0 = visible (purple). The padding mask is one row, "
        f"shape (1, 1, 1, {n}), drawn broadcast over the {n} queries as the softmax sees it.",
    }


def mask_weights_figure(masks: MaskView, kind: str, seed: int) -> Drawn:
    """The logits, the logits with the mask applied, and the weights the softmax gives."""
    n, pair_at, hidden = len(masks.tokens), _pair_at(masks), masks.hidden
    logit_scale = make_scale("diverging", [masks.logits])
    weight_scale = make_scale("weights", [masks.weights], n_keys=n)
    panels = [
        Panel(masks.logits, title="logits e = q·k / √d", **pair_at,
              cell_text=np.char.mod("%.1f", masks.logits)),
        Panel(np.where(hidden, np.nan, masks.logits), title=f"masked ({kind}): hidden = -∞",
              **pair_at, cell_text=np.where(hidden, "", np.char.mod("%.1f", masks.logits))),
        Panel(masks.weights, title="weights α", **pair_at,
              cell_text=np.where(hidden, "0", np.char.mod("%.2f", masks.weights))),
    ]  # fmt: skip
    scales = [logit_scale, logit_scale, weight_scale]
    return panel_grid(panels, scales, columns=3), {
        "latex": r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l:\, M_{il} = 0} \exp e_{il}}"
        r"\ \text{ where } M_{ij} = 0,\qquad \alpha_{ij} = 0 \ \text{ where } M_{ij} = 1",
        "shape": (1, 1, n, n),
        "caption": f"Seeded random q, k (d = {masks.d}, the page's head width; seed {seed}) "
        "give the logits. Masked "
        "logits: hidden cells blank (-∞ before the softmax, not -1e9). Weights: every value "
        "drawn, hidden cells exactly 0 (written 0); each row renormalised over the keys it sees. "
        + own_scales_caption(scales, [p.title for p in panels]),
    }
