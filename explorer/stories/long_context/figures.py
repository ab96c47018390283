"""The Long context page's figures: arrays in, a go.Figure out."""

from __future__ import annotations

import html

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from explorer.figures.lines import legend_band
from explorer.pair.marks import HALO
from explorer.stories.long_context.views import AtDistance, Decay, Measured, Scaled, Wavelengths

COLOURS = pc.qualitative.D3
# Beside its hue every line gets a marker symbol of its own and a dash (the plain dash is kept
# for the reference levels: training length, uniform query), so no line is told by colour alone.
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "triangle-down", "star", "cross",
           "pentagon", "hexagon")  # fmt: skip
DASHES = ("solid", "dot", "dashdot", "longdash", "longdashdot")
PICKED = {"color": HALO, "width": 1.5}  # the picked pair's distance: solid black, as elsewhere
FORMULA_WAVELENGTH = r"\lambda_t = \frac{2\pi}{\theta_t} = 2\pi\,\mathrm{base}^{2t/d}"
FORMULA_DECAY = (
    r"\Bigl|\sum_{t} h_t\, e^{\mathrm{i}\,r\theta_t}\Bigr| \le \max_t |h_{t+1} - h_t|"
    r"\sum_{j=1}^{d/2} |S_j|,\quad S_j = \sum_{t<j} e^{\mathrm{i}\,r\theta_t}"
)
FORMULA_SINK = r"\text{share}_h(n) = \operatorname{mean}_{i \ge n-16} \sum_{j<4} \alpha^h_{ij}"


def _level(y: float, text: str, colour: str = "#555") -> dict:
    return {
        "type": "line", "xref": "x domain", "x0": 0, "x1": 1, "y0": y, "y1": y,
        "line": {"dash": "dash", "color": colour, "width": 1}, "label": {"text": text},
    }  # fmt: skip


def cue(t: int, colour: int | None = None) -> dict:
    """Line ``t``'s colour (``colour``: another index into COLOURS), dash and marker symbol."""
    return {
        "line": {"color": COLOURS[(t if colour is None else colour) % len(COLOURS)],
                 "dash": DASHES[t % len(DASHES)]},
        "marker": {"symbol": SYMBOLS[t % len(SYMBOLS)], "size": 7},
    }  # fmt: skip


def _picked_level(at: AtDistance) -> list[dict]:
    """A solid black level at |j - i| on a wavelength axis (none at j = i: log axis)."""
    if at.distance == 0:
        return []
    level = _level(abs(at.distance), f"|j - i| = {abs(at.distance)}")
    level["label"]["textposition"] = "end"  # the dashed levels are labelled in the middle
    return [{**level, "line": PICKED, "name": "picked distance"}]


def wavelength_figure(w: Wavelengths, at: AtDistance | None = None) -> go.Figure:
    """Each pair's wavelength (log axis), the training length and the page's n dashed; with a
    picked pair, its |j - i| solid black and each pair's angle (j - i) theta_t in the hover."""
    pairs = np.arange(len(w.wavelength))
    inside = w.wavelength <= w.context
    bars = {
        "type": "bar",
        "x": pairs,
        "y": w.wavelength.astype(np.float32),
        # hue and hatching: the pairs that never turn within the training length
        "marker": {"color": np.where(inside, COLOURS[0], COLOURS[1]),
                   "pattern": {"shape": np.where(inside, "", "/")}},
        "name": "wavelength",
        "hovertemplate": "pair %{x}<br>wavelength %{y:.1f} characters<extra></extra>",
    }  # fmt: skip
    if at is not None:
        bars["customdata"] = np.stack([at.angle, at.angle / (2 * np.pi)], 1).astype(np.float32)
        bars["hovertemplate"] = (
            "pair %{x}<br>wavelength %{y:.1f} characters<br>"
            f"rotation at j - i = {at.distance}: %{{customdata[0]:.3g}} rad "
            "(%{customdata[1]:.3g} turns)<extra></extra>"
        )
    data = [bars]
    shapes = [_level(w.context, f"training length {w.context}")]
    if w.n != w.context:
        shapes.append(_level(w.n, f"n = {w.n}", COLOURS[2]))
    if at is not None:
        shapes += _picked_level(at)
    layout = {
        "height": 360,
        "margin": {"l": 60, "r": 10, "t": 20, "b": 50},
        "xaxis": {"title": {"text": "rotary pair t"}},
        "yaxis": {"type": "log", "title": {"text": "wavelength (characters)"}},
        "shapes": shapes,
        "showlegend": False,
    }
    return go.Figure({"data": data, "layout": layout})


