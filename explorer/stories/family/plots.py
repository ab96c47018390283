"""The Schemes page's line chart: every scheme's position term against the distance j - i.

Takes arrays, returns a ``go.Figure``. A curve is its mean, optionally with a shaded band (the
caller says what the band is); arrays travel as float32 typed arrays. Long curves are thinned
for the browser: every distance with |j - i| < DENSE_DISTANCE is drawn, beyond that every s-th,
so that a curve has at most about 2 * DENSE_DISTANCE + POINTS_FAR points
(:func:`shown_distances`).
"""

from __future__ import annotations

import copy
import functools
import html
import math
from collections.abc import Mapping

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from explorer.figures.plots import axis_suffix

DENSE_DISTANCE = 512
POINTS_FAR = 1024
COLOURS = pc.qualitative.D3


def shown_distances(distance: np.ndarray) -> tuple[np.ndarray, int]:
    """(indices of the distances drawn, stride beyond ±DENSE_DISTANCE; 1 = every distance).

    >>> index, stride = shown_distances(np.arange(-3, 4))
    >>> index.tolist(), stride
    ([0, 1, 2, 3, 4, 5, 6], 1)
    """
    distance = np.asarray(distance)
    far = np.abs(distance) >= DENSE_DISTANCE
    stride = max(1, math.ceil(int(far.sum()) / POINTS_FAR))
    keep = ~far | (np.abs(distance) % stride == 0)
    return np.flatnonzero(keep), stride


def _rgba(colour: str, alpha: float) -> str:
    r, g, b = pc.hex_to_rgb(colour) if colour.startswith("#") else pc.unlabel_rgb(colour)
    return f"rgba({int(r)},{int(g)},{int(b)},{alpha})"


def profile_figure(
    distance: np.ndarray,
    curves: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    y_title: str,
    highlight: str = "",
    bands: tuple[str, ...] = (),
    marks: tuple[int, ...] = (),
    mark_label: str = "",
    height: int = 460,
) -> go.Figure:
    """One line per curve (name -> (mean (m,), band half-width (m,))) against ``distance``
    (m,), NaN points left out; the curves named in ``bands`` with a shaded band of mean ±
    half-width; ``highlight`` drawn thicker;
    dotted vertical lines at ``marks``, the first labelled ``mark_label``."""
    index, _ = shown_distances(distance)
    x_all = np.asarray(distance)[index]
    data = []
    for t, (name, (mean, half)) in enumerate(curves.items()):
        colour = COLOURS[t % len(COLOURS)]
        mean = np.asarray(mean, dtype=np.float32)[index]
        half = np.nan_to_num(np.asarray(half, dtype=np.float32)[index])
        seen = np.isfinite(mean)
        x, y, h = x_all[seen].astype(np.float32), mean[seen], half[seen]
        label = html.escape(name, quote=False)
        if name in bands and np.any(h > 0):
            data.append(
                {
                    "type": "scatter",
                    "x": np.concatenate([x, x[::-1]]),
                    "y": np.concatenate([y + h, (y - h)[::-1]]),
                    "fill": "toself",
                    "fillcolor": _rgba(colour, 0.12),
                    "line": {"width": 0},
                    "mode": "lines",
                    "hoverinfo": "skip",
                    "showlegend": False,
                    "legendgroup": label,
                    "name": f"{label} band",
                }
            )
        data.append(
            {
                "type": "scatter",
                "x": x,
                "y": y,
                "mode": "lines" if len(x) > 1 else "markers",  # one distance: a line draws nothing
                "name": label,
                "legendgroup": label,
                "line": {"color": colour, "width": 2.6 if name == highlight else 1.4},
                "hovertemplate": f"{label}<br>j - i = %{{x}}<br>%{{y:.4g}}<extra></extra>",
            }
        )
    shapes, annotations = [], []
    for t, x in enumerate(marks):
        shapes.append(
            {
                "type": "line",
                "x0": x,
                "x1": x,
                "xref": "x",
                "y0": 0,
                "y1": 1,
                "yref": "paper",
                "line": {"dash": "dot", "color": "black", "width": 1.2},
            }
        )
        if t == 0 and mark_label:
            annotations.append(
                {
                    "x": x,
                    "y": 1,
                    "xref": "x",
                    "yref": "paper",
                    "text": html.escape(mark_label, quote=False),
                    "showarrow": False,
                    "xanchor": "left",
                    "yanchor": "top",
                    "font": {"size": 11},
                    "bgcolor": "rgba(255,255,255,0.8)",
                }
            )
    layout = {
        "xaxis": {"title": {"text": "j - i (key position - query position)"}, "zeroline": False},
        "yaxis": {"title": {"text": html.escape(y_title, quote=False)}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "legend": {"orientation": "h", "y": 1.08, "x": 0},
        "hovermode": "closest",
        "shapes": shapes,
        "annotations": annotations,
    }
    return go.Figure({"data": data, "layout": layout})


@functools.lru_cache(maxsize=8)
def grid_layout(rows: int, columns: int, titles: tuple[str, ...]) -> dict:
    """The layout plotly's make_subplots gives a grid of small charts (domains, titles), as a
    dict: 20 ms a call, the same for every rerun of one grid."""
    from plotly.subplots import make_subplots  # the only figure here with subplots

    return make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=titles,
        horizontal_spacing=0.07,
        vertical_spacing=0.16 if rows > 1 else 0.0,
    ).layout.to_plotly_json()


