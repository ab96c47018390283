"""Why attention divides q · k by sqrt(d) (Vaswani et al. 2017, footnote 4): the spread of
the scores and the largest softmax weight of a row, against d, with and without the scale.
A cached view from ``relpos_core.multihead``'s ``score_spread`` and ``softmax_saturation``, its
note, and its two figures (arrays in, a plotly Figure out)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch

from explorer.frame.memory import cached
from explorer.frame.screen import figure_width
from explorer.weights.example import view_array
from relpos_core.multihead import score_spread, softmax_saturation

UNSCALED, SCALED = "#d62728", "#1f77b4"  # the same colour means the same curve in both figures
WIDTH, HEIGHT = 470, 340
CACHE_ENTRIES = 8


D_KS = tuple(2**p for p in range(10))  # 1 .. 512
NOTE_D_K = 256
SPREAD_SAMPLES = 4000  # (q, k) pairs per d
SATURATION_SAMPLES = 256  # rows of n keys per d
KEYS_MIN, KEYS_MAX, KEYS_DEFAULT = 2, 64, 16


def generator(seed: int) -> torch.Generator:
    """The generator of a sqrt(d) view: the view's seed, nothing global."""
    return torch.Generator().manual_seed(seed)


@dataclass(frozen=True)
class ScaleView:
    """Against d_k: the spread of the scores and the largest weight of a row of n keys."""

    d_k: np.ndarray  # (m,)
    unscaled_std: np.ndarray  # (m,) std of q · k
    scaled_std: np.ndarray  # (m,) std of q · k / sqrt(d)
    unscaled_max: np.ndarray  # (m,) mean over rows of max_j softmax_j(q · k_j)
    scaled_max: np.ndarray  # (m,) the same with the scale
    n: int


@cached(CACHE_ENTRIES)
def scale_view(n: int, seed: int) -> ScaleView:
    spread = score_spread(D_KS, SPREAD_SAMPLES, generator(seed))
    saturation = softmax_saturation(D_KS, n, SATURATION_SAMPLES, generator(seed))
    return ScaleView(
        d_k=np.asarray(D_KS, dtype=np.float32),
        unscaled_std=view_array(spread.unscaled_std),
        scaled_std=view_array(spread.scaled_std),
        unscaled_max=view_array(saturation.unscaled_max_weight),
        scaled_max=view_array(saturation.scaled_max_weight),
        n=n,
    )


def scale_note(view: ScaleView, d_k: int = NOTE_D_K) -> str:
    """The spread and the largest weight at one d, read from the curves."""
    at = int(np.flatnonzero(view.d_k == d_k)[0])
    ratio = view.unscaled_std[at] / view.scaled_std[at]
    return (
        f"At d = {d_k} the unscaled scores spread {ratio:.0f}x wider than the scaled ones "
        f"(std {view.unscaled_std[at]:.1f} against {view.scaled_std[at]:.2f}); over {view.n} "
        f"keys the largest weight averages {view.unscaled_max[at]:.2f} of the row unscaled, "
        f"{view.scaled_max[at]:.2f} scaled (an even row gives each key 1/{view.n} = "
        f"{1 / view.n:.2f})."
    )


def _d_k_axis(d_k: np.ndarray) -> dict:
    """A log-2 axis with a tick at every d."""
    return {
        "type": "log",
        "title": {"text": "d (head dimension: the width of q and k)"},
        "tickvals": d_k,
        "ticktext": [str(int(d)) for d in d_k],
    }


def _layout(d_k: np.ndarray, y_axis: dict) -> dict:
    return {
        "width": figure_width(WIDTH),
        "height": HEIGHT,
        "margin": {"l": 60, "r": 10, "t": 10, "b": 50},
        "xaxis": _d_k_axis(d_k),
        "yaxis": y_axis,
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "hovermode": "x unified",
    }


def _two_curves(d_k: np.ndarray, curves: tuple, what: str) -> list[dict]:
    """The unscaled and the scaled curve ((name, y) each), in their colours, as traces."""
    return [
        {
            "type": "scatter",
            "x": d_k,
            "y": np.asarray(y, dtype=np.float32),
            "name": name,
            "mode": "lines+markers",
            "line": {"color": colour, "width": 2},
            "hovertemplate": f"{name}: {what} %{{y:.3f}}<extra></extra>",
        }
        for (name, y), colour in zip(curves, (UNSCALED, SCALED), strict=True)
    ]


def spread_figure(d_k: np.ndarray, unscaled_std: np.ndarray, scaled_std: np.ndarray) -> go.Figure:
    """The standard deviation of q · k and of q · k / sqrt(d) against d (both axes log),
    with sqrt(d) dotted: the unscaled curve follows it, the scaled one stays at 1."""
    d_k = np.asarray(d_k, dtype=np.float32)
    data = _two_curves(d_k, (("q · k", unscaled_std), ("q · k / √d", scaled_std)), "std")
    data.append(
        {
            "type": "scatter",
            "x": d_k,
            "y": np.sqrt(d_k),
            "name": "√d",
            "mode": "lines",
            "line": {"color": "#777", "width": 1, "dash": "dot"},
            "hoverinfo": "skip",
        }
    )
    top = float(max(np.max(unscaled_std), np.max(scaled_std), np.sqrt(d_k[-1])))
    ticks = [2.0**p for p in range(-1, int(np.ceil(np.log2(top))) + 1)]
    y_axis = {
        "type": "log",
        "title": {"text": "standard deviation"},
        "tickvals": ticks,
        "ticktext": [f"{t:g}" for t in ticks],
    }
    return go.Figure({"data": data, "layout": _layout(d_k, y_axis)})


def saturation_figure(
    d_k: np.ndarray, unscaled_max: np.ndarray, scaled_max: np.ndarray, n: int
) -> go.Figure:
    """The mean largest softmax weight of a row of n keys against d, with and without the
    scale; 1 (one key takes everything) and 1/n (an even row) as dotted lines."""
    d_k = np.asarray(d_k, dtype=np.float32)
    curves = (("softmax(q · k)", unscaled_max), ("softmax(q · k / √d)", scaled_max))
    data = _two_curves(d_k, curves, "largest weight")
    line = {"color": "#777", "width": 1, "dash": "dot"}
    font = {"size": 10, "color": "#555"}
    shapes, notes = [], []
    for level, text, (x, xanchor, yanchor) in (
        (1.0, "1: one key takes all", (0, "left", "top")),  # the curves start low on the left
        (1.0 / n, f"1/n = 1/{n}: an even row", (1, "right", "bottom")),
    ):
        shapes.append(
            {
                "type": "line",
                "xref": "x domain",
                "x0": 0,
                "x1": 1,
                "yref": "y",
                "y0": level,
                "y1": level,
                "line": line,
            }
        )
        notes.append(
            {
                "text": text,
                "xref": "x domain",
                "x": x,
                "xanchor": xanchor,
                "yref": "y",
                "y": level,
                "yanchor": yanchor,
                "showarrow": False,
                "font": font,
            }
        )
    y_axis = {"title": {"text": "mean largest weight of a row"}, "range": [0, 1.08]}
    layout = {**_layout(d_k, y_axis), "shapes": shapes, "annotations": notes}
    return go.Figure({"data": data, "layout": layout})