def _picked_distance(at: AtDistance, stored: int) -> list[dict]:
    """Solid black verticals at the pair's distance on the decay panels (x = r = i - j, a log
    axis: none at 0): the bound's panel at |j - i| (its size is even in r), the trained panel
    only for a key at or before its query."""
    r = -at.distance
    shapes = []
    for axis, shown in (("", abs(r)), ("2", r)):
        if 0 < shown < stored:
            shapes.append({"type": "line", "x0": shown, "x1": shown, "xref": f"x{axis}",
                           "y0": 0, "y1": 1, "yref": f"y{axis} domain", "line": PICKED,
                           "layer": "above", "name": "picked distance"})  # fmt: skip
    return shapes


def decay_figure(d: Decay, layer: int, at: AtDistance | None = None) -> go.Figure:
    """Two panels: the bound against r at the page's base (and the trained base), and the
    trained model's mean logit per head of ``layer`` against r; the picked pair's distance
    solid black."""
    r = d.distance.astype(np.float32)
    # markers at r = 1, 2, 4, ... only: evenly spread on the log axis, not 1,024 of them
    spots = np.where((r >= 1) & (np.log2(np.maximum(r, 1)) % 1 == 0), 7, 0).astype(np.float32)
    data = [
        {"type": "scatter", "x": r, "y": d.bound, "name": f"bound, base {d.base:,.0f}",
         "line": {"color": COLOURS[0]}, "xaxis": "x", "yaxis": "y"},
        {"type": "scatter", "x": r, "y": d.trained_bound, "name": "bound, trained base",
         "line": {"color": "#888", "dash": "dot"}, "xaxis": "x", "yaxis": "y"},
    ]  # fmt: skip
    for head, curve in enumerate(d.mean_logit[layer]):
        data.append(
            {"type": "scatter", "x": r, "y": curve, "name": f"head {head}", **cue(head, head + 2),
             "mode": "lines+markers", "marker": {**cue(head)["marker"], "size": spots},
             "xaxis": "x2", "yaxis": "y2",
             "hovertemplate": f"head {head}<br>r %{{x}}<br>mean logit %{{y:.3f}}<extra></extra>"}
        )  # fmt: skip
    legend, legend_px = legend_band(len(data))
    edge = {"type": "line", "x0": d.context, "x1": d.context, "y0": 0, "y1": 1,
            "line": {"dash": "dash", "color": "#555", "width": 1}}  # fmt: skip
    layout = {
        "height": 520 + legend_px,
        "margin": {"l": 60, "r": 10, "t": 20, "b": 50 + legend_px},
        "grid": {"rows": 2, "columns": 1, "pattern": "independent", "ygap": 0.2},
        "xaxis": {"type": "log", "title": {"text": "distance r = i - j"}},
        "xaxis2": {"type": "log", "title": {"text": "distance r = i - j"}},
        "yaxis": {"title": {"text": "mean |S_j|"}},
        "yaxis2": {"title": {"text": f"mean logit, layer {layer}"}},
        "shapes": [{**edge, "xref": "x", "yref": "y domain"},
                   {**edge, "xref": "x2", "yref": "y2 domain"},
                   *(_picked_distance(at, len(d.distance)) if at is not None else [])],
        "legend": legend,
    }  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def scaled_figure(s: Scaled, at: AtDistance | None = None) -> go.Figure:
    """Each scaling type's wavelength per pair at factor s (log axis); a picked pair's
    |j - i| solid black."""
    data = [
        {
            "type": "scatter",
            "x": np.arange(len(length)),
            "y": length.astype(np.float32),
            "name": html.escape(name),
            "mode": "lines+markers",
            **cue(t),
            "hovertemplate": f"{html.escape(name)}<br>pair %{{x}}<br>%{{y:.1f}} characters"
            "<extra></extra>",
        }
        for t, (name, length) in enumerate(s.wavelength.items())
    ]
    legend, legend_px = legend_band(len(data))
    layout = {
        "height": 380 + legend_px,
        "margin": {"l": 60, "r": 10, "t": 20, "b": 50 + legend_px},
        "xaxis": {"title": {"text": "rotary pair t"}},
        "yaxis": {"type": "log", "title": {"text": "wavelength (characters)"}},
        "shapes": [
            _level(s.context, f"L0 = {s.context}"),
            _level(s.factor * s.context, f"s·L0 = {s.factor * s.context}", COLOURS[3]),
            *(_picked_level(at) if at is not None else []),
        ],
        "legend": legend,
    }
    return go.Figure({"data": data, "layout": layout})


