"""The Predict page's figures: the next character's top 10, the last character's attention in
every layer and head, the bits spent on each character of a passage, and every scheme's running
mean of those bits. Arrays in, a ``go.Figure`` out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go

from explorer.figures.heatmaps import panel_grid, pooled_note
from explorer.figures.letters import SVG_CELLS_MAX, letters_source
from explorer.figures.lines import legend_band
from explorer.figures.notes import head_short
from explorer.figures.panel_traces import Panel
from explorer.figures.plots import axis_suffix
from explorer.figures.scales import colour_at, colourbar_trace, heatmap_colours, make_scale
from explorer.figures.ticks import axis_ticks, escape_label, thinned_note
from explorer.frame.screen import figure_width, is_phone
from explorer.pair.marks import click_marker
from explorer.stories.predict.views import Generation, WritingStep
from explorer.weights.reading import shown

LINE = 64  # characters per line of the coloured passage: one line is the training length
PHONE_LINE = 32  # on a phone: cells of about 10 px, each wide enough for its character
# pixels of a cell in the characters' image (explorer/figures/letters.py), about twice the
# cell's size on the screen: wide 12-14 x 20 px (64 a line), phone 9 x 20 px (32 a line)
LETTER_CELL_PX, PHONE_LETTER_CELL_PX = (24, 36), (16, 36)
COLOURS = pc.qualitative.D3


def top_figure(chars: tuple[str, ...], probs: np.ndarray) -> go.Figure:
    """Horizontal bars, the most likely character on top, each labelled with its probability."""
    labels = [f"'{escape_label(shown(c))}'" for c in chars]
    fig = go.Figure(
        go.Bar(
            x=np.asarray(probs, np.float32),
            y=labels,
            orientation="h",
            text=[f"{p:.1%}" for p in probs],
            textposition="outside",
            cliponaxis=False,
            marker_color=pc.sequential.Blues[6],
            hovertemplate="next character %{y}: p = %{x:.4f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", type="category", title="next character")
    fig.update_xaxes(range=[0, 1.12], title="probability", tickformat=".0%")
    fig.update_layout(height=60 + 26 * len(chars), margin=dict(l=10, r=10, t=10, b=40))
    return fig


def attention_figure(weights: np.ndarray, labels: tuple[str, ...]) -> tuple[go.Figure, str]:
    """(layers, heads, n) weights of the last character: one row per (layer, head), one column
    per character of the text, on the explorer's weights scale (log, from 1/(10 n)); with the
    scale's caption."""
    layers, heads, n = weights.shape
    z = weights.reshape(layers * heads, n)
    scale = make_scale("weights", [z])
    rows = [f"layer {layer}, head {head}" for layer in range(layers) for head in range(heads)]
    width = figure_width(900)
    ticks = axis_ticks(list(labels), n, 0, width - 200, vertical=False)  # less the row names
    fig = go.Figure(
        go.Heatmap(
            z=z.astype(np.float32),
            x=np.arange(n),
            y=rows,
            **heatmap_colours(scale),
            customdata=np.broadcast_to(np.array([escape_label(c) for c in labels]), z.shape),
            hovertemplate="%{y}, key %{x} '%{customdata}': weight %{z:.4f}<extra></extra>",
        )
    )
    fig.add_trace(colourbar_trace(scale, {"len": 1.0}))  # the log bar: ticks at their colours
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(
        **ticks, title="key j: the text's characters" + thinned_note(ticks, n), side="top"
    )
    fig.update_layout(height=80 + 22 * len(rows), margin=dict(l=10, r=10, t=60, b=10))
    return fig, scale.caption


