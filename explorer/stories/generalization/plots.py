"""Figures for the trained models: arrays in, a plotly ``go.Figure`` out. Never shows or saves.

Heatmaps of tables and their cosines come from ``explorer.figures.plots.heatmap``, grids of
attention weights from ``explorer.figures.heatmaps``; this module adds the two kinds of chart
they do not draw: accuracy curves over sequence length, and an input / target / prediction
strip.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, mark_position, panel_grid
from explorer.figures.lines import legend_band
from explorer.figures.palettes import active
from explorer.figures.plots import axis_suffix, heatmap
from explorer.figures.scales import Scale, make_scale
from explorer.figures.ticks import CHAR_EM, axis_ticks
from explorer.frame.screen import figure_width
from explorer.pair.marks import axes_meta

MODEL_COLOURS = {"relative": "#1f77b4", "absolute": "#d62728"}
OTHER_COLOUR = "#7f7f7f"
RIGHT_MARK, WRONG_MARK = "✓", "✗"  # beside each predicted id: never said by colour alone


def _layout(title: str, x_title: str, y_title: str, height: int, entries: int) -> dict:
    legend, legend_px = legend_band(entries, per_line=2)
    return {
        "title": {"text": html.escape(title, quote=False), "x": 0, "font": {"size": 14}},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}},
        "height": height + legend_px,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10 + legend_px},
        "legend": legend,
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
    layout = _layout(title, "sequence length", "accuracy", 380, len(data))
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
    layout = _layout("training loss", "step", "cross-entropy", 320, len(data))
    layout["yaxis"]["type"] = "log"
    return go.Figure({"data": data, "layout": layout})


STRIP_LABELS_PX = 80  # the strip's left margin: "prediction" in 12 px type
STRIP_FONT_PX = 10  # the ids written in the cells
STRIP_ROW_PX, STRIP_AXIS_PX = 22, 40  # a row of cells; a line's position ticks above it


def strip_lines(values: Sequence[str], n: int, max_width: int) -> tuple[int, float]:
    """(positions per line, cell width) of the input / target / prediction strip: one line
    shared by the ``n`` positions when each cell still holds its widest id in 10 px type and a
    gap, else as many lines as that takes (ids in narrower cells ran together, "15109 114108").
    """
    widest = max((len(v) for v in values), default=1)
    least = CHAR_EM * STRIP_FONT_PX * widest + 6
    room = max_width - STRIP_LABELS_PX - 10
    lines = math.ceil(n / max(1, int(room // least)))
    per_line = math.ceil(n / lines)
    return per_line, min(28.0, room / per_line)


def prediction_figure(
    tokens: np.ndarray, target: np.ndarray, prediction: np.ndarray, blank: int = 0
) -> go.Figure:
    """Three rows over the positions: input, target, prediction, ids written in the cells;
    a prediction cell is marked ✓ and coloured (the palette's ``right``: light green, or sky blue
    in the colour-blind safe palette) where it equals the target, ✗ and coloured ``wrong``
    (salmon, or vermillion) where not. ``blank`` shows as "·".
    A long strip wraps onto several lines (see :func:`strip_lines`); trace t is line t.
    """
    tokens, target, prediction = (
        np.asarray(a).astype(np.int64) for a in (tokens, target, prediction)
    )
    n = tokens.shape[0]
    correct = (prediction == target).astype(np.float32)
    z = np.stack([np.full(n, np.nan), np.full(n, np.nan), correct]).astype(np.float32)

    def text(row: np.ndarray) -> list[str]:
        return ["·" if t == blank else str(int(t)) for t in row]

    marks = np.where(correct > 0, RIGHT_MARK, WRONG_MARK)
    marked = [f"{t}{m}" for t, m in zip(text(prediction), marks, strict=True)]
    rows = np.array([text(tokens), text(target), marked], dtype=object)
    palette = active()
    per_line, cell_px = strip_lines(list(rows.ravel()), n, figure_width(980))
    line_px = 3 * STRIP_ROW_PX + STRIP_AXIS_PX
    lines = math.ceil(n / per_line)
    plot_h = lines * line_px
    data, layout = [], {}
    for t, a in enumerate(range(0, n, per_line)):
        b, axis = min(n, a + per_line), axis_suffix(t)
        data.append(
            {
                "type": "heatmap", "z": z[:, a:b], "x": np.arange(a, b), "y": np.arange(3),
                "xaxis": f"x{axis}", "yaxis": f"y{axis}",
                "colorscale": [[0, palette.wrong], [1, palette.right]], "zmin": 0.0, "zmax": 1.0,
                "showscale": False, "xgap": 1, "ygap": 1, "text": rows[:, a:b].tolist(),
                "texttemplate": "%{text}", "textfont": {"size": STRIP_FONT_PX},
                "hovertemplate": "position %{x}<br>%{text}<extra></extra>",
            }
        )  # fmt: skip
        top = 1 - (t * line_px + STRIP_AXIS_PX) / plot_h
        layout[f"xaxis{axis}"] = {
            "title": {"text": "position i" if t == 0 else ""},
            "side": "top",
            "range": [a - 0.5, a + per_line - 0.5],  # every line as long: cells line up
            "domain": [0, 1],
            "anchor": f"y{axis}",
            **axis_ticks(None, b - a, a, cell_px * (b - a), vertical=False),
        }
        layout[f"yaxis{axis}"] = {
            "tickmode": "array",
            "tickvals": [0, 1, 2],
            "ticktext": ["input", "target", "prediction"],
            "range": [2.5, -0.5],
            "domain": [max(0.0, top - 3 * STRIP_ROW_PX / plot_h), top],
            "anchor": f"x{axis}",
        }
    layout.update(
        width=int(STRIP_LABELS_PX + 10 + cell_px * per_line),
        height=plot_h + 30,
        margin={"l": STRIP_LABELS_PX, "r": 10, "t": 20, "b": 10},
        plot_bgcolor="#ffffff",
    )
    return go.Figure({"data": data, "layout": layout})


def table_rows(fig: go.Figure, columns: str) -> go.Figure:
    """Name ``fig``'s rows the table rows clip(j - i, k) + k of the model's own k, so that the
    picked pair's row is outlined (:mod:`explorer.pair.marks`); ``columns``: what they index."""
    trace = fig.data[0]
    rows, cols = len(trace.y), len(trace.x)
    k = (rows - 1) // 2
    trace.meta = axes_meta("row", columns, (0, rows - 1), (0, cols - 1), clip=k)
    return fig


