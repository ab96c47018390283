"""Matrices as figures at any size: small multiples on one colour scale, large ones as images.

A panel up to ``IMAGE_SIDE`` rows and columns is a plotly heatmap: its float32 values travel as a
typed array and hover gives the exact value. A larger one is a colour-mapped PNG (``go.Image``):
about 0.1-0.4 MB for 512 x 512 instead of 2-5 MB, hover gives the position only, and the page
shows exact values in a zoomed inset (:func:`inset`). Every panel has square cells, row 0 at
the top, masked (NaN) cells blank, and one colour scale shared by all panels of a figure:

* ``diverging``: logits and signed values, RdBu centred at 0, bound = the largest |value|;
* ``weights``: attention weights on a log colour scale from 1 / (10 n_keys) to 1, so that a row
  of near-uniform weights (about 1 / n_keys each) is as visible at n = 512 as at n = 8;
* ``index``: integer tables (distances, indices), Viridis over the given range;
* ``sequential``: a value whose point is its size, not its sign (a similarity that peaks on the
  diagonal), Viridis from its smallest to its largest value.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go
from PIL import Image

from explorer.figures.plots import MASKED_BACKGROUND, escape_label
from explorer.frame.memory import cached
from explorer.frame.screen import figure_width
from explorer.pair.marks import axes_meta, click_cells

CELL_TEXT_MAX = 16
IMAGE_SIDE = 128  # a panel with more rows or columns than this travels as a PNG
HOVER_TEXT_CELLS = 1024  # up to this many cells, hover names both tokens of every cell
TICK_LABELS_MAX = 24  # more rows or columns than this: numeric ticks
WEIGHT_FLOOR_FACTOR = 10  # weights scale: floor = 1 / (factor * n_keys)
COLOURS = {
    "diverging": pc.diverging.RdBu_r,
    "weights": pc.sequential.Blues,
    "index": pc.sequential.Viridis,
    "sequential": pc.sequential.Viridis,
}
MASKED_RGB = (217, 217, 217)  # MASKED_BACKGROUND as RGB, for the pixels of masked cells
CELL_MAX_PX = 40  # a small matrix is drawn with cells this large
PANEL_MAX_PX = 420  # the longest side of a panel
ELONGATED = 8  # a panel this many times longer than wide gets non-square cells
TITLE_PX = 34  # room above each panel for its title (aligned across a row of panels)
AXIS_PX = 40  # room above a panel for its numeric ticks and axis title (60 for token labels)
ROW_GAP_PX = 18  # between a panel's lowest tick and the title of the panel below
LEFT_PX, RIGHT_PX, BAR_PX = 60, 10, 70  # a grid's margins and its colour bar
PANEL_MIN_PX = 120  # a grid drops to fewer columns rather than draw a panel narrower
TICK_EVERY_MAX = 12  # up to this many rows or columns, every one gets its tick


@dataclass(frozen=True)
class Panel:
    """One matrix of a figure: ``z`` (rows, cols), NaN = masked; offsets are the positions of the
    first row / column (a window of a larger matrix); labels name rows / columns (tokens)."""

    z: np.ndarray
    title: str = ""
    x_title: str = "key j"
    y_title: str = "query i"
    row_offset: int = 0
    col_offset: int = 0
    x_labels: Sequence[str] | None = None
    y_labels: Sequence[str] | None = None
    x_symbol: str = "j"
    y_symbol: str = "i"
    cell_text: np.ndarray | None = None  # written into the cells when both sides <= CELL_TEXT_MAX


@dataclass(frozen=True)
class Scale:
    """A colour scale shared by every panel: plotly stops over [zmin, zmax] and its caption."""

    kind: str
    zmin: float
    zmax: float
    stops: tuple[tuple[float, str], ...]
    caption: str

    def position(self, z: np.ndarray) -> np.ndarray:
        """Where each value sits on the colour bar, in [0, 1] (NaN stays NaN)."""
        if self.kind == "weights":
            floor = self.zmin_display
            with np.errstate(divide="ignore", invalid="ignore"):
                p = np.log(np.maximum(z, floor) / floor) / math.log(self.zmax / floor)
            return np.clip(p, 0.0, 1.0)
        span = self.zmax - self.zmin or 1.0
        return np.clip((z - self.zmin) / span, 0.0, 1.0)

    @property
    def zmin_display(self) -> float:
        """The weights scale's floor (the lightest colour); zmin for the other scales."""
        return float(self.stops[1][0]) * self.zmax if self.kind == "weights" else self.zmin


