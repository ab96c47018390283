"""Drawing helpers: a figure with its formula and shape, and PNG export from its toolbar.

Every chart reaches the page through :func:`plotly_chart`, which also records it for the view's
download (explorer.frame.offline_view): pages call it, or :func:`chart` / :func:`figure`, never
``st.plotly_chart`` itself."""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st

from explorer.figures.describe import describe
from explorer.figures.heatmaps import (
    IMAGE_SIDE,
    Panel,
    grid_columns,
    inset_bounds,
    panel_grid,
)
from explorer.figures.palettes import active
from explorer.figures.recolour import recolour, second_cue
from explorer.figures.scales import Scale, make_scale, per_panel
from explorer.figures.unread import unread_line
from explorer.frame import tex
from explorer.frame.failures import fragment
from explorer.frame.offline_view import ShownFigure, record_figure
from explorer.frame.params import DISPLAY_MAX, ViewParams
from explorer.frame.screen import is_phone
from explorer.frame.widgets import int_slider, md_escape
from explorer.pair.controls import chart_options, current_pair
from explorer.weights.source import source_of

INSET_SIDE = 32  # rows and columns of the exact-value zoom under an image
PHONE_INSET_SIDE = 16  # on a phone: 16 cells of 11 px and their labels fit its 350 px
# Plotly's toolbar (modebar) sits over the top right of a chart: on hover on a wide screen,
# always on a touch screen (a phone has no hover). Every chart gets a band of its own at the
# top that the toolbar fills, so it covers no title, legend or tick label.
TOOLBAR_PX = 30
PLOTLY_TOP_MARGIN = 100  # plotly's default top margin, for a figure that sets none


def png_config(key: str) -> dict:
    """Plotly modebar config: the camera button saves the figure as ``<key>.png``. The modebar
    is drawn in a strip above the chart (assets/layout.css), over none of the figure."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": key, "scale": 2},
    }


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def plotly_chart(
    fig: go.Figure, *, key: str, formula: str = "", caption: str = "", **options: object
):
    """``st.plotly_chart(fig, key=key, **options)``, the figure recorded for the view's download
    with the ``formula`` shown above it and the ``caption`` under it.

    On its way the figure takes the sidebar's palette and a dash or marker per coloured line
    (explorer.figures.recolour), and a description in words goes before it, visually hidden,
    for a screen reader (explorer.figures.describe)."""
    toolbar_band(fig)
    second_cue(recolour(fig, active()))
    # the caption is on the page under the chart: a screen reader reads it there, once
    st.html(f'<p class="sr-only">{html.escape(describe(fig))}</p>')
    record_figure(ShownFigure(key, fig, formula, caption, options.get("config") or {}))
    return st.plotly_chart(fig, key=key, **options)


def toolbar_band(fig: go.Figure) -> go.Figure:
    """Make room for the toolbar above everything ``fig`` draws: the top margin and the height
    grow by TOOLBAR_PX (the plot keeps its size) and the title sits just under the band. Once
    per figure (a cached figure reaches here on every rerun)."""
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    if meta.get("toolbar_band"):
        return fig
    top = fig.layout.margin.t
    top = PLOTLY_TOP_MARGIN if top is None else top
    height = fig.layout.height
    band = {
        "margin": {"t": top + TOOLBAR_PX},
        "height": None if height is None else height + TOOLBAR_PX,
        "meta": {**meta, "toolbar_band": TOOLBAR_PX},
    }
    if fig.layout.title.text:
        band["title"] = {"yref": "container", "y": 1, "yanchor": "top", "pad": {"t": TOOLBAR_PX}}
    fig.layout.update(band)  # nested dicts, one call: plotly parses "margin_t" paths slowly
    return fig


def chart(
    fig: go.Figure,
    key: str,
    *,
    formula: str = "",
    shape: tuple[int, ...] | None = None,
    note: str = "",
    on_click: Callable[[], None] | None = None,
) -> None:
    """The formula, then the figure (full width), then its shape and note under it, as
    :func:`figure` does: a shape written above a figure reads as the one before it.
    ``on_click``: called when a point of the figure is clicked (its event is in session state
    under ``chart_<key>``), instead of a click picking the sidebar's pair."""
    if formula:
        st.markdown(f"`{formula}`")
    options = (
        chart_options(fig, f"chart_{key}")
        if on_click is None
        else {"on_select": on_click, "selection_mode": "points"}
    )
    shape_note = f"shape {shape_text(shape)}" if shape is not None else ""
    caption = " · ".join(p for p in (shape_note, note) if p)
    plotly_chart(
        fig,
        key=f"chart_{key}",
        formula=formula,
        caption=caption,
        width="stretch",
        config=png_config(key),
        **options,
    )
    if caption:
        st.caption(md_escape(caption))


def agreement_badge(label: str, max_diff: float, tolerance: float = 1e-4) -> None:
    """A green badge when two computations agree within ``tolerance``, red otherwise."""
    ok = max_diff <= tolerance
    st.badge(
        f"{label}: max |difference| = {max_diff:.1e}",
        icon=":material/check:" if ok else ":material/close:",
        color="green" if ok else "red",
    )


