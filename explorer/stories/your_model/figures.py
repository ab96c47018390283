"""The page's charts: each head's bias against the distance r = j - i (T5's bucket edges marked,
ALiBi's lines), the matrix the logits receive, Shaw's tables and their norms by distance, and
RoPE's wavelengths against the page's n. Arrays in, plotly figures out."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.lines import horizontal_line
from explorer.figures.scales import colour_range, make_scale
from explorer.stories.your_model.views import RopeView, ShawView, T5View

EDGES_MAX = 64  # bucket edges drawn at most (beyond: the caption says how many are left out)
DISTANCE = "distance r = j - i (key - query)"
FUTURE = "rgba(120,120,120,0.12)"


def _lines(
    distance: np.ndarray, curves: dict[str, np.ndarray], y_title: str, *, step: bool
) -> go.Figure:
    fig = go.Figure()
    for name, y in curves.items():
        fig.add_trace(
            go.Scatter(
                x=distance,
                y=np.asarray(y, np.float64),
                name=html.escape(name),
                mode="lines",
                line={"shape": "hv" if step else "linear", "width": 1.6},
                hovertemplate=f"{html.escape(name)}<br>r=%{{x}}<br>%{{y:.4g}}<extra></extra>",
            )
        )
    fig.update_layout(
        height=380,
        margin={"l": 60, "r": 10, "t": 30, "b": 50},
        xaxis_title=DISTANCE,
        yaxis_title=y_title,
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def t5_figure(view: T5View) -> tuple[go.Figure, str]:
    """Each head's b_h[bucket(r)] against r, grouped by shape in the legend; the edges between
    buckets dotted, each bucket's number above it; a decoder's future shaded."""
    curves = {f"head {h} · {view.shapes[h]}": view.bias[h] for h in view.order}
    fig = _lines(view.distance, curves, "bias b_h[bucket(r)] (logit units)", step=True)
    edges = [first - 0.5 for _, first, _ in view.spans[1:]]
    shapes = [
        {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
         "line": {"dash": "dot", "width": 1, "color": "#888"}}
        for x in edges[:EDGES_MAX]
    ]  # fmt: skip
    labels = [
        {"x": (first + last) / 2, "y": 1.0, "xref": "x", "yref": "paper", "text": str(bucket),
         "showarrow": False, "yanchor": "bottom", "font": {"size": 9, "color": "#666"}}
        for bucket, first, last in view.spans
    ] if len(view.spans) <= 40 else []  # fmt: skip
    if not view.stack.bidirectional and view.distance[-1] > 0:
        shapes.append(
            {"type": "rect", "xref": "x", "yref": "paper", "x0": 0.5, "x1": view.distance[-1] + 0.5,
             "y0": 0, "y1": 1, "fillcolor": FUTURE, "line": {"width": 0}}
        )  # fmt: skip
    fig.update_layout(shapes=shapes, annotations=labels, margin={"t": 40})
    reach = 2 * view.stack.max_distance  # past max_distance every distance is the last bucket
    zoomed = view.distance[-1] > reach
    if zoomed:
        fig.update_xaxes(range=[-reach - 0.5, reach + 0.5])
    left_out = len(edges) - EDGES_MAX
    caption = (
        f"{len(view.spans)} runs of one bucket along r (numbers above the plot, edges dotted"
        + (f"; the first {EDGES_MAX} edges drawn" if left_out > 0 else "")
        + ")."
        + (
            f" Drawn for |r| <= {reach}, twice max_distance = {view.stack.max_distance}: every "
            "distance beyond is in its direction's last bucket (double-click the chart for all "
            f"{len(view.distance)} distances)."
            if zoomed
            else ""
        )
        + (
            " Shaded: keys after the query, which a decoder's causal mask hides (T5 puts them "
            "in bucket 0)."
            if not view.stack.bidirectional
            else ""
        )
    )
    return fig, caption


def shown_matrix(view: T5View, head: int, size: int) -> np.ndarray:
    """What head ``head``'s logits receive, b_h[bucket(j - i)], for the first ``size`` queries
    and keys; a decoder's keys after the query masked (NaN)."""
    z = view.matrix(head, size)
    if not view.stack.bidirectional:
        z = np.where(np.tril(np.ones_like(z, bool)), z, np.nan)  # the causal mask
    return z


def matrix_figure(z: np.ndarray, view: T5View, head: int) -> tuple[go.Figure, str]:
    """``shown_matrix`` on a diverging scale centred at 0."""
    scale = make_scale("diverging", [z], zrange=colour_range([z]).zrange)
    panel = Panel(z, title=f"head {head}: b[bucket(j - i)]")
    fig = panel_grid([panel], scale, max_width=460, image_side=256)
    blank = " Blank: keys after the query (masked)." if not view.stack.bidirectional else ""
    return fig, scale.caption + blank


def shaw_tables_figure(view: ShawView) -> tuple[go.Figure, str]:
    """Each table's rows w_r, r = -k..k, against the channel."""
    k = view.layer.k
    rows = [f"{r:+d}" if r else "0" for r in range(-k, k + 1)]
    panels = [
        Panel(t.astype(np.float64), title=name, x_title="channel c", y_title="row: distance r",
              x_symbol="c", y_symbol="r", y_labels=rows)
        for name, t in view.tables.items()
    ]  # fmt: skip
    scale = make_scale("diverging", [p.z for p in panels])
    return panel_grid(panels, scale, columns=2, max_width=720), scale.caption


def shaw_norms_figure(view: ShawView) -> go.Figure:
    """|w_clip(r, k)| against r: flat beyond ±k, where the clip repeats the edge rows."""
    curves = {f"|{name}_clip(r, k)|": norms for name, norms in view.norms.items()}
    fig = _lines(view.distance, curves, "norm of the row used", step=True)
    k = view.layer.k
    for x in (-k, k):
        if abs(x) <= view.distance[-1]:
            fig.add_vline(x=x, line={"dash": "dot", "color": "firebrick", "width": 1})
    return fig


def alibi_figure(distance: np.ndarray, slopes: np.ndarray, values: np.ndarray) -> go.Figure:
    curves = {f"head {h}: m = {m:.4g}": values[h] for h, m in enumerate(slopes)}
    return _lines(distance, curves, "bias -m_h |r| (logit units)", step=False)


def rope_figure(view: RopeView, n: int) -> go.Figure:
    """Each rotary pair's wavelength (log scale) beside the page's n and the configured length."""
    pairs = np.arange(len(view.wavelength))
    fig = go.Figure(
        go.Scatter(
            x=pairs,
            y=view.wavelength,
            mode="markers+lines",
            name="wavelength",
            hovertemplate="pair %{x}<br>one turn every %{y:.4g} positions<extra></extra>",
        )
    )
    fig.update_layout(
        height=360,
        margin={"l": 60, "r": 10, "t": 20, "b": 50},
        xaxis={"title": "rotary pair t", **({"dtick": 1} if len(pairs) <= 16 else {})},
        yaxis={"type": "log", "title": "wavelength 2π/θ_t (positions)"},
        showlegend=False,
    )
    marks = {"this page's n": n}
    if view.rope.max_positions:
        marks["the config's max_position_embeddings"] = view.rope.max_positions
    values = [*view.wavelength, *marks.values()]
    low, high = np.log10(min(values)) - 0.3, np.log10(max(values)) + 0.3
    fig.update_yaxes(range=[low, high])  # set: a line's label on a log axis would stretch it
    for label, y in marks.items():
        horizontal_line(fig, y, f"{label} = {y}")
    return fig