def table_figure(name: str, table: np.ndarray, layer: int, distances: Sequence[str]) -> go.Figure:
    """A distance table ``name`` (``w^K``, ``w^V``) of one layer: a row per distance."""
    fig = heatmap(
        table,
        title=f"{name}, layer {layer}",
        x_title="channel",
        y_title="distance j - i",
        y_labels=distances,
    )
    return table_rows(fig, "channel")


def cosine_figure(name: str, cos: np.ndarray, distances: Sequence[str]) -> go.Figure:
    """The cosine similarity between the vectors of every two distances of table ``name``."""
    fig = heatmap(
        cos,
        title=f"cosine similarity between distances of {name}",
        x_title="distance",
        y_title="distance",
        x_labels=distances,
        y_labels=distances,
        zrange=(-1.0, 1.0),
    )
    return table_rows(fig, "other distance")  # the pair's row: its distance against every one


def attention_grids(weights: np.ndarray, train_max_len: int) -> tuple[list[go.Figure], Scale]:
    """One figure per layer of every head's weights (layers, heads, n, n), all on one scale;
    when n is past ``train_max_len``, a dashed line where the positions no training input had
    begin."""
    layers, heads, n = weights.shape[:3]
    scale = make_scale("weights", list(weights.reshape(-1, n, n)), n_keys=n)
    figures = []
    for layer in range(layers):
        panels = [
            Panel(weights[layer, head], title=f"layer {layer}, head {head}")
            for head in range(heads)
        ]
        fig = panel_grid(panels, scale, columns=heads, image_side=256)
        if n > train_max_len:
            mark_position(fig, heads, train_max_len, f"trained up to {train_max_len}")
        figures.append(fig)
    return figures, scale
