"""Figures for the trained models: arrays in, a plotly ``go.Figure`` out. Never shows or saves.

Heatmaps of tables and attention weights come from ``explorer.figures.plots.heatmap``; this module
adds the two kinds of chart it does not draw: accuracy curves over sequence length, and an
input / target / prediction strip.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

MODEL_COLOURS = {"relative": "#1f77b4", "absolute": "#d62728"}
OTHER_COLOUR = "#7f7f7f"
RIGHT_COLOUR, WRONG_COLOUR = "#c7e9c0", "#fcbba1"


def _layout(title: str, x_title: str, y_title: str, height: int) -> dict:
    return {
        "title": {"text": html.escape(title, quote=False), "x": 0, "font": {"size": 14}},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "legend": {"orientation": "h", "y": -0.25},
    }


def generalization_figure(
    lengths: np.ndarray,
    curves: Mapping[str, Mapping[str, np.ndarray]],
    train_max_len: int,
    train_min_len: int = 1,
    *,
    title: str = "accuracy by sequence length",
) -> go.Figure:
    """Accuracy against evaluation length, one colour per model: token accuracy solid,
    sequence accuracy dotted. ``curves[model][metric]`` has one value per length; the shaded
    band marks the lengths seen in training, ``train_min_len``..``train_max_len``."""
    lengths = np.asarray(lengths)
    data = []
    for model, metrics in curves.items():
        colour = MODEL_COLOURS.get(model, OTHER_COLOUR)
        for metric, dash in (("token_acc", "solid"), ("seq_acc", "dot")):
            if metric not in metrics:
                continue
            label = f"{model}, {'token' if metric == 'token_acc' else 'sequence'} accuracy"
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": label,
                    "x": lengths,
                    "y": np.asarray(metrics[metric], dtype=np.float32),
                    "line": {"color": colour, "dash": dash},
                    "hovertemplate": "length %{x}<br>%{y:.3f}<extra>" + label + "</extra>",
                }
            )
    layout = _layout(title, "sequence length", "accuracy", 380)
    layout["yaxis"]["range"] = [-0.02, 1.02]
    layout["shapes"] = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": train_min_len,
            "x1": train_max_len,
            "y0": 0,
            "y1": 1,
            "fillcolor": "rgba(0,0,0,0.06)",
            "line": {"width": 0},
            "layer": "below",
        }
    ]
    layout["annotations"] = [
        {
            "x": train_max_len,
            "y": 1,
            "xref": "x",
            "yref": "paper",
            "text": "longest training length",
            "showarrow": False,
            "xanchor": "right",
            "yanchor": "bottom",
            "font": {"size": 11},
        }
    ]
    return go.Figure({"data": data, "layout": layout})


def loss_figure(curves: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> go.Figure:
    """Training loss (log scale) against step: ``curves[model] = (steps, losses)``."""
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "name": model,
            "x": np.asarray(steps),
            "y": np.asarray(losses, dtype=np.float32),
            "line": {"color": MODEL_COLOURS.get(model, OTHER_COLOUR)},
        }
        for model, (steps, losses) in curves.items()
    ]
    layout = _layout("training loss", "step", "cross-entropy", 320)
    layout["yaxis"]["type"] = "log"
    return go.Figure({"data": data, "layout": layout})


def prediction_figure(
    tokens: np.ndarray, target: np.ndarray, prediction: np.ndarray, blank: int = 0
) -> go.Figure:
    """Three rows over the positions: input, target, prediction, ids written in the cells;
    prediction cells green where they equal the target, red where not. ``blank`` shows as "·".
    """
    tokens, target, prediction = (
        np.asarray(a).astype(np.int64) for a in (tokens, target, prediction)
    )
    n = tokens.shape[0]
    correct = (prediction == target).astype(np.float32)
    z = np.stack([np.full(n, np.nan), np.full(n, np.nan), correct]).astype(np.float32)

    def text(row: np.ndarray) -> list[str]:
        return ["·" if t == blank else str(int(t)) for t in row]

    trace = {
        "type": "heatmap",
        "z": z,
        "x": np.arange(n),
        "y": np.arange(3),
        "colorscale": [[0, WRONG_COLOUR], [1, RIGHT_COLOUR]],
        "zmin": 0.0,
        "zmax": 1.0,
        "showscale": False,
        "xgap": 1,
        "ygap": 1,
        "text": [text(tokens), text(target), text(prediction)],
        "texttemplate": "%{text}",
        "textfont": {"size": 10 if n <= 48 else 8},
        "hovertemplate": "position %{x}<br>%{text}<extra></extra>",
    }
    layout = {
        "xaxis": {"title": {"text": "position i"}, "side": "top", "range": [-0.5, n - 0.5]},
        "yaxis": {
            "tickmode": "array",
            "tickvals": [0, 1, 2],
            "ticktext": ["input", "target", "prediction"],
            "range": [2.5, -0.5],
        },
        "height": 190,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "plot_bgcolor": "#ffffff",
    }
    return go.Figure({"data": [trace], "layout": layout})