def _length_layout(m: Measured, title: str, legend_px: int, legend: dict) -> dict:
    return {
        "height": 400 + legend_px,
        "margin": {"l": 60, "r": 10, "t": 20, "b": 60 + legend_px},
        "xaxis": {"type": "log", "title": {"text": "evaluation length (characters)"},
                  "tickvals": m.lengths.tolist(), "ticktext": [str(n) for n in m.lengths]},
        "yaxis": {"title": {"text": title}},
        "shapes": [{"type": "line", "x0": m.context, "x1": m.context, "xref": "x", "y0": 0,
                    "y1": 1, "yref": "y domain", "line": {"dash": "dash", "color": "#555"}}],
        "legend": legend,
    }  # fmt: skip


def zero_shot_figure(m: Measured, rows: list[str]) -> go.Figure:
    """Bits per character against the evaluation length, one line per scaling row."""
    legend, legend_px = legend_band(len(rows))
    data = [
        {"type": "scatter", "x": m.lengths.astype(np.float32), "y": m.zero_shot[row],
         "name": html.escape(row), "mode": "lines+markers", **cue(t),
         "hovertemplate": f"{html.escape(row)}<br>length %{{x}}<br>%{{y:.3f}} bits"
         "<extra></extra>"}
        for t, row in enumerate(rows)
    ]  # fmt: skip
    return go.Figure({"data": data, "layout": _length_layout(m, "bits per character", legend_px,
                                                              legend)})  # fmt: skip


def sink_figure(m: Measured, layer: int) -> go.Figure:
    """The largest head's share on the first characters against n, per model, in ``layer``;
    a uniform query's share dashed."""
    names = list(m.share)
    legend, legend_px = legend_band(len(names) + 1)
    data = [
        {"type": "scatter", "x": m.lengths.astype(np.float32), "y": m.share[name][layer].max(0),
         "name": html.escape(name), "mode": "lines+markers", **cue(t),
         "hovertemplate": f"{html.escape(name)}<br>n %{{x}}<br>%{{y:.4f}}<extra></extra>"}
        for t, name in enumerate(names)
    ]  # fmt: skip
    data.append(
        {"type": "scatter", "x": m.lengths.astype(np.float32), "y": m.uniform, "name": "uniform",
         "mode": "lines", "line": {"color": "#555", "dash": "dash"}}
    )  # fmt: skip
    layout = _length_layout(m, "share on the first 4 characters", legend_px, legend)
    layout["yaxis"]["type"] = "log"
    return go.Figure({"data": data, "layout": layout})
