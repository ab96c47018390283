"""The Schemes page's line chart: every scheme's position term against the distance j - i.

Takes arrays, returns a ``go.Figure``. A curve is its mean, optionally with a shaded band (the
caller says what the band is); arrays travel as float32 typed arrays. Long curves are thinned
for the browser: every distance with |j - i| < DENSE_DISTANCE is drawn, beyond that every s-th,
so that a curve has at most about 2 * DENSE_DISTANCE + POINTS_FAR points
(:func:`shown_distances`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

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
                "mode": "lines",
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
