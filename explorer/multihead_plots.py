"""Figures of the sqrt(d_k) section: curves against d_k, arrays in, a plotly Figure out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.heatmaps import CELL_MAX_PX, ELONGATED
from explorer.screen import figure_width

UNSCALED, SCALED = "#d62728", "#1f77b4"  # the same colour means the same curve in both figures
WIDTH, HEIGHT = 470, 340
ROW_PX = 160  # the least height of a (positions, channels) panel much wider than tall


def channel_cell_px(rows: int, cols: int) -> float | None:
    """The ``cell_px`` for ``panel_grid`` of (positions, channels) panels: when a panel is so
    much wider than tall that the grid gives rows and columns their own cell sizes, rows tall
    enough to read their labels; else None (the grid's own square cells).

    >>> channel_cell_px(8, 128), channel_cell_px(32, 128)
    (20.0, None)
    """
    if max(rows, cols) <= ELONGATED * min(rows, cols):
        return None
    return float(min(CELL_MAX_PX, max(8.0, ROW_PX / rows)))


def _d_k_axis(d_k: np.ndarray) -> dict:
    """A log-2 axis with a tick at every d_k."""
    return {
        "type": "log",
        "title": {"text": "d_k (width of q and k)"},
        "tickvals": d_k,
        "ticktext": [str(int(d)) for d in d_k],
    }


def _layout(fig: go.Figure, d_k: np.ndarray, y_axis: dict) -> go.Figure:
    fig.update_layout(
        width=figure_width(WIDTH),
        height=HEIGHT,
        margin={"l": 60, "r": 10, "t": 10, "b": 50},
        xaxis=_d_k_axis(d_k),
        yaxis=y_axis,
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        hovermode="x unified",
    )
    return fig


def spread_figure(d_k: np.ndarray, unscaled_std: np.ndarray, scaled_std: np.ndarray) -> go.Figure:
    """The standard deviation of q · k and of q · k / sqrt(d_k) against d_k (both axes log),
    with sqrt(d_k) dotted: the unscaled curve follows it, the scaled one stays at 1."""
    d_k = np.asarray(d_k, dtype=np.float32)
    fig = go.Figure()
    for name, y, colour in (
        ("q · k", unscaled_std, UNSCALED),
        ("q · k / √d_k", scaled_std, SCALED),
    ):
        fig.add_trace(
            go.Scatter(
                x=d_k, y=np.asarray(y, dtype=np.float32), name=name, mode="lines+markers",
                line={"color": colour, "width": 2},
                hovertemplate=f"{name}: std %{{y:.3f}}<extra></extra>",
            )
        )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=d_k, y=np.sqrt(d_k), name="√d_k", mode="lines",
            line={"color": "#777", "width": 1, "dash": "dot"}, hoverinfo="skip",
        )
    )  # fmt: skip
    top = float(max(np.max(unscaled_std), np.max(scaled_std), np.sqrt(d_k[-1])))
    ticks = [2.0**p for p in range(-1, int(np.ceil(np.log2(top))) + 1)]
    y_axis = {
        "type": "log",
        "title": {"text": "standard deviation"},
        "tickvals": ticks,
        "ticktext": [f"{t:g}" for t in ticks],
    }
    return _layout(fig, d_k, y_axis)


def saturation_figure(
    d_k: np.ndarray, unscaled_max: np.ndarray, scaled_max: np.ndarray, n: int
) -> go.Figure:
    """The mean largest softmax weight of a row of n keys against d_k, with and without the
    scale; 1 (one key takes everything) and 1/n (an even row) as dotted lines."""
    d_k = np.asarray(d_k, dtype=np.float32)
    fig = go.Figure()
    for name, y, colour in (
        ("softmax(q · k)", unscaled_max, UNSCALED),
        ("softmax(q · k / √d_k)", scaled_max, SCALED),
    ):
        fig.add_trace(
            go.Scatter(
                x=d_k, y=np.asarray(y, dtype=np.float32), name=name, mode="lines+markers",
                line={"color": colour, "width": 2},
                hovertemplate=f"{name}: largest weight %{{y:.3f}}<extra></extra>",
            )
        )  # fmt: skip
    for level, text, where in (
        (1.0, "1: one key takes all", "bottom left"),  # the curves start low on the left
        (1.0 / n, f"1/n = 1/{n}: an even row", "top right"),
    ):
        fig.add_hline(
            y=level, line={"color": "#777", "width": 1, "dash": "dot"},
            annotation_text=text, annotation_position=where,
            annotation_font={"size": 10, "color": "#555"},
        )  # fmt: skip
    y_axis = {"title": {"text": "mean largest weight of a row"}, "range": [0, 1.08]}
    return _layout(fig, d_k, y_axis)
