"""The cell figure of the skew story: one step (or a crop of it) as cells, r written in each,
the cells the slice keeps outlined, the rest greyed, and one picked value marked where it sits.

Conventions as elsewhere (:mod:`explorer.stories.shift.step_drawing`): the first row at the top,
a diverging scale centred at 0 (one scale for all four steps), square cells. A large step is
drawn as an image instead (:mod:`explorer.stories.shift.skew_image`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.stories.shift.skew import SkewStep, SkewStory
from explorer.stories.shift.step_drawing import (
    OUTLINE,
    cell_click_trace,
    cell_text_trace,
    colour_bound,
    outline_path,
    pick_shapes,
    step_layout,
    value_trace,
    veil_trace,
)
from explorer.stories.shift.stepping import Place

TEXT_CELLS_MAX = 24  # write r into the cells up to this many rows and columns: at 560 px a
# cell is then >= 23 px and its text >= 8 px; beyond, "-39" overflows its cell (hover keeps r)
TICKS_MAX = 24  # a tick per row / column up to this many
TICKS_SHOWN = 12  # beyond, about this many
LABEL_CHARS_MAX = 10


def _label(labels: Sequence[str] | None, position: int) -> str:
    if labels is None:
        return ""
    text = labels[position]
    text = text if len(text) <= LABEL_CHARS_MAX else text[: LABEL_CHARS_MAX - 1] + "…"
    return html.escape(f' "{text}"', quote=False)


def _ticks(values: np.ndarray, text: list[str]) -> dict:
    """A tick per row / column up to TICKS_MAX, else one at every multiple of a stride (0
    included: r = 0, query 0): 40 labels on a 390 px phone overlap."""
    at = np.arange(len(values))
    if len(values) > TICKS_MAX:
        stride = -(-len(values) // TICKS_SHOWN)
        at = at[values % stride == 0]
    return {"tickmode": "array", "tickvals": values[at], "ticktext": [text[a] for a in at]}


def _x_ticks(step: SkewStep, cols: slice, labels: Sequence[str] | None) -> dict:
    x = step.x[cols]
    if step.name in ("input", "padded"):
        pad_column = step.pad.all(axis=0)[cols]
        text = ["pad" if p else str(v) for v, p in zip(x, pad_column, strict=True)]
    elif step.name == "result":
        text = [f"{v}{_label(labels, int(v))}" for v in x]
    else:
        text = [str(v) for v in x]
    return _ticks(x, text)


def _y_ticks(step: SkewStep, rows: slice, labels: Sequence[str] | None) -> dict:
    y = step.y[rows]
    if step.name == "reshaped":
        return _ticks(y, [str(v) for v in y])
    return _ticks(y, [f"{v}{_label(labels, int(v))}" for v in y])


def hover_text(step: SkewStep, rows: slice, cols: slice, labels: Sequence[str] | None,
               story: SkewStory) -> np.ndarray:  # fmt: skip
    """One hover string per cell: where the cell is and which q_i · Er[r] it holds."""
    z = step.z[rows, cols]
    src, dist, pad = step.origin(rows, cols)
    y, x = step.y[rows], step.x[cols]
    out = np.empty(z.shape, dtype=object)
    for r in range(z.shape[0]):
        for c in range(z.shape[1]):
            if step.name == "result":
                i, j = int(y[r]), int(x[c])
                where = f"i = {i}{_label(labels, i)}, j = {j}{_label(labels, j)}<br>"
                valid = story.valid[i - story.start, j - story.start]
                if valid:
                    row = story.table_rows[i - story.start, j - story.start]
                    where += f"j - i = {j - i}, table row {row}<br>"
                else:
                    where += "not a relative logit (the causal mask removes it)<br>"
            elif step.name == "reshaped":
                where = f"row {int(y[r])}, column {int(x[c])}<br>"
            else:
                where = f"query i = {int(y[r])}{_label(labels, int(y[r]))}<br>"
            if pad[r, c]:
                holds = "a pad zero"
            else:
                holds = f"q_{src[r, c]} · Er[r = {dist[r, c]}] = {z[r, c]:.4g}"
            out[r, c] = where + holds
    return out


def writes_numbers(shape: tuple[int, ...]) -> bool:
    """Whether a (crop of a) step of this shape is small enough to write r in its cells."""
    return max(shape) <= TEXT_CELLS_MAX


def cells_figure(
    story: SkewStory,
    name: str,
    place: Place | None,
    labels: Sequence[str] | None,
    *,
    rows: slice = slice(None),
    cols: slice = slice(None),
    title: str = "",
    width_px: int = 760,
    write_r: bool = True,
) -> go.Figure:
    """One step (or a crop of it) as cells: values, r written in each cell, hover per cell.

    Trace 0 is the heatmap of the exact values; an invisible marker per cell (last trace)
    carries the hover text and the cell's (row, col) for a click.
    """
    step = story.step(name)
    z = step.z[rows, cols]
    x, y = step.x[cols], step.y[rows]
    kept = step.kept[rows, cols]
    bound = colour_bound(story)
    n_rows, n_cols = z.shape
    data = [value_trace(z, x, y, bound, name, "value")]
    if not kept.all():
        data.append(veil_trace(~kept, x, y, "greyed"))
    cell = float(np.clip(width_px / max(n_cols, 1), 8, 44))
    if write_r and writes_numbers(z.shape):
        _, distance, pad = step.origin(rows, cols)
        text = np.where(pad, "pad", distance.astype(str))
        data.append(cell_text_trace(x, y, z, text, bound, cell * 0.36, "r"))
    r_index, c_index = np.meshgrid(
        np.arange(step.z.shape[0])[rows], np.arange(step.z.shape[1])[cols], indexing="ij"
    )
    text = hover_text(step, rows, cols, labels, story)
    data.append(cell_click_trace(x, y, r_index, c_index, text, cell))
    outline = outline_path(kept, float(x[0]), float(y[0]))
    shapes = [{"type": "path", "path": outline, "line": {"color": OUTLINE, "width": 2},
               "name": "kept", "layer": "above"}] if outline else []  # fmt: skip
    if place is not None and x[0] <= place.x <= x[-1] and y[0] <= place.y <= y[-1]:
        shapes += pick_shapes(place, big=False)
    x_axis = {"range": [x[0] - 0.5, x[-1] + 0.5], **_x_ticks(step, cols, labels)}
    y_axis = {"range": [y[-1] + 0.5, y[0] - 0.5], **_y_ticks(step, rows, labels)}
    height = int(np.clip(n_rows * cell + 110, 260, 820))
    return go.Figure({"data": data, "layout": step_layout(step, title, x_axis, y_axis, height,
                                                      shapes)})  # fmt: skip
