"""Drawing a step of a shift story (Skew, Transformer-XL shift) as cells: the shared diverging
scale, the outline of a region, the gold pick, the step's layout and the traces a cell figure is
made of.

Conventions: the first row at the top, a diverging scale centred at 0 (one scale for every step
of a story, so a value keeps its colour from step to step), square cells.
"""

from __future__ import annotations

import html

import numpy as np

from explorer.pair.marks import click_marker
from explorer.stories.shift.skew import SkewStep, SkewStory
from explorer.stories.shift.stepping import Place

SCALE = "RdBu_r"
VEIL = "rgba(255,255,255,0.72)"  # laid over cells that do not reach a valid result cell
OUTLINE = "#111111"
PICK = "#f2b701"


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
        "marker": click_marker(float(np.clip(cell * 0.4, 4, 14))),
        "customdata": np.stack([rows.ravel(), cols.ravel()], axis=-1).astype(np.int32),
        "text": text.ravel().tolist(),
        "hovertemplate": "%{text}<extra></extra>",
        "name": "cells",
    }
