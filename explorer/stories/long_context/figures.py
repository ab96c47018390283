"""The Long context page's figures: arrays in, a go.Figure out."""

from __future__ import annotations

import html

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from explorer.figures.lines import legend_band
from explorer.stories.long_context.views import Decay, Measured, Scaled, Wavelengths

COLOURS = pc.qualitative.D3
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


def wavelength_figure(w: Wavelengths) -> go.Figure:
    """Each pair's wavelength (log axis), the training length and the page's n dashed."""
    pairs = np.arange(len(w.wavelength))
    inside = w.wavelength <= w.context
    data = [
        {
            "type": "bar",
            "x": pairs,
            "y": w.wavelength.astype(np.float32),
            "marker": {"color": np.where(inside, COLOURS[0], COLOURS[1])},
            "name": "wavelength",
            "hovertemplate": "pair %{x}<br>wavelength %{y:.1f} characters<extra></extra>",
        }
    ]
    shapes = [_level(w.context, f"training length {w.context}")]
    if w.n != w.context:
        shapes.append(_level(w.n, f"n = {w.n}", COLOURS[2]))
    layout = {
        "height": 360,
        "margin": {"l": 60, "r": 10, "t": 20, "b": 50},
        "xaxis": {"title": {"text": "rotary pair t"}},
        "yaxis": {"type": "log", "title": {"text": "wavelength (characters)"}},
        "shapes": shapes,
        "showlegend": False,
    }
    return go.Figure({"data": data, "layout": layout})


def decay_figure(d: Decay, layer: int) -> go.Figure:
    """Two panels: the bound against r at the page's base (and the trained base), and the
    trained model's mean logit per head of ``layer`` against r."""
    r = d.distance.astype(np.float32)
    data = [
        {"type": "scatter", "x": r, "y": d.bound, "name": f"bound, base {d.base:,.0f}",
         "line": {"color": COLOURS[0]}, "xaxis": "x", "yaxis": "y"},
        {"type": "scatter", "x": r, "y": d.trained_bound, "name": "bound, trained base",
         "line": {"color": "#888", "dash": "dot"}, "xaxis": "x", "yaxis": "y"},
    ]  # fmt: skip
    for head, curve in enumerate(d.mean_logit[layer]):
        data.append(
            {"type": "scatter", "x": r, "y": curve, "name": f"head {head}",
             "line": {"color": COLOURS[(head + 2) % len(COLOURS)]}, "xaxis": "x2", "yaxis": "y2",
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
                   {**edge, "xref": "x2", "yref": "y2 domain"}],
        "legend": legend,
    }  # fmt: skip
    return go.Figure({"data": data, "layout": layout})


def scaled_figure(s: Scaled) -> go.Figure:
    """Each scaling type's wavelength per pair at factor s (log axis)."""
    data = [
        {
            "type": "scatter",
            "x": np.arange(len(length)),
            "y": length.astype(np.float32),
            "name": html.escape(name),
            "mode": "lines+markers",
            "line": {"color": COLOURS[t % len(COLOURS)], "dash": "dot" if name == "none" else None},
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
         "name": html.escape(row), "mode": "lines+markers",
         "line": {"color": COLOURS[t % len(COLOURS)]},
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
         "name": html.escape(name), "mode": "lines+markers",
         "line": {"color": COLOURS[t % len(COLOURS)]},
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
