"""What the lookup, logits and attention pages draw, before it is drawn: a figure with its panels,
their scale(s), its shape and caption, on the window's axes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import (
    IMAGE_SIDE,
    Panel,
    Scale,
    grid_columns,
    panel_grid,
    pooled_note,
)
from explorer.figures.unread import hidden_keys, masked_line
from explorer.frame.params import ViewParams
from explorer.weights.reading import axis_labels
from explorer.weights.source import source_of


@dataclass(frozen=True)
class Drawn:
    """One figure of panels: ``scale`` is the shared scale or one per panel (for an inset), the
    latex is drawn above it, the shape and caption under it."""

    fig: go.Figure
    panels: Sequence[Panel]
    scale: Scale | Sequence[Scale]
    shape: tuple[int, ...] | None = None
    caption: str = ""
    latex: str = ""


def window_axes(params: ViewParams) -> dict[str, Any]:
    """The Panel options of an (n, n) matrix shown on the window: its offsets and token labels."""
    rows, cols = axis_labels(params)
    start, _ = params.window
    return {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}


def window_hidden(params: ViewParams, side: int | None = None) -> np.ndarray | None:
    """(side, side) bool of the window's top-left block (the whole window by default): True
    where the view's mask hides key j from query i; None when nothing is hidden."""
    start, stop = params.window
    side = stop - start if side is None else side
    return hidden_keys(
        side, side, causal=params.causal, row_offset=start, col_offset=start,
        keys=params.length, padded=params.n_pad,
    )  # fmt: skip


def hidden_line(params: ViewParams) -> str:
    """Why the masked cells are blank (and, for a trained model, what they would read)."""
    ahead = tuple(r for r in source_of(params).never_trained() if r > 0)
    return masked_line(params.causal, params.n_pad, ahead)


def heads_figure(
    params: ViewParams, stack: np.ndarray, scale: Scale, note: str = "", *, fine: bool = False
) -> Drawn:
    """Every head's (W, W) matrix of ``stack`` (h, W, W) side by side on one ``scale``, with
    ``note`` ahead of the scale's caption. ``fine``: a structure a few cells wide matters (a
    band along the diagonal), so a window drawn as an image takes two panels a row, each a
    pixel per position, rather than four of block means where such a band is a pixel wide."""
    start, stop = params.window
    heads, n = params.heads, params.length
    fine = fine and stop - start > IMAGE_SIDE
    side = 256 if stop - start > 256 and not fine else 512
    at = window_axes(params)
    grid = [Panel(stack[h], title=f"head {h}", **at) for h in range(heads)]
    columns = grid_columns(heads, 2 if fine else 4)
    return Drawn(
        panel_grid(grid, scale, columns=columns, image_side=side),
        grid,
        scale,
        shape=(1, heads, n, n),
        caption=" ".join(p for p in (note, scale.caption, pooled_note(grid, side)) if p),
    )
