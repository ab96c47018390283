"""Line charts: curves on log-log axes (cost against sequence length), with starred points and
a labelled level. Arrays in, a plotly ``go.Figure`` out; labels are HTML-escaped."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.frame.screen import is_phone

LEGEND_LINE_PX = 21  # one line of legend entries
BYTE_TICKS = ("1 B", "100 B", "10 kB", "1 MB", "100 MB", "10 GB", "1 TB", "100 TB")  # 10^0, 10^2..


def loglog_figure(
    curves: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    y_title: str,
    x_title: str = "n (sequence length)",
    dashed: Sequence[str] = (),
    hovertemplate: str = "%{fullData.name}<br>n=%{x}<br>%{y:.4s}<extra></extra>",
    byte_ticks: bool = False,
    height: int = 480,
) -> go.Figure:
    """Lines on log-log axes: ``curves`` maps a legend name to (x, y) arrays (y > 0).

    Arrays travel as typed arrays; names listed in ``dashed`` are drawn dashed. x ticks are the
    powers of 4 written in full; with ``byte_ticks`` the y ticks read "1 kB", "1 MB", ...
    """
    data = []
    for name, (x, y) in curves.items():
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        if x.shape != y.shape or x.ndim != 1:
            raise ValueError(f"curve {name!r} needs two 1-D arrays of one length, got "
                             f"{x.shape} and {y.shape}")  # fmt: skip
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": html.escape(name, quote=False),
                "x": x,
                "y": y,
                "line": {"dash": "dash" if name in dashed else "solid"},
                "marker": {"size": 5},
                "hovertemplate": hovertemplate,
            }
        )
    xs = np.concatenate([np.asarray(x, dtype=np.float64) for x, _ in curves.values()] or [[1]])
    x_ticks = [4**e for e in range(0, 12) if xs.min() / 4 < 4**e <= xs.max() * 4]
    y_axis: dict = {"type": "log", "title": {"text": y_title}, "dtick": 1}  # decades only
    if byte_ticks:
        y_axis.update(tickvals=[10.0**e for e in range(0, 16, 2)], ticktext=BYTE_TICKS)
    layout = {
        "title": {"text": html.escape(title, quote=False), "x": 0, "font": {"size": 14}},
        "xaxis": {
            "type": "log",
            "title": {"text": x_title},
            "tickvals": x_ticks,
            "ticktext": [str(t) for t in x_ticks],
        },
        "yaxis": y_axis,
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "legend": {"orientation": "v", "x": 1.02, "y": 1},
        "hovermode": "closest",
    }
    return go.Figure({"data": data, "layout": layout})


def mark_points(
    fig: go.Figure, points: Sequence[tuple[str, float, float]], name: str = "marked"
) -> go.Figure:
    """Add starred markers, each point (label, x, y), labelled by an arrow from the upper left.

    Returns the same figure.
    """
    fig.add_trace(
        go.Scatter(
            x=np.array([p[1] for p in points], dtype=np.float64),
            y=np.array([p[2] for p in points], dtype=np.float64),
            mode="markers",
            text=[html.escape(p[0], quote=False) for p in points],
            marker={"size": 13, "symbol": "star", "color": "black"},
            name=html.escape(name, quote=False),
            hovertemplate="%{text}<extra></extra>",
        )
    )
    for label, x, y in points:
        fig.add_annotation(
            x=np.log10(x),
            y=np.log10(y),
            text=html.escape(label, quote=False),
            showarrow=True,
            arrowhead=2,
            ax=-150,
            ay=-28,
            bgcolor="rgba(255,255,255,0.9)",
            bordercolor="black",
            borderwidth=1,
            font={"size": 11},
        )
    return fig


def legend_band(entries: int, per_line: int = 3) -> tuple[dict, int]:
    """A horizontal legend of ``entries`` in a band of its own at the bottom of a figure, under
    the x axis title (a legend placed in plot fractions lands on that title, or past the
    figure's edge, once its entries wrap): the legend and the band's height in pixels, to add
    to the figure's bottom margin and height. On a phone each entry gets its own line."""
    lines = entries if is_phone() else math.ceil(entries / per_line) + 1
    legend = {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"}
    return legend, LEGEND_LINE_PX * lines


def horizontal_line(fig: go.Figure, y: float, label: str) -> go.Figure:
    """A dotted horizontal line at ``y`` across the plot, labelled at its right end."""
    fig.add_hline(y=y, line={"dash": "dot", "color": "firebrick", "width": 1.5})
    fig.add_annotation(
        xref="paper",
        x=0.01,
        y=np.log10(y),
        text=html.escape(label, quote=False),
        showarrow=False,
        yanchor="bottom",
        xanchor="left",
        font={"color": "firebrick", "size": 11},
    )
    return fig
