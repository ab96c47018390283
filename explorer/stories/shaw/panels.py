"""What the lookup, logits and attention pages draw, before it is drawn: a figure with its panels,
their scale(s), its shape and caption, on the window's axes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, Scale, grid_columns, panel_grid, pooled_note
from explorer.frame.params import ViewParams
from explorer.weights.example import axis_labels


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


def heads_figure(params: ViewParams, stack: np.ndarray, scale: Scale) -> Drawn:
    """Every head's (W, W) matrix of ``stack`` (h, W, W) side by side on one ``scale``."""
    start, stop = params.window
    heads, n = params.heads, params.length
    side = 256 if stop - start > 256 else 512
    at = window_axes(params)
    grid = [Panel(stack[h], title=f"head {h}", **at) for h in range(heads)]
    return Drawn(
        panel_grid(grid, scale, columns=grid_columns(heads), image_side=side),
        grid,
        scale,
        shape=(1, heads, n, n),
        caption=scale.caption + " " + pooled_note(grid, side),
    )
