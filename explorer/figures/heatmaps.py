"""Matrices as figures at any size: small multiples on one colour scale, large ones as images.

A panel up to ``IMAGE_SIDE`` rows and columns is a plotly heatmap with exact hover values; a larger
one is a colour-mapped PNG, and the page shows exact values in a zoomed inset (:func:`inset_bounds`)
(see ``panel_traces``). Every panel has square cells, row 0 at the top, masked (NaN) cells blank,
and one colour scale shared by all panels of a figure (see ``scales`` for the four kinds).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.panel_traces import IMAGE_SIDE, Panel, panel_trace
from explorer.figures.plots import MASKED_BACKGROUND, axis_suffix
from explorer.figures.scales import Scale, colourbar_trace, per_panel
from explorer.figures.ticks import (
    LABELS_ALL_MAX,
    ROW_MIN_PX,
    Y_AXIS_BASE_PX,
    axis_ticks,
    slant_reach,
    thinned_note,
    y_axis_margin,
)
from explorer.frame.screen import figure_width, is_phone
from explorer.pair.marks import click_cells

CELL_MAX_PX = 40  # a small matrix is drawn with cells this large
PANEL_MAX_PX = 420  # the longest side of a panel
ELONGATED = 8  # a panel this many times longer than wide gets non-square cells
TITLE_PX = 34  # room above each panel for its title (aligned across a row of panels)
SUBTITLE_PX = 14  # and for a second, smaller line under it (Panel.subtitle)
AXIS_PX = 40  # room above a panel for its numeric ticks and axis title (60 for token labels)
ROW_GAP_PX = 18  # between a panel's lowest tick and the title of the panel below
LEFT_PX, RIGHT_PX, BAR_PX = 60, 10, 70  # a grid's margins and its colour bar
PANEL_MIN_PX = 120  # a grid drops to fewer columns rather than draw a panel narrower


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
    # room for the y axes' titles and labels, so plotly's automargin never draws it twice
    left = max(
        [LEFT_PX]
        + [y_axis_margin(p.y_labels, np.asarray(p.z).shape[0], p.row_offset) for p in panels]
    )
    # a panel right of another shows its own query labels in the gap (its title only left)
    gap_x = max(gap_x, (gap_x - 70) + left - Y_AXIS_BASE_PX + 12)
    # slanted key labels rise to the right past a panel: the colour bar beside it moves over
    slant = max(slant_reach(p.x_labels, np.asarray(p.z).shape[1], p.col_offset) for p in panels)
    gap_x += round(slant) if own else 0
    right, colourbar = RIGHT_PX, BAR_PX + round(slant)
    columns = max(1, min(columns or len(panels), len(panels)))
    tallest = max(np.asarray(p.z).shape[0] for p in panels)
    widest = max(np.asarray(p.z).shape[1] for p in panels)
    labelled = any(  # some axis shows token labels (see axis_ticks)
        labels is not None and side <= LABELS_ALL_MAX
        for p in panels
        for labels, side in ((p.x_labels, widest), (p.y_labels, tallest))
    )
    square_map = tallest == widest <= LABELS_ALL_MAX  # kept square with rows of ROW_MIN_PX
    while columns > 1 and (
        _usable(max_width, columns, gap_x, left, colourbar) / columns < PANEL_MIN_PX
        or square_map
        and _usable(max_width, columns, gap_x, left, colourbar) / columns / tallest < ROW_MIN_PX
        or columns > 2
        and labelled
        and cell_px is None
        and _usable(max_width, columns, gap_x, left, colourbar) / columns / max(tallest, widest)
        < ROW_MIN_PX
    ):  # fewer panels to a row rather than panels too small to read, or (down to two a row)
        columns -= 1  # than token labels too close to read: closer, an axis labels every m-th
    grid_rows = math.ceil(len(panels) / columns)
    usable = _usable(max_width, columns, gap_x, left, colourbar)
    side_px = min(PANEL_MAX_PX, usable / columns)  # the longest side of a panel
    if cell_px is None:
        cell_px = min(CELL_MAX_PX, side_px / max(tallest, widest))
    # Square cells, unless a panel is so elongated (an (n, d) output at n = 512) that its
    # short side would be a sliver: then each axis gets its own cell size.
    square = max(tallest, widest) <= ELONGATED * min(tallest, widest)
    if square:  # a given cell size still leaves the panel inside the screen (a phone's 350 px)
        cell_px = min(cell_px, side_px / max(tallest, widest))
    panel_w = max(60.0, cell_px * widest if square else min(side_px, max(cell_px * widest, 160)))
    panel_h = max(40.0, cell_px * tallest if square else min(PANEL_MAX_PX, cell_px * tallest))
    if tallest <= LABELS_ALL_MAX and panel_h < ROW_MIN_PX * tallest:
        # every row of a short panel visible and labelled: it grows taller than its cells are
        # wide; a square map (i, j) grows as wide too (it stays square), but not past a phone's
        # screen, where the chart would be shrunk to fit and its rows with it: there it stays
        # within the width, taller than wide, every row readable
        panel_h = float(ROW_MIN_PX * tallest)
        if tallest == widest and (not is_phone() or panel_h <= usable / columns):
            panel_w = panel_h
        else:
            square = False
    labels_px = (  # slanted labels stand about as tall as they reach, the axis title above
        max(60, round(slant) + 30)
        if any(p.x_labels is not None and widest <= LABELS_ALL_MAX for p in panels)
        else AXIS_PX
    )
    title_px = TITLE_PX + SUBTITLE_PX * any(p.subtitle for p in panels)
    row_h = panel_h + title_px + labels_px + ROW_GAP_PX
    top = 40 if title else 10
    height = int(top + grid_rows * row_h + 30)
    width = int(left + columns * panel_w + gap_x * (columns - 1) + right + colourbar)
    plot_w = width - left - right - colourbar
    plot_h = height - top - 30
    data, layout = [], {}
    annotations, bars = [], []
    for t, panel in enumerate(panels):
        r, c = divmod(t, columns)
        axis = axis_suffix(t)
        data.append(panel_trace(panel, scales[t], axis, image_side))
        z = np.asarray(panel.z)
        x0 = c * (panel_w + gap_x) / plot_w
        x1 = x0 + panel_w / plot_w
        y1 = 1 - (r * row_h + title_px + labels_px) / plot_h
        y0 = y1 - panel_h / plot_h
        rows, cols = z.shape
        x_ticks = axis_ticks(panel.x_labels, cols, panel.col_offset, panel_w, vertical=False)
        y_ticks = axis_ticks(panel.y_labels, rows, panel.row_offset, panel_h)
        x_title = panel.x_title + thinned_note(x_ticks, cols)
        y_title = (panel.y_title + thinned_note(y_ticks, rows)) if c == 0 else ""
        layout[f"xaxis{axis}"] = {
            "domain": [max(0.0, x0), min(1.0, x1)],
            "side": "top",
            "range": [panel.col_offset - 0.5, panel.col_offset + cols - 0.5],
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            "title": {"text": x_title, "standoff": 6, "font": {"size": 11}},
            "anchor": f"y{axis}",
            **x_ticks,
        }
        layout[f"yaxis{axis}"] = {
            "domain": [max(0.0, y0), min(1.0, y1)],
            "range": [panel.row_offset + rows - 0.5, panel.row_offset - 0.5],
            # an image trace anchors its axes itself unless told not to
            **({"scaleanchor": f"x{axis}", "scaleratio": 1} if square else {"scaleanchor": False}),
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
            "title": {"text": y_title, "font": {"size": 11}},
            "anchor": f"x{axis}",
            **y_ticks,
        }
        if own:  # this panel's bar, just right of it, as tall as it
            place = {"x": (x1 * plot_w + 8 + slant) / plot_w, "xanchor": "left", "y": (y0 + y1) / 2}
            bars.append(colourbar_trace(scales[t], {**place, "len": y1 - y0, "yanchor": "middle"}))
        if panel.title:
            annotations.append(
                {
                    "text": f"<b>{html.escape(panel.title, quote=False)}</b>" + _subtitle(panel),
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
    beside = {"x": (plot_w + 8 + slant) / plot_w, "xanchor": "left"} if slant else None
    data.extend(bars if own else [colourbar_trace(scale, beside)])
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


def _subtitle(panel: Panel) -> str:
    """A panel's second line, smaller than its title; '' without one."""
    if not panel.subtitle:
        return ""
    return f"<br><span style='font-size:11px'>{html.escape(panel.subtitle, quote=False)}</span>"


def _usable(
    width: int, columns: int, gap_x: int, left: int = LEFT_PX, colourbar: int = BAR_PX
) -> float:
    """Pixels left for the panels of a row: the figure less its margins, bar and gaps."""
    return width - left - RIGHT_PX - colourbar - gap_x * (columns - 1)


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
    shapes = []
    for t in range(panels):
        axis = axis_suffix(t)
        shapes.append({"type": "line", "x0": edge, "x1": edge, "y0": 0, "y1": 1, "line": line,
                       "xref": f"x{axis}", "yref": f"y{axis} domain"})  # fmt: skip
        shapes.append({"type": "line", "y0": edge, "y1": edge, "x0": 0, "x1": 1, "line": line,
                       "xref": f"x{axis} domain", "yref": f"y{axis}"})  # fmt: skip
    note = {
        "text": html.escape(label, quote=False), "x": edge, "y": 1, "xref": "x",
        "yref": "y domain", "xanchor": "left", "yanchor": "bottom", "showarrow": False,
        "font": {"size": 10, "color": "#d62728"},
    }  # fmt: skip
    # one assignment each: add_shape walks every subplot of the grid on every call
    fig.layout.shapes += tuple(shapes)
    fig.layout.annotations += (note,)
    return fig
