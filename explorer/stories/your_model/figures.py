"""The page's charts: each head's bias against the distance r = j - i (T5's bucket edges marked,
ALiBi's lines), the matrix the logits receive, Shaw's tables and their norms by distance, and
RoPE's wavelengths against the page's n. Arrays in, plotly figures out."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.lines import horizontal_line
from explorer.figures.numbers import count, percent, plural
from explorer.figures.scales import colour_range, make_scale
from explorer.frame.screen import is_phone
from explorer.pair.definition import Pair
from explorer.pair.marks import HALO
from explorer.stories.your_model.bucket_labels import bucket_labels, runs
from explorer.stories.your_model.views import RopeView, ShawView, T5View
from relpos_core import by_distance as bd

DISTANCE = "distance r = j - i (key - query)"
FUTURE = "rgba(120,120,120,0.12)"
UNTRAINED = "rgba(230,159,0,0.18)"  # Okabe-Ito orange, light: the buckets training never reached
# Bucket numbers above the T5 chart: 9 px digits (about 5.6 px wide) and a gap, placed for the
# narrowest plot the chart gets (a phone's 350 px, a wide page's column at a 1024 px window)
# less its 70 px of side margins.
LABEL_FONT_PX = 9
PHONE_PLOT_PX, WIDE_PLOT_PX = 280, 480
EDGE_GAP_PX = 3  # bucket edges dotted at least this far apart
REGION_CHAR_PX = 6  # a 10 px label's characters, for a shaded region's words


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
    # the legend under the axis title, from the figure's foot: on a phone its long entries take
    # a row each, so the foot holds them instead of the plot's lower part
    phone = is_phone()
    fig.update_layout(
        height=480 if phone else 380,
        margin={"l": 60, "r": 10, "t": 30, "b": 50 + (24 * len(curves) if phone else 40)},
        xaxis_title=DISTANCE,
        yaxis_title=y_title,
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
    )
    return fig


def t5_figure(view: T5View, pair: Pair | None = None) -> tuple[go.Figure, str]:
    """Each head's b_h[bucket(r)] against r, grouped by shape in the legend with its near share;
    the edges between buckets dotted, bucket numbers above where they fit; distances whose bucket
    was never trained shaded and labelled; a decoder's future shaded and labelled."""
    near = view.near
    low, high = shown_range(view, pair)
    inside = drawn(view, pair)
    curves = {
        f"head {h} · {view.shapes[h]} ({percent(near[h])} within |r| ≤ {bd.LOCAL_REACH})": (
            view.bias[h][inside]
        )
        for h in view.order
    }
    fig = _lines(view.distance[inside], curves, "bias b_h[bucket(r)] (logit units)", step=True)
    for trace in fig.data:  # each distance's bucket in its hover
        trace.customdata = view.bucket[inside].astype(np.int16)
        trace.hovertemplate = trace.hovertemplate.replace(
            "<br>%{y", "<br>bucket %{customdata}<br>%{y"
        )
    plot_px = PHONE_PLOT_PX if is_phone() else WIDE_PLOT_PX
    per_unit = plot_px / (high - low)
    edges = [first - 0.5 for _, first, _ in view.spans[1:] if low < first - 0.5 < high]
    dotted: list[float] = []  # edges EDGE_GAP_PX apart: denser ones grey the lines out
    for x in edges:
        if not dotted or (x - dotted[-1]) * per_unit >= EDGE_GAP_PX:
            dotted.append(x)
    shapes = [
        {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1,
         "line": {"dash": "dot", "width": 1, "color": "#888"}}
        for x in dotted
    ]  # fmt: skip
    labels = bucket_labels(view.spans, low, high, plot_px)
    annotations = [
        {"x": x, "y": 1.0, "xref": "x", "yref": "paper", "text": str(b), "showarrow": False,
         "yanchor": "bottom", "font": {"size": LABEL_FONT_PX, "color": "#555"}}
        for b, x in labels
    ]  # fmt: skip
    regions = []  # (first r, last r, fill, words), shaded under the lines
    untrained = view.untrained_distance
    if untrained is not None:
        regions += [(a, b, UNTRAINED, "never trained") for a, b in runs(view.distance, untrained)]
    if not view.stack.bidirectional and view.distance[-1] > 0:
        regions.append((1, int(view.distance[-1]), FUTURE, "masked: after the query"))
    for first, last, fill, words in regions:
        x0, x1 = max(first - 0.5, low), min(last + 0.5, high)
        if x0 >= x1:
            continue
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": x0, "x1": x1,
                       "y0": 0, "y1": 1, "fillcolor": fill, "line": {"width": 0},
                       "layer": "below"})  # fmt: skip
        upright = (x1 - x0) * per_unit >= REGION_CHAR_PX * len(words) + 8
        annotations.append(  # a region too narrow for its words has them turned upright
            {"x": (x0 + x1) / 2, "y": 0.02 if upright else 0.5, "xref": "x", "yref": "paper",
             "text": words, "showarrow": False, "yanchor": "bottom" if upright else "middle",
             "textangle": 0 if upright else -90, "font": {"size": 10, "color": "#333"},
             "bgcolor": "rgba(255,255,255,0.7)"}
        )  # fmt: skip
    fig.update_layout(shapes=shapes, annotations=annotations, margin={"t": 40})
    # the whole range stays the widest view: the bucket numbers were spaced for it
    fig.update_xaxes(range=[low, high], minallowed=low, maxallowed=high)
    return fig, t5_caption(view, low, high, len(labels), (len(dotted), len(edges)))


