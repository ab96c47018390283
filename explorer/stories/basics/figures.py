"""The heatmaps of the Attention basics page: the copy model's alignment, its additive and
dot-product scores side by side, and the worked example's matrices. Arrays in, figures out;
the panels come as rows of ``(key, figure, shape)``, one row per line of columns on the page.

Each figure names what its axes index (:func:`indexed`): output or query i, input or key j, or a
channel, so that the sidebar's picked pair is outlined where a figure holds it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.plots import heatmap
from explorer.pair.marks import axes_meta
from explorer.stories.basics.views import CopyView, ExampleView

Panel = tuple[str, go.Figure, tuple[int, ...]]  # chart key, figure, shape


def inputs_of(copy: CopyView) -> list[str]:
    """Input labels: position and item."""
    return [f"{j}: {x}" for j, x in enumerate(copy.items)]


def outputs_of(copy: CopyView) -> list[str]:
    """Output labels: position and the item predicted."""
    return [f"{i}: → {y}" for i, y in enumerate(copy.predicted)]


def queries_of(example: ExampleView) -> list[str]:
    return [f"q{i}" for i in range(example.weights.shape[0])]


def keys_of(example: ExampleView) -> list[str]:
    return [f"k{j}" for j in range(example.weights.shape[1])]


def indexed(
    fig: go.Figure, row_symbol: str, col_symbol: str, within: dict | None = None
) -> go.Figure:
    """Say what the rows and columns of ``fig``'s heatmap index (``"i"``, ``"j"`` or another
    symbol), so that the picked pair is outlined on it (:mod:`explorer.pair.marks`; ``within``:
    the queries and keys of the example it belongs to). A click on these figures picks
    nothing: their positions are not the sidebar's n."""
    trace = fig.data[0]
    rows, cols = len(trace.y), len(trace.x)
    trace.meta = axes_meta(row_symbol, col_symbol, (0, rows - 1), (0, cols - 1), within)
    return fig


def two_decimals(values: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda w: f"{w:.2f}")(values)


def numbers(values: np.ndarray) -> np.ndarray:
    """Cell text: 4 significant digits, and 0 for float rounding (|x| below 1e-9 of the
    panel's largest).

    >>> numbers(np.array([[1e-12, 2.0, 1 / 3]])).tolist()
    [['0', '2', '0.3333']]
    """
    tiny = 1e-9 * max(float(np.abs(values).max()), 1e-30)
    return np.vectorize(lambda x: "0" if abs(x) <= tiny else f"{x:.4g}")(values)


def alignment_figure(copy: CopyView) -> go.Figure:
    """alpha: the weight each output puts on each input, every cell written."""
    fig = heatmap(
        copy.weights,
        title="α, the weights each output puts on each input",
        x_title="input j: item",
        y_title="output i: predicted item",
        x_labels=inputs_of(copy),
        y_labels=outputs_of(copy),
        scale="weights",
        cell_text=two_decimals(copy.weights),
        height=260,
    )
    return indexed(fig, "i", "j")


def score_panels(copy: CopyView) -> list[list[Panel]]:
    """Additive and dot-product scores in one row, their weights in the next."""
    panels = {
        "additive scores e": copy.additive,
        "dot-product scores e": copy.dot,
        "additive weights α": copy.weights,
        "dot-product weights α": copy.dot_weights,
    }
    rows = (
        ("additive scores e", "dot-product scores e"),
        ("additive weights α", "dot-product weights α"),
    )
    inputs = inputs_of(copy)
    drawn = []
    for row in rows:
        line = []
        for name in row:
            values, is_weight = panels[name], "weights" in name
            fig = heatmap(
                values,
                title=name,
                x_title="input j",
                y_title="output i",
                x_labels=inputs,
                y_labels=[f"{i}" for i in range(len(values))],
                scale="weights" if is_weight else "diverging",
                cell_text=two_decimals(values),
                height=240,
            )
            key = "basics_" + name.replace(" ", "_").replace("α", "alpha")
            line.append((key, indexed(fig, "i", "j"), values.shape))
        drawn.append(line)
    return drawn


def _matrix(
    key: str,
    values: np.ndarray,
    title: str,
    axes: tuple[str, list[str], str, list[str]],
    symbols: tuple[str, str],
    within: dict,
    scale: str = "diverging",
) -> Panel:
    """One small matrix of the worked example, every cell written; ``axes``: the x title and
    labels, then the y title and labels; ``symbols``: what its rows and columns index;
    ``within``: the example's queries and keys (a pair outside them marks no row of K)."""
    x_title, x_labels, y_title, y_labels = axes
    fig = heatmap(values, title=title, x_title=x_title, y_title=y_title, x_labels=x_labels,
                  y_labels=y_labels, scale=scale, cell_text=numbers(values),
                  height=250)  # fmt: skip
    return key, indexed(fig, *symbols, within), values.shape


def example_panels(example: ExampleView) -> list[list[Panel]]:
    """Q, K, V in one row; the logits, the weights and the output in the next."""
    queries, keys = queries_of(example), keys_of(example)
    within = {"i": (0, len(queries) - 1), "j": (0, len(keys) - 1)}
    top = [  # a row of Q is query i's, a row of K or V key j's
        _matrix(f"example_{name.lower()}", values, name,
                ("channel", [f"{c}" for c in range(values.shape[1])], "row", rows),
                (symbol, "channel"), within)
        for name, values, rows, symbol in (
            ("Q", example.q, queries, "i"), ("K", example.k, keys, "j"),
            ("V", example.v, keys, "j"),
        )
    ]  # fmt: skip
    channels = [f"{c}" for c in range(example.v.shape[1])]
    bottom = [
        _matrix("example_logits", example.logits, "logits Q Kᵀ / √d",
                ("key j", keys, "query i", queries), ("i", "j"), within),
        _matrix("example_weights", example.weights, "weights α",
                ("key j", keys, "query i", queries), ("i", "j"), within, "weights"),
        _matrix("example_output", example.output, "output α V",
                ("channel", channels, "query i", queries), ("i", "channel"), within),
    ]  # fmt: skip
    return [top, bottom]