def _rgb(colours: Sequence[str]) -> np.ndarray:
    """(m, 3) float RGB of a plotly colour list ('rgb(..)' or '#rrggbb')."""
    out = []
    for colour in colours:
        if colour.startswith("#"):
            out.append([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
        else:
            out.append([float(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3]])
    return np.asarray(out, dtype=np.float64)


def _colour_at(kind: str, p: np.ndarray) -> np.ndarray:
    """RGB (..., 3) uint8 of the colour list ``kind`` at positions p in [0, 1]."""
    rgb = _rgb(COLOURS[kind])
    grid = np.linspace(0, 1, len(rgb))
    out = np.stack([np.interp(p, grid, rgb[:, c]) for c in range(3)], axis=-1)
    return np.round(out).astype(np.uint8)


def make_scale(
    kind: str,
    panels: Sequence[np.ndarray],
    zrange: tuple[float, float] | None = None,
    n_keys: int | None = None,
) -> Scale:
    """The one colour scale for ``panels``: see the module docstring for each ``kind``."""
    if kind not in COLOURS:
        raise ValueError(f"scale must be one of {', '.join(COLOURS)}, got {kind!r}")
    finite = np.concatenate([np.asarray(z, np.float32)[np.isfinite(z)] for z in panels] or [[]])
    if kind == "weights":
        keys = n_keys or max(np.asarray(z).shape[-1] for z in panels)
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        floor = min(1.0 / (WEIGHT_FLOOR_FACTOR * keys), top / WEIGHT_FLOOR_FACTOR)
        count = 16
        values = floor * (top / floor) ** (np.arange(count + 1) / count)
        colours = _colour_at("weights", np.arange(count + 1) / count)
        stops = [(0.0, _css(colours[0]))] + [
            (float(v / top), _css(c)) for v, c in zip(values, colours, strict=True)
        ]
        stops[-1] = (1.0, stops[-1][1])
        caption = (
            f"Weights on a log colour scale from {floor:.2g} = 1/({WEIGHT_FLOOR_FACTOR} n) to "
            f"the largest weight shown, {top:.3g} (smaller weights take the lightest colour); "
            "one scale for every panel."
        )
        return Scale(kind, 0.0, top, tuple(stops), caption)
    if kind == "diverging":
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        low, high = (-bound, bound) if zrange is None else zrange
        high = high if high > low else low + 1.0
        caption = (
            f"Diverging colour scale centred at 0, from {low:.3g} to {high:.3g}; "
            "one scale for every panel."
        )
    else:
        low, high = (
            zrange
            if zrange is not None
            else ((float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
        )
        high = high if high > low else low + 1.0
        caption = (
            f"Sequential colour scale from the smallest value, {low:.3g}, to the largest, "
            f"{high:.3g}; one scale for every panel."
            if kind == "sequential"
            else ""
        )
    colours = COLOURS[kind]
    stops = [(i / (len(colours) - 1), c) for i, c in enumerate(colours)]
    return Scale(kind, float(low), float(high), tuple(stops), caption)


def _css(rgb: np.ndarray) -> str:
    return f"rgb({int(rgb[0])},{int(rgb[1])},{int(rgb[2])})"


def png_source(z: np.ndarray, scale: Scale) -> str:
    """``z`` colour-mapped on ``scale`` as a PNG data URI (masked cells light grey).

    Encoding a 512 x 512 panel takes about 70 ms, so the result is cached by the bytes of ``z``
    (a digest, not Streamlit's sampled hash of large arrays): a rerun that draws the same
    matrix, or a page that draws it twice, encodes it once.
    """
    z = np.ascontiguousarray(z, dtype=np.float32)
    digest = hashlib.blake2b(z.tobytes(), digest_size=16).hexdigest()
    return _png(digest, z.shape, scale, z)


@cached(64)
def _png(digest: str, shape: tuple[int, ...], scale: Scale, _z: np.ndarray) -> str:
    """The PNG of ``_z`` (left out of the cache key: ``digest`` and ``shape`` stand for it)."""
    rgb = _colour_at(scale.kind, np.nan_to_num(scale.position(_z), nan=0.0))
    rgb[~np.isfinite(_z)] = MASKED_RGB
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def pool(z: np.ndarray, side: int) -> tuple[np.ndarray, int]:
    """Block means of ``z`` so that no side exceeds ``side``: (pooled, block size). NaN cells are
    left out of a mean; a block of NaN stays NaN."""
    z = np.asarray(z, dtype=np.float32)
    block = max(1, math.ceil(max(z.shape) / side))
    if block == 1:
        return z, 1
    rows, cols = (math.ceil(s / block) * block for s in z.shape)
    padded = np.full((rows, cols), np.nan, dtype=np.float32)
    padded[: z.shape[0], : z.shape[1]] = z
    blocks = padded.reshape(rows // block, block, cols // block, block)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a fully masked block is meant to be NaN
        return np.nanmean(blocks, axis=(1, 3)).astype(np.float32), block


def hover_labels(labels: Sequence[str] | None, count: int, offset: int, symbol: str) -> list[str]:
    """'i = 3 "the"' for each of ``count`` positions from ``offset`` (no token: 'i = 3')."""
    out = []
    for p in range(offset, offset + count):
        token = f' "{escape_label(labels[p])}"' if labels is not None and p < len(labels) else ""
        out.append(f"{symbol} = {p}{token}")
    return out


def _ticks(labels: Sequence[str] | None, count: int, offset: int) -> dict:
    if labels is not None and count <= TICK_LABELS_MAX:
        values = np.arange(offset, offset + count)
        text = [escape_label(labels[v]) for v in values if v < len(labels)]
        if len(text) == count:
            angle = -45 if max(map(len, text), default=0) > 3 else 0
            return {"tickmode": "array", "tickvals": values, "ticktext": text, "tickangle": angle}
    if count <= TICK_EVERY_MAX:  # a tick on every row or column, never a half position
        return {"tickmode": "linear", "tick0": offset, "dtick": 1}
    return {"tickmode": "auto", "nticks": 6}


def _panel_trace(panel: Panel, scale: Scale, axis: str, side: int) -> dict:
    """The heatmap or image trace of one panel on axes ``x{axis}`` / ``y{axis}``."""
    z = np.asarray(panel.z, dtype=np.float32)
    rows, cols = z.shape
    y_sym, x_sym = panel.y_symbol, panel.x_symbol
    refs = {
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "meta": axes_meta(
            y_sym,
            x_sym,
            (panel.row_offset, panel.row_offset + rows - 1),
            (panel.col_offset, panel.col_offset + cols - 1),
        ),
    }
    if max(rows, cols) > IMAGE_SIDE:
        shown, block = pool(z, side)
        return {
            "type": "image",
            "source": png_source(shown, scale),
            "x0": panel.col_offset + (block - 1) / 2,
            "dx": block,
            "y0": panel.row_offset + (block - 1) / 2,
            "dy": block,
            "hovertemplate": f"{y_sym} = %{{y}}<br>{x_sym} = %{{x}}<extra></extra>",
            "name": "image",
            **refs,
        }
    trace: dict = {
        "type": "heatmap",
        "z": z,
        "x": np.arange(panel.col_offset, panel.col_offset + cols),
        "y": np.arange(panel.row_offset, panel.row_offset + rows),
        "zmin": scale.zmin,
        "zmax": scale.zmax,
        "colorscale": [list(s) for s in scale.stops],
        "showscale": False,
        "hoverongaps": False,
        **refs,
    }
    if panel.cell_text is not None and max(rows, cols) <= CELL_TEXT_MAX:
        trace["text"] = np.vectorize(lambda v: html.escape(str(v), quote=False))(panel.cell_text)
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 10}
    value = "%{z:.4g}"
    if rows * cols <= HOVER_TEXT_CELLS:
        ys = hover_labels(panel.y_labels, rows, panel.row_offset, y_sym)
        xs = hover_labels(panel.x_labels, cols, panel.col_offset, x_sym)
        trace["hovertext"] = np.array([[f"{y}<br>{x}" for x in xs] for y in ys], dtype=object)
        trace["hovertemplate"] = f"%{{hovertext}}<br>value = {value}<extra></extra>"
    else:
        trace["hovertemplate"] = (
            f"{y_sym} = %{{y}}<br>{x_sym} = %{{x}}<br>value = {value}<extra></extra>"
        )
    return trace


def _colourbar_trace(scale: Scale, place: dict | None = None) -> dict:
    """An invisible marker carrying a colour bar (log ticks for weights): the figure's one bar,
    or with ``place`` (plotly colorbar x, y, len) one panel's own bar beside it."""
    marker: dict = {"size": 0.1, "opacity": 0, "showscale": True, "color": [scale.zmin]}
    bar = {"thickness": 12, "len": 0.8, **(place or {})}
    if scale.kind == "weights":
        floor = scale.zmin_display
        decades = [
            math.log10(m * 10.0**e)
            for e in range(math.floor(math.log10(floor)), 1)
            for m in (1, 2, 5)
            if floor <= m * 10.0**e <= scale.zmax
        ]
        marker.update(
            colorscale=COLOURS["weights"],
            cmin=math.log10(floor),
            cmax=math.log10(scale.zmax),
            color=[math.log10(scale.zmax)],
            colorbar={
                **bar,
                "tickvals": decades,
                "ticktext": [f"{10.0**e:.2g}" for e in decades],
                "title": {"text": "α", "side": "top"},
            },
        )
    else:
        marker.update(
            colorscale=[list(s) for s in scale.stops],
            cmin=scale.zmin,
            cmax=scale.zmax,
            colorbar=bar
            if scale.kind != "index" or scale.zmax - scale.zmin > TICK_EVERY_MAX
            else {**bar, "dtick": 1},  # integer tables: integer ticks only
        )
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "markers",
        "marker": marker,
        "hoverinfo": "skip",
        "showlegend": False,
        "name": "colour bar",
    }


def panel_grid(
    panels: Sequence[Panel],
    scale: Scale | Sequence[Scale],
    *,
    columns: int | None = None,
    cell_px: float | None = None,
    max_width: int = 980,
    image_side: int = 512,
    title: str = "",
) -> go.Figure:
    """One figure with one subplot per panel, ``columns`` per row, on the shared ``scale``, or
    with a sequence of scales (one per panel, see :func:`own_scales`) each panel on its own
    scale with its own colour bar beside it.

    Cells are square and every panel of a row sits at the same height (titles have a fixed
    band). Panels with more than IMAGE_SIDE rows or columns are PNGs at most ``image_side``
    pixels a side (block means beyond that: the caption must say so). Trace ``t`` of the
    figure is panel ``t`` (the colour bar trace comes last).
    """
    if not panels:
        raise ValueError("panel_grid needs at least one panel")
    for p in panels:
        if np.asarray(p.z).ndim != 2:
            raise ValueError(f"each panel needs a 2-D array, got shape {np.asarray(p.z).shape}")
    scales = per_panel(scale, len(panels))
    own = not isinstance(scale, Scale)
    max_width = figure_width(max_width)  # a phone's screen is narrower than any default
    gap_x = 130 if own else 70  # own scales: room for each panel's bar
    left, right, colourbar = LEFT_PX, RIGHT_PX, BAR_PX
    columns = max(1, min(columns or len(panels), len(panels)))
    while columns > 1 and _usable(max_width, columns, gap_x) / columns < PANEL_MIN_PX:
        columns -= 1  # fewer panels to a row rather than panels too small to read
    grid_rows = math.ceil(len(panels) / columns)
    tallest = max(np.asarray(p.z).shape[0] for p in panels)
    widest = max(np.asarray(p.z).shape[1] for p in panels)
    usable = _usable(max_width, columns, gap_x)
    side_px = min(PANEL_MAX_PX, usable / columns)  # the longest side of a panel
    if cell_px is None:
        cell_px = min(CELL_MAX_PX, side_px / max(tallest, widest))
    # Square cells, unless a panel is so elongated (an (n, d) output at n = 512) that its
    # short side would be a sliver: then each axis gets its own cell size.
    square = max(tallest, widest) <= ELONGATED * min(tallest, widest)
    panel_w = max(60.0, cell_px * widest if square else min(side_px, max(cell_px * widest, 160)))
    panel_h = max(40.0, cell_px * tallest if square else min(PANEL_MAX_PX, cell_px * tallest))
    labels_px = (
        60 if any(p.x_labels is not None and widest <= TICK_LABELS_MAX for p in panels) else AXIS_PX
    )
    row_h = panel_h + TITLE_PX + labels_px + ROW_GAP_PX
    top = 40 if title else 10
    height = int(top + grid_rows * row_h + 30)
    width = int(left + columns * panel_w + gap_x * (columns - 1) + right + colourbar)
    plot_w = width - left - right - colourbar
    plot_h = height - top - 30
    data, layout = [], {}
    annotations, bars = [], []
    for t, panel in enumerate(panels):
        r, c = divmod(t, columns)
        axis = "" if t == 0 else str(t + 1)
        data.append(_panel_trace(panel, scales[t], axis, image_side))
        z = np.asarray(panel.z)
        x0 = c * (panel_w + gap_x) / plot_w
        x1 = x0 + panel_w / plot_w
        y1 = 1 - (r * row_h + TITLE_PX + labels_px) / plot_h
        y0 = y1 - panel_h / plot_h
        rows, cols = z.shape
        layout[f"xaxis{axis}"] = {
            "domain": [max(0.0, x0), min(1.0, x1)],
            "side": "top",
            "range": [panel.col_offset - 0.5, panel.col_offset + cols - 0.5],
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            "title": {"text": panel.x_title, "standoff": 6, "font": {"size": 11}},
            "anchor": f"y{axis}",
            **_ticks(panel.x_labels, cols, panel.col_offset),
        }
        layout[f"yaxis{axis}"] = {
            "domain": [max(0.0, y0), min(1.0, y1)],
            "range": [panel.row_offset + rows - 0.5, panel.row_offset - 0.5],
            # an image trace anchors its axes itself unless told not to
            **({"scaleanchor": f"x{axis}", "scaleratio": 1} if square else {"scaleanchor": False}),
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            "title": {"text": panel.y_title if c == 0 else "", "font": {"size": 11}},
            "anchor": f"x{axis}",
            **_ticks(panel.y_labels, rows, panel.row_offset),
        }
        if own:  # this panel's bar, just right of it, as tall as it
            place = {"x": (x1 * plot_w + 8) / plot_w, "xanchor": "left", "y": (y0 + y1) / 2}
            bars.append(_colourbar_trace(scales[t], {**place, "len": y1 - y0, "yanchor": "middle"}))
        if panel.title:
            annotations.append(
                {
                    "text": f"<b>{html.escape(panel.title, quote=False)}</b>",
                    "xref": "paper",
                    "yref": "paper",
                    "x": max(0.0, x0),
                    "y": 1 - r * row_h / plot_h,
                    "xanchor": "left",
                    "yanchor": "top",
                    "showarrow": False,
                    "font": {"size": 13},
                }
            )
    cells = click_cells(data)  # before the bars: it reads the panels' hover
    data.extend(bars if own else [_colourbar_trace(scale)])
    data.extend(cells)
    layout.update(
        {
            "title": {"text": html.escape(title, quote=False), "x": 0, "font": {"size": 14}},
            "annotations": annotations,
            "width": width,
            "height": height,
            "margin": {"l": left, "r": right + colourbar, "t": top, "b": 30},
            "plot_bgcolor": MASKED_BACKGROUND,
            "hovermode": "closest",
            "showlegend": False,
        }
    )
    return go.Figure({"data": data, "layout": layout})


def per_panel(scale: Scale | Sequence[Scale], count: int) -> list[Scale]:
    """The scale of each of ``count`` panels: one shared scale repeated, or one per panel."""
    scales = [scale] * count if isinstance(scale, Scale) else list(scale)
    if len(scales) != count:
        raise ValueError(f"panel_grid needs one scale per panel, got {len(scales)} for {count}")
    return scales


def _usable(width: int, columns: int, gap_x: int) -> float:
    """Pixels left for the panels of a row: the figure less its margins, bar and gaps."""
    return width - LEFT_PX - RIGHT_PX - BAR_PX - gap_x * (columns - 1)


def own_scales(kind: str, panels: Sequence[Panel], **options) -> list[Scale]:
    """One scale per panel, each fitted to that panel's own values (``make_scale`` options)."""
    return [make_scale(kind, [p.z], **options) for p in panels]


def own_scales_caption(scales: Sequence[Scale]) -> str:
    """The caption for panels on their own scales: the kind and each panel's range."""
    if scales[0].kind == "weights":
        return (
            "Each panel has its own log colour scale, from its own largest weight (bar beside it)."
        )
    ranges = "; ".join(f"{s.zmin:.3g} to {s.zmax:.3g}" for s in scales)
    centred = "centred at 0, " if scales[0].kind == "diverging" else ""
    return f"Each panel has its own colour scale ({centred}its bar beside it): {ranges}."


def grid_columns(count: int, max_columns: int = 4) -> int:
    """How many panels per row: all in one row up to ``max_columns``, else balanced rows."""
    rows = math.ceil(count / max_columns)
    return math.ceil(count / rows)


def inset_bounds(centre: int, start: int, stop: int, side: int) -> tuple[int, int]:
    """[lo, hi) of at most ``side`` positions around ``centre``, inside [start, stop)."""
    side = min(side, stop - start)
    lo = min(max(start, centre - side // 2), stop - side)
    return lo, lo + side


def pooled_note(panels: Sequence[Panel], image_side: int) -> str:
    """A caption sentence when :func:`panel_grid` draws some panel as block means, else ''."""
    side = max(max(np.asarray(p.z).shape) for p in panels)
    if side <= IMAGE_SIDE or side <= image_side:
        return ""
    block = math.ceil(side / image_side)
    return (
        f"Panels are drawn at most {image_side} pixels a side: a pixel is the mean of "
        f"{block} x {block} values."
    )


def mark_position(fig: go.Figure, panels: int, position: int, label: str) -> go.Figure:
    """A dashed line before row and column ``position`` of every panel of a grid (the edge of
    what a model was trained on), named once by ``label`` above the first panel."""
    line = {"color": "#d62728", "width": 1.5, "dash": "dash"}
    edge = position - 0.5
    for t in range(panels):
        axis = "" if t == 0 else str(t + 1)
        refs = {"xref": f"x{axis}", "yref": f"y{axis}", "line": line}
        fig.add_shape(
            type="line", x0=edge, x1=edge, y0=0, y1=1, **{**refs, "yref": f"y{axis} domain"}
        )
        fig.add_shape(
            type="line", y0=edge, y1=edge, x0=0, x1=1, **{**refs, "xref": f"x{axis} domain"}
        )
    fig.add_annotation(
        text=html.escape(label, quote=False), x=edge, y=1, xref="x", yref="y domain",
        xanchor="left", yanchor="bottom", showarrow=False, font={"size": 10, "color": "#d62728"},
    )  # fmt: skip
    return fig
