"""The figure of one step of the Transformer-XL shift: every cell, its distance written in it,
the cells that become right result cells outlined, the ones that become wrong result cells
hatched, the ones the slice drops greyed, and the picked value marked.

It shares the Skew page's conventions and helpers (:mod:`explorer.stories.shift.step_drawing`):
one diverging scale for every step, the first row at the top, square cells, the gold pick.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.stories.shift.rel_shift import DROPPED, KEPT, WRONG, ShiftStory
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

WRONG_COLOUR = "#c2185b"
TEXT_CELLS_MAX = 40  # write the distance into the cells up to this many columns


def hover_text(story: ShiftStory, name: str) -> np.ndarray:
    """One hover string per cell: where it is, the value it holds, and where that value goes."""
    step = story.step(name)
    source, column, distance = step.origin()
    fate_words = {
        KEPT: "becomes a right result cell",
        WRONG: "becomes a wrong result cell",
        DROPPED: "dropped by the slice",
    }
    out = np.empty(step.shape, dtype=object)
    for r in range(step.shape[0]):
        for c in range(step.shape[1]):
            if name == "result":
                where = f"i = {r}, j = {story.key(c)}"
                where += " (memory)" if c < story.memory else ""
                verdict = "right" if story.valid[r, c] else "WRONG (j > i)"
                where += f"<br>distance j - i = {story.distance[r, c]}: {verdict}"
            elif name in ("input", "padded"):
                where = f"query i = {r}, column {c}"
            else:
                where = f"row {r}, column {c}"
            if source[r, c] < 0:
                holds = "the zero pad"
            else:
                holds = (
                    f"(q_{source[r, c]} + v)·W_R R_{-distance[r, c]} = {step.z[r, c]:.4g}"
                    f"<br>(input row {source[r, c]}, column {column[r, c]})"
                )
            tail = "" if name == "result" else "<br>" + fate_words[int(step.fate[r, c])]
            out[r, c] = f"{where}<br>{holds}{tail}"
    return out


def _hatch(region: np.ndarray) -> dict:
    """A scatter trace filling every True cell with a diagonal hatch (one polygon per cell)."""
    rows, cols = np.nonzero(region)
    xs, ys = [], []
    for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
        xs += [c - 0.5, c + 0.5, c + 0.5, c - 0.5, c - 0.5, None]
        ys += [r - 0.5, r - 0.5, r + 0.5, r + 0.5, r - 0.5, None]
    return {
        "type": "scatter",
        "x": xs,
        "y": ys,
        "mode": "lines",
        "line": {"width": 0},
        "fill": "toself",
        "fillcolor": "rgba(0,0,0,0)",
        "fillpattern": {"shape": "/", "fgcolor": WRONG_COLOUR, "size": 7, "solidity": 0.25},
        "hoverinfo": "skip",
        "name": "wrong",
    }


def step_figure(
    story: ShiftStory,
    name: str,
    place: Place | None,
    *,
    title: str = "",
    width_px: int = 560,
    write_distance: bool = True,
) -> go.Figure:
    """One step as cells. Trace 0 is the heatmap of the exact values; the last trace is an
    invisible marker per cell carrying its hover text and its (row, col) for a click."""
    step = story.step(name)
    z = step.z
    rows, cols = z.shape
    x, y = step.x, step.y
    bound = colour_bound(story)
    cell = float(np.clip(width_px / max(cols, 1), 8, 44))
    data = [value_trace(z, x, y, bound, name, "(b)+(d)")]
    dropped = step.fate == DROPPED
    if dropped.any():
        data.append(veil_trace(dropped, x, y, "dropped"))
    wrong = step.fate == WRONG
    if wrong.any():
        data.append(_hatch(wrong))
    if write_distance and cols <= TEXT_CELLS_MAX:
        _, _, distance = step.origin()
        text = np.where(step.pad, "pad", distance.astype(str))
        data.append(cell_text_trace(x, y, z, text, bound, cell * 0.4, "distance"))
    r_index, c_index = np.meshgrid(y, x, indexing="ij")
    data.append(cell_click_trace(x, y, r_index, c_index, hover_text(story, name), cell))
    shapes = []
    for region, colour, label in ((step.fate == KEPT, OUTLINE, "kept"),
                                  (wrong, WRONG_COLOUR, "wrong")):  # fmt: skip
        path = outline_path(region, 0.0, 0.0)
        if path:
            shapes.append({"type": "path", "path": path, "name": label, "layer": "above",
                           "line": {"color": colour, "width": 2}})  # fmt: skip
    if name == "result" and 0 < story.memory < cols:
        shapes.append({"type": "line", "x0": story.memory - 0.5, "x1": story.memory - 0.5,
                       "y0": -0.5, "y1": rows - 0.5, "name": "memory", "layer": "above",
                       "line": {"color": "#555", "width": 2, "dash": "dash"}})  # fmt: skip
    shapes += pick_shapes(place, big=False)  # type: ignore[arg-type]  # reads .x, .y
    x_axis = {"range": [-0.5, cols - 0.5], "tickmode": "array", "tickvals": x,
              "ticktext": list(step.x_ticks)}  # fmt: skip
    y_axis = {"range": [rows - 0.5, -0.5], "tickmode": "array", "tickvals": y,
              "ticktext": list(step.y_ticks)}  # fmt: skip
    height = int(np.clip(rows * cell + 110, 260, 820))
    layout = step_layout(step, title, x_axis, y_axis, height, shapes)  # type: ignore[arg-type]
    return go.Figure({"data": data, "layout": layout})