def learned_figure(
    distance: np.ndarray,
    curves: Mapping[str, np.ndarray],
    context: int,
    *,
    columns: int = 3,
    y_title: str = "position term (logit)",
) -> go.Figure:
    """One small chart per scheme (title -> (h, m) against ``distance``), heads as lines in the
    same colour on every chart, each chart on its own y scale; the last distance a training
    window of ``context`` holds dashed, and every distance beyond it shaded."""
    from explorer.figures.token_view import head_colour  # one colour per head on every page

    rows = math.ceil(len(curves) / columns)
    titles = [html.escape(name, quote=False) for name in curves]
    # make_subplots lays out the grid (domains, titles); traces, shapes and axis titles are then
    # written into one dict: plotly's add_trace / add_vline(row="all") walk the whole figure on
    # every call, about 0.2 s for this chart
    layout = copy.deepcopy(grid_layout(rows, columns, tuple(titles)))
    x = np.asarray(distance, dtype=np.float32)
    edge = -(context - 1)
    data, shapes = [], []
    for t, values in enumerate(curves.values()):
        row, col = divmod(t, columns)
        axis = axis_suffix(t)
        for head, y in enumerate(np.asarray(values, dtype=np.float32)):
            data.append(
                {
                    "type": "scatter",
                    "x": x,
                    "y": y,
                    "mode": "lines",
                    "name": f"head {head}",
                    "legendgroup": f"head {head}",
                    "showlegend": t == 0,
                    "line": {"color": head_colour(head), "width": 1.6},
                    "hovertemplate": f"{titles[t]}, head {head}<br>j - i = %{{x}}<br>%{{y:.4g}}"
                    "<extra></extra>",
                    "xaxis": f"x{axis}",
                    "yaxis": f"y{axis}",
                }
            )
        shapes.append(  # the distances no training window held, shaded
            {"type": "rect", "x0": float(x[0]) - 0.5, "x1": edge, "y0": 0, "y1": 1,
             "xref": f"x{axis}", "yref": f"y{axis} domain", "layer": "below",
             "fillcolor": "rgba(120,120,120,0.12)", "line": {"width": 0}}
        )  # fmt: skip
        shapes.append(  # the last distance a training window holds
            {"type": "line", "x0": edge, "x1": edge, "y0": 0, "y1": 1,
             "xref": f"x{axis}", "yref": f"y{axis} domain",
             "line": {"dash": "dash", "color": "#555", "width": 1}}
        )  # fmt: skip
    for cell in range(rows * columns):
        row, col = divmod(cell, columns)
        axis = axis_suffix(cell)
        layout[f"xaxis{axis}"]["zeroline"] = False
        if row == rows - 1:
            layout[f"xaxis{axis}"]["title"] = {"text": "j - i"}
        if col == 0:
            layout[f"yaxis{axis}"]["title"] = {"text": html.escape(y_title, quote=False)}
    layout.update(
        shapes=shapes,
        height=260 * rows + 120,
        margin={"l": 10, "r": 10, "t": 40, "b": 60},
        legend={"orientation": "h", "y": 0, "yref": "container", "yanchor": "bottom", "x": 0},
        hovermode="closest",
    )
    return go.Figure({"data": data, "layout": layout})
