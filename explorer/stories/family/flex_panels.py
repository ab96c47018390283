"""The Masks and biases page's figures: one head's mask, bias, logits and weights side by side,
and the BlockMask drawn block by block.

A block's kind is drawn three ways at once, never by colour alone: its colour, its mark (a filled
square: full; an open square: partial; a thin cross: skipped) and, on a grid of at most 16 blocks
a side, its letter (F, P, S). The hover names the query rows and keys it covers.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.palettes import active
from explorer.figures.scales import make_scale, own_scales_caption
from explorer.frame.params import ViewParams
from explorer.frame.screen import figure_width
from explorer.stories.family.flex_views import FlexView
from explorer.weights.reading import axis_labels

# the BlockMask's kinds as mask_mods.block_kinds numbers them: (number, name, mark, letter)
KINDS = (
    (2, "full", "square", "F"),
    (1, "partial", "square-open", "P"),
    (0, "skipped", "x-thin-open", "S"),
)
LETTERS_MAX = 16  # blocks a side up to which each block also carries its letter
GRID_PX = 420


def view_panels(view: FlexView, params: ViewParams, head: int) -> tuple[go.Figure, str]:
    """Mask, bias, logits and weights of one head on the window, each on its own scale."""
    rows, cols = axis_labels(params)
    start, _ = params.window
    at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}
    allowed = view.mask.astype(bool)
    panels = [
        Panel(view.mask, title="mask: 1 attends, 0 hidden", cell_text=view.mask.astype(int), **at),
        Panel(view.bias, title="bias: what the score_mod adds",
              cell_text=np.char.mod("%.2f", view.bias), **at),
        Panel(view.logits, title="logits under the mask",
              cell_text=np.where(allowed, np.char.mod("%.2f", view.logits), ""), **at),
        Panel(view.weights, title=f"weights, head {head}",
              cell_text=np.where(allowed, np.char.mod("%.2f", view.weights), ""), **at),
    ]  # fmt: skip
    scales = [
        make_scale("index", [view.mask], zrange=(0, 1)),
        make_scale("diverging", [view.bias]),
        make_scale("diverging", [view.logits]),
        make_scale("weights", [view.weights], n_keys=params.length),
    ]
    fig = panel_grid(panels, scales, columns=2)
    return fig, own_scales_caption(scales, [p.title for p in panels])


def _span(block: int, size: int, n: int) -> str:
    first, last = block * size, min(n, (block + 1) * size) - 1
    return f"{first}" if first == last else f"{first}-{last}"


def block_figure(kinds: np.ndarray, block: int, n: int) -> go.Figure:
    """The BlockMask's blocks: a heatmap of their kinds (trace 0, z = 0 skipped, 1 partial,
    2 full) under one trace of marks per kind, with a legend that names each mark."""
    palette = active()
    colours = {2: palette.categories[0], 1: palette.categories[1], 0: "#ffffff"}
    blocks_q, blocks_k = kinds.shape
    hover = np.array(
        [[f"queries {_span(r, block, n)} · keys {_span(c, block, n)}: "
          + next(name for number, name, _, _ in KINDS if number == kinds[r, c])
          for c in range(blocks_k)] for r in range(blocks_q)]
    )  # fmt: skip
    fig = go.Figure()
    stops = [(0.0, colours[0]), (0.33, colours[0]), (0.34, colours[1]), (0.66, colours[1]),
             (0.67, colours[2]), (1.0, colours[2])]  # fmt: skip
    fig.add_trace(
        go.Heatmap(
            z=kinds.astype(np.float32),
            zmin=0,
            zmax=2,
            colorscale=stops,
            showscale=False,
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            xgap=1,
            ygap=1,
        )  # fmt: skip
    )
    side = figure_width(GRID_PX)
    cell = side / max(blocks_q, blocks_k)
    letters = max(blocks_q, blocks_k) <= LETTERS_MAX
    for number, name, mark, letter in KINDS:
        rows, cols = np.nonzero(kinds == number)
        lettered = letters and number == 0  # a skipped block's letter alone, no cross under it
        fig.add_trace(
            go.Scatter(
                x=cols,
                y=rows,
                mode="markers+text" if letters else "markers",
                name=f"{name} ({letter})",
                text=[letter] * len(rows) if letters else None,
                textposition="middle center",
                textfont={"size": max(9, min(16, cell * 0.35)), "color": "#000000"},
                marker={
                    "symbol": mark,
                    "size": 0.1 if lettered else max(4, cell * 0.7),
                    "color": "#1a1a1a",
                    "line": {"width": 1, "color": "#000000"},
                    "opacity": 0.35 if number == 2 else 0.9,
                },
                hoverinfo="skip",
            )
        )
    ticks = {"dtick": 1} if letters else {}
    fig.update_xaxes(title_text=f"key block ({block} keys each)", side="top",
                     range=[-0.5, blocks_k - 0.5], constrain="domain", **ticks)  # fmt: skip
    fig.update_yaxes(title_text=f"query block ({block} queries each)", range=[blocks_q - 0.5, -0.5],
                     scaleanchor="x", constrain="domain", **ticks)  # fmt: skip
    fig.update_layout(
        width=side, height=side + 110, margin={"l": 60, "r": 10, "t": 60, "b": 50},
        legend={"orientation": "h", "y": -0.02, "yanchor": "top", "x": 0, "itemsizing": "constant"},
        plot_bgcolor="#ffffff",
    )  # fmt: skip
    return fig
