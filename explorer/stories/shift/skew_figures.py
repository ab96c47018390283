"""Figures of the skew story: one step as cells (small) or as an image (large), with the cells
the slice keeps outlined, the rest greyed, and one picked value marked where it sits.

Conventions as elsewhere: the first row at the top, a diverging scale centred at 0 (one scale
for all four steps, so a value keeps its colour from step to step), square cells.
"""

from __future__ import annotations

import base64
import functools
import html
import io
from collections.abc import Sequence

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from PIL import Image

from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.shift.skew import SkewStep, SkewStory, skew_story
from explorer.stories.shift.stepping import Place

SCALE = "RdBu_r"
VEIL = "rgba(255,255,255,0.72)"  # laid over cells that do not reach a valid result cell
OUTLINE = "#111111"
PICK = "#f2b701"
TEXT_CELLS_MAX = 40  # write r into the cells when the step is at most this wide
CELLS_MAX = 8192  # a step with more cells travels as an image
TICKS_MAX = 40  # a tick per row / column up to this many
LABEL_CHARS_MAX = 10


def colour_bound(story: SkewStory) -> float:
    """Half-width of the shared diverging scale: the largest |value| the input holds."""
    bound = float(np.abs(story.steps[0].z).max()) if story.steps[0].z.size else 1.0
    return bound if bound > 0 else 1.0