def bytes_text(count: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def window_caption(params: ViewParams, what: str = "every n x n heatmap") -> None:
    """Say, under the title, that the heatmaps show a window and how large the full matrix is."""
    if params.windowed:
        start, stop = params.window
        n = params.length
        st.caption(
            f"n = {n} is above {DISPLAY_MAX}: {what} shows the window of "
            f"queries and keys {start}-{stop - 1} ({stop - start} x {stop - start} of the full "
            f"({n}, {n})), cut from the full matrix, not a downsample of it (a panel drawn "
            "smaller than its window says in its caption how its cells are pooled). Move it with "
            "*window start* in the sidebar."
        )


def figure(
    fig: go.Figure,
    key: str,
    *,
    latex: str = "",
    shape: tuple[int, ...] | None = None,
    caption: str = "",
) -> None:
    """An optional LaTeX formula, the figure at its own (square-celled) size, then a caption.

    The PNG of the figure comes from its toolbar (camera button, saved as ``<key>.png``).
    """
    if latex:
        tex.latex(latex)
    options = chart_options(fig, f"chart_{key}")
    parts = [f"shape {shape_text(shape)}"] if shape is not None else []
    if caption:
        parts.append(caption)
    plotly_chart(
        fig,
        key=f"chart_{key}",
        formula=latex,
        caption=" · ".join(parts),
        width="content",
        config=png_config(key),
        **options,
    )
    if parts:
        st.caption(md_escape(" · ".join(parts)))


def inset(
    panels: Sequence[Panel],
    scale: Scale | Sequence[Scale],
    key: str,
    *,
    side: int = INSET_SIDE,
    label: str = "query",
    refit: bool = False,
) -> None:
    """Exact values of large panels: a ``side`` x ``side`` heatmap of each around a picked row.

    Shown only when some panel travels as an image (more than IMAGE_SIDE rows or columns); the
    picker is URL-bound (``<key>``), and the inset redraws alone (a fragment). With ``refit``
    each zoomed panel gets its own scale, fitted to the values it shows: for a matrix whose
    range grows with its size (j - i spans ±511 on a 512-wide window, ±31 in a 32-wide zoom),
    the window's scale would draw the zoom nearly blank.
    """
    big = [
        (p, s)
        for p, s in zip(panels, per_panel(scale, len(panels)), strict=True)
        if max(p.z.shape) > IMAGE_SIDE
    ]
    if big:  # a shared scale stays one (one colour bar), else each panel keeps its own
        picked = scale if isinstance(scale, Scale) else tuple(s for _, s in big)
        _inset_fragment(tuple(p for p, _ in big), picked, key, side, label, refit)


@fragment
def _inset_fragment(
    panels: tuple[Panel, ...], scale: Scale | tuple[Scale, ...], key: str, side: int, label: str,
    refit: bool,
) -> None:  # fmt: skip
    first = panels[0]
    rows, cols = first.z.shape
    side = min(side, PHONE_INSET_SIDE) if is_phone() else side
    start, stop = first.row_offset, first.row_offset + rows
    c_lo, c_hi = first.col_offset, first.col_offset + cols
    pair = current_pair()
    if (
        pair is not None
        and (first.y_symbol, first.x_symbol) == ("i", "j")
        and start <= pair.i < stop
        and c_lo <= pair.j < c_hi
    ):  # the zoom follows the picked pair: its cell at the centre
        st.caption(f"zoom: exact values around the picked pair (i, j) = ({pair.i}, {pair.j})")
        row_centre, col_centre = pair.i, pair.j
    else:
        row_centre = col_centre = int_slider(
            f"zoom: exact values around {label}",
            start,
            stop - 1,
            key,
            value=start,
            name="zoom",
            help=f"The charts above are images: here a {side} x {side} block of exact values.",
        )
    r0, r1 = inset_bounds(row_centre, start, stop, side)
    c0, c1 = inset_bounds(col_centre, c_lo, c_hi, side) if cols > side else (c_lo, c_hi)
    zoomed = [
        dataclasses.replace(
            p,
            z=p.z[r0 - p.row_offset : r1 - p.row_offset, c0 - p.col_offset : c1 - p.col_offset],
            row_offset=r0,
            col_offset=c0,
            title=f"{p.title} [{r0}:{r1}, {c0}:{c1}]",
        )
        for p in panels
    ]
    scale_note = ""
    if refit:
        kinds = [s.kind for s in per_panel(scale, len(zoomed))]
        scale = [make_scale(kind, [p.z]) for kind, p in zip(kinds, zoomed, strict=True)]
        ranges = "; ".join(f"{s.zmin:.3g} to {s.zmax:.3g}" for s in scale)
        scale_note = (
            " Each zoom panel has its own colour scale, fitted to the values it shows (not the "
            f"window's; bar beside it): {ranges}."
        )
    figure(
        panel_grid(zoomed, scale, columns=grid_columns(len(zoomed), 2), cell_px=11),
        key + "_zoom",
        caption=f"rows {r0}-{r1 - 1}, columns {c0}-{c1 - 1}: every value exact on hover"
        + (
            "; a click on a cell picks its pair (i, j)"
            if (first.y_symbol, first.x_symbol) == ("i", "j")
            else ""
        )
        + "."
        + scale_note,  # fmt: skip
    )


def source_caption(params: ViewParams, *, scheme: str = "shaw") -> None:
    """Say, under the title, where the page's numbers come from (``TensorSource.caption``), and
    which of the characters read the model cannot read (:func:`unread_warning`)."""
    st.caption(source_of(params).caption(scheme))
    unread_warning(params, scheme)


def unread_warning(params: ViewParams, scheme: str = "shaw") -> None:
    """Flag the characters of the view's text that the model of ``scheme`` reads as the one
    unknown id: how many, and which (escaped: markdown, HTML and $ show literally)."""
    source = source_of(params)
    model = "shaw" if scheme == "each" else scheme  # the family shares one vocabulary
    line = unread_line(source.unread(model), len(source.text() or ""))
    if line:
        st.warning(line, icon=":material/warning:")