def bits_figure(
    text: str,
    bits: np.ndarray,
    context: int,
    ceiling: float,
    *,
    clickable: bool = False,
    tops: tuple[tuple[str, ...], ...] = (),
) -> go.Figure:
    """The passage as lines of LINE characters (PHONE_LINE on a phone), each cell a character
    coloured by the bits the model spent on it, from 0 to ``ceiling`` (Viridis; more takes the
    top colour); a red line under the first ``context`` characters. ``clickable``: a
    transparent marker on each character (its customdata: [index, bits]), which a click
    selects and which carries the hover, with ``tops[t]``, the characters most likely at t."""
    n = len(text)
    phone = is_phone()
    per_line, font = (PHONE_LINE, 8) if phone else (LINE, 10)
    lines = -(-n // per_line)
    z = np.full((lines, per_line), np.nan, np.float32)
    z.flat[:n] = bits
    chars = np.full((lines, per_line), "", dtype=object)
    chars.flat[:n] = [escape_label(shown(c)) for c in text]
    hover = "character %{customdata} '%{text}': %{z:.2f} bits<extra></extra>"
    in_svg = z.size <= SVG_CELLS_MAX  # beyond, the characters travel as one image (letters.py)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            text=chars,
            texttemplate="%{text}" if in_svg else None,
            textfont=dict(size=font),
            customdata=np.arange(lines * per_line).reshape(lines, per_line),
            hovertemplate=None if clickable else hover,  # clickable: the markers' hover
            hoverinfo="skip" if clickable else None,
            colorscale="Viridis",
            zmin=0.0,
            zmax=ceiling,
            colorbar=dict(title="bits", thickness=12, len=1.0 if lines > 2 else 1.6),
            xgap=1,
            ygap=1,
        )
    )
    if clickable:
        index = np.arange(n)
        likely = [
            "; most likely there: " + " ".join(f"'{escape_label(shown(c))}'" for c in top)
            if top
            else ""
            for top in (tops or [()] * n)
        ]
        fig.add_trace(
            go.Scatter(
                x=(index % per_line).tolist(),
                y=(index // per_line).tolist(),
                mode="markers",
                marker=click_marker(14, symbol="square"),
                text=chars.flat[:n].tolist(),
                customdata=[
                    [int(t), float(b), top] for t, b, top in zip(index, bits, likely, strict=True)
                ],
                hovertemplate="character %{customdata[0]} '%{text}': %{customdata[1]:.2f} bits"
                "%{customdata[2]}<br>click: the attention that wrote it<extra></extra>",
                showlegend=False,
                name="characters",
            )
        )
        fig.update_layout(hoverdistance=-1)  # anywhere in a cell: its character, the nearest
    fig.update_yaxes(
        autorange="reversed",
        tickmode="array",
        tickvals=list(range(lines)),
        ticktext=[f"{row * per_line}" for row in range(lines)],
        title="from character" if lines > 2 else None,
    )
    fig.update_xaxes(showticklabels=False, range=[-0.5, per_line - 0.5])
    if not in_svg:
        glyphs = np.full((lines, per_line), "", dtype=object)
        glyphs.flat[:n] = [shown(c) for c in text]
        cell_px = PHONE_LETTER_CELL_PX if phone else LETTER_CELL_PX
        rgb = colour_at("sequential", np.clip(np.nan_to_num(z) / ceiling, 0.0, 1.0))
        fig.add_layout_image(
            source=letters_source(glyphs, rgb, cell_px),
            xref="x", yref="y", x=-0.5, y=-0.5, sizex=per_line, sizey=lines,
            xanchor="left", yanchor="top", sizing="stretch", layer="above",
        )  # fmt: skip
    if context < n:
        fig.add_hline(y=context / per_line - 0.5, line=dict(color="crimson", width=3))
    fig.update_layout(height=max(120, 50 + 22 * lines), margin=dict(l=10, r=10, t=10, b=10))
    return fig


def written_figure(gen: Generation, t: int, ceiling: float) -> go.Figure:
    """The characters of a generation as a clickable :func:`bits_figure` (each with the bits
    of its draw and the three likeliest characters there), character ``t`` outlined."""
    fig = bits_figure(
        gen.text, gen.bits, len(gen.chars) + 1, ceiling, clickable=True, tops=gen.tops
    )
    return mark_character(fig, t)


def step_figure(step: WritingStep) -> tuple[go.Figure, str]:
    """:func:`attention_figure` of the weights that drew one character, the characters the
    model had written itself shaded; with the scale's caption."""
    fig, caption = attention_figure(step.attention, step.labels)
    if step.written:
        fig.add_vrect(
            x0=len(step.text) - step.written - 0.5, x1=len(step.text) - 0.5,
            fillcolor="crimson", opacity=0.12, line_width=0,
        )  # fmt: skip
    return fig, caption


def mark_character(fig: go.Figure, t: int) -> go.Figure:
    """Outline character ``t`` of a :func:`bits_figure` (the one whose attention is drawn)."""
    per_line = len(fig.data[0].z[0])
    row, col = divmod(t, per_line)
    fig.add_shape(
        type="rect", x0=col - 0.5, x1=col + 0.5, y0=row - 0.5, y1=row + 0.5,
        line=dict(color="crimson", width=3),
    )  # fmt: skip
    return fig


def running_mean_figure(curves: dict[str, np.ndarray], names: dict[str, str], context: int):
    """Each model's mean bits over characters 0..t against t, the training length marked."""
    fig = go.Figure()
    for index, (name, curve) in enumerate(curves.items()):
        fig.add_trace(
            go.Scatter(
                x=np.arange(1, len(curve) + 1),
                y=np.asarray(curve, np.float32),
                name=names[name],
                mode="lines",
                line=dict(color=COLOURS[index % len(COLOURS)], width=2),
                hovertemplate=names[name] + ": %{y:.3f} bits over the first %{x}<extra></extra>",
            )
        )
    length = max(len(c) for c in curves.values())
    if context < length:
        fig.add_vrect(x0=context, x1=length, fillcolor="grey", opacity=0.12, line_width=0)
        fig.add_vline(x=context, line=dict(color="crimson", dash="dash"))
        fig.add_annotation(
            x=context, y=1, yref="paper", text=f"trained on {context}", showarrow=False,
            xanchor="left", xshift=4, font=dict(color="crimson"),
        )  # fmt: skip
    legend, bottom = legend_band(len(curves))
    fig.update_xaxes(title="characters read (t)")
    fig.update_yaxes(title="mean bits per character, 0..t")
    fig.update_layout(height=380 + bottom, legend=legend, margin=dict(l=10, r=10, t=30, b=bottom))
    return fig


GRID_IMAGE_SIDE = 256  # a grid panel past IMAGE_SIDE travels as a PNG this many pixels a side


@dataclass(frozen=True)
class HeadsGrid:
    """The every-head figure, its caption, and which (layer, head) a click on each of its
    clickable traces opens (trace index -> (layer, head))."""

    figure: go.Figure
    caption: str
    clickable: dict[int, tuple[int, int]]


def heads_figure(weights: np.ndarray, readings, labels: tuple[str, ...]) -> HeadsGrid:
    """(layers, heads, m, m) causal weights as small maps, a row per layer and a column per
    head, on one weights scale, each titled with its layer and head and its reading
    (``readings[layer][head]``, see ``head_reading``). Every map can be clicked: where the
    figure has a marker per cell those markers say which map; an image map gets one
    transparent marker as large as the map."""
    layers, heads, m, _ = weights.shape
    scale = make_scale("weights", [w for layer in weights for w in layer], n_keys=m)
    panels = [
        Panel(
            weights[layer, head],
            title=f"layer {layer}, head {head}",
            subtitle=head_short(readings[layer][head]),
            x_labels=labels,
            y_labels=labels,
        )
        for layer in range(layers)
        for head in range(heads)
    ]
    fig = panel_grid(panels, scale, columns=heads, image_side=GRID_IMAGE_SIDE)
    layout = fig.layout
    plot_w = layout.width - layout.margin.l - layout.margin.r
    axis_of = {(t.xaxis or "x"): index for index, t in enumerate(fig.data) if index < len(panels)}
    clickable = {}
    for index, trace in enumerate(fig.data):  # the cell markers, one trace per map
        if trace.name == "cells" and (trace.xaxis or "x") in axis_of:
            clickable[index] = divmod(axis_of[trace.xaxis or "x"], heads)
    mapped = set(clickable.values())
    for t in range(len(panels)):
        where = divmod(t, heads)
        if where in mapped:
            continue
        suffix = axis_suffix(t)
        domain = layout[f"xaxis{suffix}"].domain
        side = (domain[1] - domain[0]) * plot_w  # the map's width in pixels
        clickable[len(fig.data)] = where
        fig.add_trace(
            go.Scatter(
                x=[(m - 1) / 2],
                y=[(m - 1) / 2],
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                mode="markers",
                marker=click_marker(side, symbol="square"),
                hovertemplate=f"layer {where[0]}, head {where[1]}: click to open<extra></extra>",
                showlegend=False,
                name="map",
            )
        )
    caption = " ".join(c for c in (scale.caption, pooled_note(panels, GRID_IMAGE_SIDE)) if c)
    return HeadsGrid(fig, caption, clickable)