def _runs(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(line, first, stop) of every run of True along the rows of ``edges``, row-major."""
    padded = np.pad(edges.astype(np.int8), ((0, 0), (1, 1)))
    change = np.diff(padded, axis=1)
    line, first = np.nonzero(change == 1)
    _, stop = np.nonzero(change == -1)
    return line, first, stop


def outline_path(region: np.ndarray, x0: float, y0: float) -> str:
    """SVG path (plotly shape) of the border of the True cells of ``region``.

    Cell (r, c) covers [x0 + c - 0.5, x0 + c + 0.5] x [y0 + r - 0.5, y0 + r + 0.5]; every
    run of border edges along a grid line becomes one segment.
    """
    cells = np.pad(np.asarray(region, dtype=bool), 1)
    horizontal = cells[1:, 1:-1] != cells[:-1, 1:-1]  # (rows + 1, cols): line above row r
    vertical = cells[1:-1, 1:] != cells[1:-1, :-1]  # (rows, cols + 1): line left of column c
    parts = [
        f"M{x0 + a - 0.5:g},{y0 + r - 0.5:g}H{x0 + b - 0.5:g}"
        for r, a, b in zip(*_runs(horizontal), strict=True)
    ]
    parts += [
        f"M{x0 + c - 0.5:g},{y0 + a - 0.5:g}V{y0 + b - 0.5:g}"
        for c, a, b in zip(*_runs(vertical.T), strict=True)
    ]
    return "".join(parts)


def _label(labels: Sequence[str] | None, position: int) -> str:
    if labels is None:
        return ""
    text = labels[position]
    text = text if len(text) <= LABEL_CHARS_MAX else text[: LABEL_CHARS_MAX - 1] + "…"
    return html.escape(f' "{text}"', quote=False)


def _ticks(values: np.ndarray, text: list[str]) -> dict:
    if len(values) > TICKS_MAX:
        return {"tickmode": "auto"}
    return {"tickmode": "array", "tickvals": values, "ticktext": text}


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


def pick_shapes(place: Place | None, big: bool, extent: tuple[float, ...] = ()) -> list[dict]:
    """The picked value's cell: a thick square (named ``picked``) and, on an image, a cross
    through it reaching the edges ``extent`` = (x_first, x_last, y_first, y_last)."""
    if place is None:
        return []
    shapes = [
        {
            "type": "rect",
            "name": "picked",
            "x0": place.x - 0.5,
            "x1": place.x + 0.5,
            "y0": place.y - 0.5,
            "y1": place.y + 0.5,
            "line": {"color": PICK, "width": 4},
            "layer": "above",
        },
    ]
    if big:
        x_first, x_last, y_first, y_last = extent
        line = {"color": PICK, "width": 1.5, "dash": "dot"}
        shapes += [
            {"type": "line", "x0": place.x, "x1": place.x, "y0": y_first - 0.5,
             "y1": y_last + 0.5, "line": line, "layer": "above", "name": "picked column"},
            {"type": "line", "x0": x_first - 0.5, "x1": x_last + 0.5, "y0": place.y,
             "y1": place.y, "line": line, "layer": "above", "name": "picked row"},
        ]  # fmt: skip
    return shapes


def step_layout(step: SkewStep, title: str, x_axis: dict, y_axis: dict, height: int,
            shapes: list[dict]) -> dict:  # fmt: skip
    return {
        "title": {
            "text": html.escape(title, quote=False),
            "x": 0,
            "xref": "container",
            "font": {"size": 14},
        },  # fmt: skip
        "xaxis": {
            "title": {"text": step.x_title},
            "side": "top",
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            **x_axis,
        },  # fmt: skip
        "yaxis": {
            "title": {"text": step.y_title},
            "scaleanchor": "x",
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            **y_axis,
        },  # fmt: skip
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 80, "b": 10},
        "plot_bgcolor": "white",
        "shapes": shapes,
        "showlegend": False,
        "hovermode": "closest",
        "hoverdistance": 60,  # the nearest cell centre answers anywhere in a cell
        "clickmode": "event+select",
    }


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
    if write_r and max(n_rows, n_cols) <= TEXT_CELLS_MAX:
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


@functools.cache
def _lut() -> np.ndarray:
    colours = plotly.colors.sample_colorscale(SCALE, np.linspace(0, 1, 256))
    return np.array([plotly.colors.unlabel_rgb(c) for c in colours], dtype=np.float32)


@cached(16)
def step_png(params: ViewParams, head: int, masked: bool, name: str) -> str:
    """A step as a PNG data URI: one pixel per cell, greyed where not kept (cached)."""
    story = skew_story(params, head, masked)
    step = story.step(name)
    bound = colour_bound(story)
    level = np.clip((step.z / bound + 1) * 127.5, 0, 255).astype(np.uint8)
    rgb = _lut()[level]
    rgb = np.where(step.kept[..., None], rgb, rgb * 0.28 + 255 * 0.72)
    buffer = io.BytesIO()
    Image.fromarray(rgb.round().astype(np.uint8), "RGB").save(buffer, "PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def image_figure(
    story: SkewStory,
    params: ViewParams,
    head: int,
    name: str,
    place: Place | None,
    title: str = "",
    width_px: int = 470,
) -> go.Figure:
    """A large step as an image (one pixel per cell), the kept cells outlined, the pick crossed.

    The exact values are not in this figure: the inset around the picked cell holds them.
    """
    step = story.step(name)
    rows, cols = step.shape
    bound = colour_bound(story)
    x0, y0 = float(step.x[0]), float(step.y[0])
    data = [
        {
            "type": "image",
            "source": step_png(params, head, story.masked, name),
            "x0": x0,
            "y0": y0,
            "dx": 1,
            "dy": 1,
            "hovertemplate": f"{step.y_title} %{{y}}, {step.x_title} %{{x}}<extra></extra>",
            "name": name,
        },
        {  # an invisible marker carrying the image's colour bar
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "markers",
            "marker": {
                "size": 0.1,
                "opacity": 0,
                "color": [0.0],
                "colorscale": SCALE,
                "cmin": -bound,
                "cmax": bound,
                "showscale": True,
                "colorbar": {"thickness": 12, "len": 0.8, "title": {"text": "value"}},
            },
            "hoverinfo": "skip",
            "name": "scale",
        },
    ]
    outline = outline_path(step.kept, x0, y0)
    shapes = [{"type": "path", "path": outline, "line": {"color": OUTLINE, "width": 1},
               "name": "kept", "layer": "above"}]  # fmt: skip
    shapes += pick_shapes(place, True, (x0, x0 + cols - 1, y0, y0 + rows - 1))
    x_axis = {"range": [x0 - 0.5, x0 + cols - 0.5]}
    y_axis = {"range": [y0 + rows - 0.5, y0 - 0.5]}
    height = int(np.clip(rows / cols * width_px + 110, 280, 640))
    return go.Figure({"data": data, "layout": step_layout(step, title, x_axis, y_axis, height,
                                                      shapes)})  # fmt: skip


def is_small(story: SkewStory, name: str) -> bool:
    """Whether a step is drawn as cells (else as an image with an inset)."""
    rows, cols = story.step(name).shape
    return rows * cols <= CELLS_MAX


def inset_window(step: SkewStep, place: Place, height: int = 9, width: int = 9) -> tuple[
    slice, slice]:  # fmt: skip
    """Rows and columns of a crop of ``step`` around ``place`` (clamped to the matrix)."""
    rows, cols = step.shape
    r0 = int(np.clip(place.row - height // 2, 0, max(rows - height, 0)))
    c0 = int(np.clip(place.col - width // 2, 0, max(cols - width, 0)))
    return slice(r0, min(r0 + height, rows)), slice(c0, min(c0 + width, cols))


def cell_text_trace(
    x: np.ndarray,
    y: np.ndarray,
    z: np.ndarray,
    text: np.ndarray,
    bound: float,
    size: float,
    name: str,
) -> dict:
    """Text written in every cell of a (rows, cols) heatmap at x, y: white on dark colours."""
    return {
        "type": "scatter",
        "mode": "text",
        "x": np.broadcast_to(x[None, :], z.shape).ravel(),
        "y": np.broadcast_to(y[:, None], z.shape).ravel(),
        "text": text.ravel().tolist(),
        "textfont": {
            "size": int(np.clip(size, 7, 12)),
            "color": np.where(np.abs(z) > 0.55 * bound, "white", "#222").ravel().tolist(),
        },
        "hoverinfo": "skip",
        "name": name,
    }


def value_trace(
    z: np.ndarray, x: np.ndarray, y: np.ndarray, bound: float, name: str, colour_title: str
) -> dict:
    """The exact values of a step as a heatmap on the diverging scale [-bound, bound]."""
    return {
        "type": "heatmap",
        "z": z,
        "x": x,
        "y": y,
        "colorscale": SCALE,
        "zmin": -bound,
        "zmax": bound,
        "zmid": 0.0,
        "hoverinfo": "skip",
        "colorbar": {"thickness": 12, "len": 0.8, "title": {"text": colour_title}},
        "name": name,
    }


def veil_trace(hidden: np.ndarray, x: np.ndarray, y: np.ndarray, name: str) -> dict:
    """A grey veil over the cells where ``hidden`` is True (what a step drops)."""
    return {
        "type": "heatmap",
        "z": np.where(hidden, 1.0, np.nan).astype(np.float32),
        "x": x,
        "y": y,
        "colorscale": [[0, VEIL], [1, VEIL]],
        "showscale": False,
        "hoverinfo": "skip",
        "name": name,
    }


def cell_click_trace(
    x: np.ndarray,
    y: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    text: np.ndarray,
    cell: float,
) -> dict:
    """An invisible marker per cell at (x, y) carrying its hover ``text`` and its (row, col) in
    the step, which a click returns as customdata."""
    return {
        "type": "scatter",
        "mode": "markers",
        "x": np.broadcast_to(x[None, :], text.shape).ravel(),
        "y": np.broadcast_to(y[:, None], text.shape).ravel(),
        # small: overlapping markers would make a click pick a neighbour (hover reaches 20 px
        # around a point, so the whole cell still answers)
        "marker": {"size": float(np.clip(cell * 0.4, 4, 14)), "color": "rgba(0,0,0,0)"},
        "customdata": np.stack([rows.ravel(), cols.ravel()], axis=-1).astype(np.int32),
        "text": text.ravel().tolist(),
        "hovertemplate": "%{text}<extra></extra>",
        "name": "cells",
    }
