"""Figure helpers: numpy arrays in, a plotly ``go.Figure`` out. Never shows or saves anything.

Conventions (the same on every chart): row 0 (the first query) at the top, keys along x;
logits on a diverging scale centred at 0, weights on the explorer's log weights scale
(``explorer.figures.scales``, with its log colour bar); masked cells are NaN and
so drawn blank; tick labels only when they are few enough to read, always HTML-escaped (plotly
renders some tags in labels); hover shows i, j, j - i, the table index and the value.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.scales import colourbar_trace, heatmap_colours, make_scale
from explorer.figures.ticks import escape_label, y_axis_margin
from explorer.pair.marks import axes_meta, click_cells

TICK_LABELS_MAX = 32  # more rows or columns than this: numeric ticks only
CELL_TEXT_MAX = 16  # more rows or columns than this: no numbers written in the cells
SCALES = {
    "diverging": "RdBu_r",  # logits and signed values, centred at 0
    "weights": "Blues",  # attention weights: the log weights scale of explorer.figures.scales
    "index": "Viridis",  # table indices and distances
}
MASKED_BACKGROUND = "#d9d9d9"  # what a blank (masked, NaN) cell looks like
PAIR_HOVER = (
    "i=%{y}  j=%{x}<br>j - i=%{customdata[0]}<br>index=%{customdata[1]}"
    "<br>value=%{z:.4g}<extra></extra>"
)
PLAIN_HOVER = "row=%{y}  col=%{x}<br>value=%{z:.4g}<extra></extra>"


def pair_customdata(index: np.ndarray, row_offset: int = 0, col_offset: int = 0) -> np.ndarray:
    """(rows, cols, 2) float32 of [j - i, table index] for a block of (query, key) pairs.

    ``row_offset`` / ``col_offset`` are the query / key positions of the block's first cell.
    """
    rows, cols = index.shape
    i = np.arange(row_offset, row_offset + rows)[:, None]
    j = np.arange(col_offset, col_offset + cols)[None, :]
    distance = np.broadcast_to(j - i, index.shape)
    return np.stack([distance, index], axis=-1).astype(np.float32)


def axis_suffix(index: int) -> str:
    """Plotly's suffix of subplot ``index``'s axes (0-based): "" for the first (x, y), then
    "2", "3", ... (x2, y2), numbered row by row."""
    return "" if index == 0 else str(index + 1)


def _axis(labels: Sequence[str] | None, count: int, offset: int = 0) -> dict:
    """Tick labels of ``count`` positions from ``offset``: ``labels`` is indexed by position."""
    if labels is not None and count <= TICK_LABELS_MAX:
        if len(labels) < offset + count:
            raise ValueError(
                f"axis labels are indexed by position: {len(labels)} labels cannot name "
                f"positions {offset}-{offset + count - 1}"
            )
        values = np.arange(offset, offset + count)
        text = [escape_label(labels[v]) for v in values]
        return {"tickmode": "array", "tickvals": values, "ticktext": text}
    return {"tickmode": "auto"}


def heatmap(
    z: np.ndarray,
    *,
    title: str = "",
    x_title: str = "key j",
    y_title: str = "query i",
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    scale: str = "diverging",
    customdata: np.ndarray | None = None,
    hovertemplate: str | None = None,
    cell_text: np.ndarray | None = None,
    row_offset: int = 0,
    col_offset: int = 0,
    zrange: tuple[float, float] | None = None,
    height: int | None = None,
    pair_axes: bool = False,
) -> go.Figure:
    """One matrix as a heatmap. ``z`` (rows, cols), NaN = masked (drawn blank).

    ``customdata`` with :data:`PAIR_HOVER` (the default when given) shows i, j, j - i, index.
    ``cell_text`` (strings, same shape) is written into the cells when the matrix is small.
    ``row_offset`` / ``col_offset`` label the first row / column as position ``row_offset`` /
    ``col_offset`` (for a window of a larger matrix); ``x_labels`` / ``y_labels`` are indexed by
    position, so they name at least every position up to the last one drawn. With
    ``pair_axes`` the rows and columns are the view's query and key positions: a click on a
    cell picks the pair and the picked pair is outlined (:mod:`explorer.pair.marks`).
    """
    z = np.asarray(z, dtype=np.float32)
    if z.ndim != 2:
        raise ValueError(f"heatmap needs a 2-D array, got shape {z.shape}")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    rows, cols = z.shape
    trace: dict = {
        "z": z,
        "x": np.arange(col_offset, col_offset + cols),
        "y": np.arange(row_offset, row_offset + rows),
        "colorscale": SCALES[scale],
        "hoverongaps": False,
        "colorbar": {"thickness": 12, "len": 0.9},
    }
    finite = z[np.isfinite(z)]
    if scale == "weights":  # every page's weights policy, with its log bar (added below)
        if zrange is not None:
            raise ValueError("the weights scale fits its own range: pass no zrange")
        weights = make_scale("weights", [z])
        trace.update(heatmap_colours(weights))
    elif zrange is not None:
        trace["zmin"], trace["zmax"] = zrange
    elif scale == "diverging":
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        bound = bound if bound > 0 else 1.0
        trace.update(zmin=-bound, zmax=bound, zmid=0.0)
    if customdata is not None:
        trace["customdata"] = np.asarray(customdata, dtype=np.float32)
        trace["hovertemplate"] = hovertemplate or PAIR_HOVER
    else:
        trace["hovertemplate"] = hovertemplate or PLAIN_HOVER
    if cell_text is not None and max(rows, cols) <= CELL_TEXT_MAX:
        trace["text"] = np.vectorize(lambda s: html.escape(str(s), quote=False))(cell_text)
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 10}
    x_axis = {
        "title": {"text": x_title},
        "side": "top",
        "range": [col_offset - 0.5, col_offset + cols - 0.5],
        **_axis(x_labels, cols, col_offset),
    }
    if cols <= TICK_LABELS_MAX and x_labels is not None:
        x_axis["tickangle"] = -45 if max(map(len, x_labels), default=0) > 3 else 0
    y_axis = {  # reversed range: the first query at the top
        "title": {"text": y_title},
        "range": [row_offset + rows - 0.5, row_offset - 0.5],
        **_axis(y_labels, rows, row_offset),
    }
    layout = {
        "title": {
            "text": html.escape(title, quote=False),
            "x": 0,
            "xref": "container",
            "y": 0.99,
            "yref": "container",
            "yanchor": "top",
            "font": {"size": 14},
        },
        "xaxis": x_axis,
        "yaxis": y_axis,
        "height": height or int(np.clip(130 + 22 * rows, 280, 560)),
        # the y axis's room given, not found by plotly's automargin (a second draw)
        "margin": {
            "l": y_axis_margin(y_labels if rows <= TICK_LABELS_MAX else None, rows, row_offset),
            "r": 10,
            "t": 100 if title else 70,
            "b": 10,
        },
        "plot_bgcolor": MASKED_BACKGROUND,
    }
    data = [{"type": "heatmap", **trace}]
    if pair_axes:
        rows_at, cols_at = (row_offset, row_offset + rows - 1), (col_offset, col_offset + cols - 1)
        data[0]["meta"] = axes_meta("i", "j", rows_at, cols_at)
        data.extend(click_cells(data))
    if scale == "weights":
        data.append(colourbar_trace(weights, {"len": 0.9}))
    # One constructor call: plotly's update_* path machinery costs ~15 ms a figure.
    fig = go.Figure({"data": data, "layout": layout})
    return fig