def drawn(view: T5View, pair: Pair | None) -> np.ndarray:
    """Which distances the lines hold: a decoder's future beyond the axis is not drawn (a line
    past the plot's right edge is clipped from sight but still widens the chart's drawing, past
    a phone's screen); the query's side, which the shares and shapes read, is drawn whole."""
    return view.distance <= shown_range(view, pair)[1]


def shown_range(view: T5View, pair: Pair | None) -> tuple[float, float]:
    """The x range drawn: every distance, or |r| <= twice max_distance at a larger n (every
    distance beyond is its direction's last bucket), widened to the picked pair's j - i."""
    last = int(view.distance[-1])
    reach = min(last, 2 * view.stack.max_distance)
    if pair is not None:
        reach = max(reach, min(last, abs(pair.distance)))
    ahead = reach
    if not view.stack.bidirectional:  # a decoder's r > 0 is bucket 0, masked: a strip of it
        ahead = min(last, max(2, reach // 8, pair.distance if pair is not None else 0))
    pad = 0.5 + reach / 100  # a line at the last distance drawn stays off the plot's edge
    return -reach - pad, ahead + pad


def t5_caption(view: T5View, low: float, high: float, labelled: int, edges: tuple[int, int]) -> str:
    """What the T5 chart shows, in words: its runs, the numbers written, the range, the shading."""
    runs_drawn = sum(1 for _, a, b in view.spans if a < high and b > low)
    numbers = (
        "each bucket's number above the plot"
        if labelled == runs_drawn
        else f"{labelled} of their bucket numbers above the plot, where they fit"
    )
    drawn, every = edges
    dotted = "; edges dotted" if every else ""
    if drawn < every:
        dotted = f"; {drawn} of the {every} edges dotted, those {EDGE_GAP_PX} px apart"
    parts = [
        f"{plural(runs_drawn, 'run')} of one bucket along r drawn ({numbers}; hover a line for "
        f"any distance's bucket{dotted})."
    ]
    first = max(int(view.distance[0]), int(np.ceil(low)))
    last = min(int(view.distance[-1]), int(np.floor(high)))
    beyond = []
    if first > view.distance[0]:
        beyond.append(
            f"every distance past twice max_distance = {view.stack.max_distance} is in its "
            "direction's last bucket, the value each line ends on"
        )
    if last < view.distance[-1] and not view.stack.bidirectional:
        beyond.append("every r > 0 is in bucket 0")
    if beyond:
        parts.append(
            f"Drawn for r = {first} to {last}: {' and '.join(beyond)} (the download holds all "
            f"{count(len(view.distance))} distances)."
        )
    if (
        view.untrained_distance is not None
        and view.untrained_distance[(view.distance >= low) & (view.distance <= high)].any()
    ):
        parts.append(
            f"Shaded and marked 'never trained': distances whose bucket no distance under the "
            f"training length {view.training_length} reaches, so training never moved its bias."
        )
    if not view.stack.bidirectional and view.distance[-1] > 0:
        parts.append(
            "Shaded grey and marked 'masked': keys after the query, which a decoder's causal "
            "mask hides (T5 puts them in bucket 0)."
        )
    return " ".join(parts)


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
    """Each table's rows w_r, r = -k..k, against the channel. Each panel's axes are named
    for the picked pair's outline: row clip(j - i, k) + k of the checkpoint's own k."""
    k = view.layer.k
    rows = [f"{r:+d}" if r else "0" for r in range(-k, k + 1)]
    panels = [
        Panel(t.astype(np.float64), title=name, x_title="channel c", y_title="row: distance r",
              x_symbol="c", y_symbol="r", y_labels=rows)
        for name, t in view.tables.items()
    ]  # fmt: skip
    scale = make_scale("diverging", [p.z for p in panels])
    fig = panel_grid(panels, scale, columns=2, max_width=720)
    for trace in fig.data:  # its rows are 0..2k, row k + r for distance r
        meta = trace.meta if isinstance(trace.meta, dict) else None
        if meta and meta.get("axes") == ["r", "c"]:
            trace.meta = {**meta, "axes": ["row", "c"], "clip": k}
    return fig, scale.caption


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


def rope_figure(view: RopeView, n: int, pair: Pair | None = None) -> go.Figure:
    """Each rotary pair's wavelength (log scale) beside the largest distance at the page's n,
    the configured length and the picked pair's |j - i| (a pair whose wavelength lies below a
    line turns full circle over that distance)."""
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
    marks = {f"the largest distance at n = {n}: n - 1": n - 1} if n > 1 else {}
    if view.rope.max_positions:
        marks["the config's max_position_embeddings"] = view.rope.max_positions
    picked = abs(pair.distance) if pair is not None else 0
    values = [*view.wavelength, *marks.values(), *([picked] if picked else [])]
    low, high = np.log10(min(values)) - 0.3, np.log10(max(values)) + 0.3
    fig.update_yaxes(range=[low, high])  # set: a line's label on a log axis would stretch it
    for label, y in marks.items():
        horizontal_line(fig, y, f"{label} = {y}")
    if picked:  # solid black, as the picked distance on every chart; labelled at the right
        fig.add_hline(y=picked, line={"color": HALO, "width": 1.5}, name="picked distance")
        fig.add_annotation(xref="paper", x=0.99, y=np.log10(picked), xanchor="right",
                           yanchor="top", showarrow=False, font={"size": 11, "color": HALO},
                           text=f"picked pair: |j - i| = {picked}")  # fmt: skip
    return fig
