"""The picked pair on a heatmap figure: cells a click can pick, and the pair outlined.

A heatmap trace says what its axes index in ``meta = {"axes": [row symbol, column symbol]}``
(``["i", "j"]`` for query and key positions, ``["row", "channel"]`` for a table w^K). Plotly
selects points of a scatter, not cells of a heatmap, so a pair panel small enough gets one
transparent marker per cell (:func:`click_cells`, which also carries the cell's hover text);
a click returns the marker's (x, y) = (j, i). :func:`pair_shapes` outlines, on every panel
whose axes name them, the pair's cell (i, j), the row or column of a symbol alone (the table
row clip(j - i, k) + k of w^K, key j's row of a^K_i), and the diagonal j - i of the pair
(dotted; the pages' pair notes say what it is: :func:`diagonal_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

PAIR_AXES = ["i", "j"]
# Cells of a figure that get click markers (each carries its hover text, about 40 bytes a
# cell on the wire); beyond, the exact-value zoom and the boxes pick.
CLICK_CELLS_MAX = 2048
# The pair's outline is the Skew page's pick colour on a dark edge: drawn twice, it stays
# visible on every colour scale (Viridis ends in yellow, RdBu and Blues in dark blue).
HALO, INK = "#111111", "#f2b701"
DIAGONAL = {"color": "#444444", "width": 1, "dash": "dot"}
SMALL_SIDE = 128  # a panel this long or longer marks a cell with a cross, not a box


def click_marker(size: float, **style: object) -> dict:
    """The marker of a click layer: transparent, and one point of the trace drawn
    (``maxdisplayed``). plotly.js finds the point under the cursor, for the hover label and for
    a click's selection, in the trace's data, not among the drawn nodes, so every cell still
    answers, while the browser makes one SVG path instead of one per cell (a 45 x 45 map's 2025
    paths took 200 of its 236 ms to draw)."""
    return {"size": size, "color": "rgba(0,0,0,0)", "maxdisplayed": 1, **style}


def axes_meta(
    row_symbol: str,
    col_symbol: str,
    rows: tuple[int, int],
    cols: tuple[int, int],
    within: Mapping[str, tuple[int, int]] | None = None,
    clip: int | None = None,
) -> dict:
    """A trace's meta: what its axes index, and the first and last position along each;
    ``within``: the positions of the sequence the trace belongs to (symbol -> first, last),
    where a panel of one symbol (key j's row of K) shows a pair only if the whole pair lies;
    ``clip``: the clip distance of a table whose rows are clip(j - i, clip) + clip (a trained
    model's own, where it is not the sidebar's k)."""
    meta: dict = {"axes": [row_symbol, col_symbol], "rows": list(rows), "cols": list(cols)}
    if within:
        meta["within"] = {symbol: list(span) for symbol, span in within.items()}
    if clip is not None:
        meta["clip"] = clip
    return meta


def axes_of(trace: Mapping) -> list[str] | None:
    meta = trace.get("meta")
    return meta.get("axes") if isinstance(meta, Mapping) else None


def _cells(trace: Mapping) -> int:
    z = trace.get("z")
    return 0 if z is None else int(np.asarray(z).size)


def click_cells(traces: Sequence[dict]) -> list[dict]:
    """One transparent marker per cell of every (i, j) heatmap trace, when the figure's pair
    cells number at most CLICK_CELLS_MAX (else none: its images or large panels are picked
    through the exact-value zoom or the sidebar's boxes).

    Each heatmap handed a marker layer gives its hover to the markers (the markers lie on top
    and would otherwise hide it): the same text, and "hidden by the mask" on a blank cell.
    Mutates those heatmap traces (hover off) and returns the marker traces to append.
    """
    pair = [t for t in traces if t.get("type") == "heatmap" and axes_of(t) == PAIR_AXES]
    if not pair or sum(_cells(t) for t in pair) > CLICK_CELLS_MAX:
        return []
    markers = []
    for trace in pair:
        z = np.asarray(trace["z"], dtype=np.float32)
        xs, ys = np.asarray(trace["x"]), np.asarray(trace["y"])
        grid_x = np.broadcast_to(xs[None, :], z.shape).ravel().astype(np.int16)
        grid_y = np.broadcast_to(ys[:, None], z.shape).ravel().astype(np.int16)
        hovertext = trace.get("hovertext")
        marker: dict = {
            "type": "scatter",
            "mode": "markers",
            "x": grid_x,
            "y": grid_y,
            "xaxis": trace.get("xaxis", "x"),
            "yaxis": trace.get("yaxis", "y"),
            "marker": click_marker(6),
            "showlegend": False,
            "name": "cells",
        }
        if hovertext is not None:
            values = [
                f"value = {v:.4g}" if np.isfinite(v) else "hidden by the mask"
                for v in z.ravel().tolist()
            ]
            marker["text"] = [
                f"{h}<br>{v}" for h, v in zip(np.asarray(hovertext).ravel(), values, strict=True)
            ]
            marker["hovertemplate"] = "%{text}<extra></extra>"
        else:  # the trace's own template, its %{z} read from the markers' last customdata
            own = trace.get("customdata")
            own = np.zeros((z.size, 0), np.float32) if own is None else np.asarray(own)
            own = own.reshape(z.size, -1).astype(np.float32)
            column = own.shape[1]
            template = trace.get("hovertemplate") if hovertext is None else None
            template = template or "i = %{y}<br>j = %{x}<br>value = %{z:.4g}<extra></extra>"
            marker["customdata"] = np.concatenate([own, z.reshape(-1, 1)], axis=1)
            marker["hovertemplate"] = template.replace("%{z", f"%{{customdata[{column}]")
            trace.pop("customdata", None)
        trace.pop("hovertext", None)
        trace["hoverinfo"] = "skip"
        trace.pop("hovertemplate", None)
        markers.append(marker)
    return markers


def pair_shapes(traces: Sequence[Mapping], marks: Mapping[str, int]) -> list[dict]:
    """Shapes that outline the pair on every trace whose axes it names (see the module
    docstring); a trace's extent is read from its meta."""
    shapes: list[dict] = []
    for trace in traces:
        meta = trace.get("meta")
        axes = axes_of(trace)
        if axes is None or "rows" not in meta:
            continue
        within = meta.get("within", {})
        if any(not lo <= marks.get(s, lo) <= hi for s, (lo, hi) in within.items()):
            continue  # the pair is not in this trace's sequence: no row of it is outlined
        own = marks
        if "clip" in meta and "r" in marks:  # the row this table's own clip distance reads
            c = meta["clip"]
            own = {**marks, "row": max(-c, min(c, marks["r"])) + c}
        (r0, r1), (c0, c1) = meta["rows"], meta["cols"]
        refs = {"xref": trace.get("xaxis", "x"), "yref": trace.get("yaxis", "y")}
        row, col = own.get(axes[0]), own.get(axes[1])
        if axes == PAIR_AXES and "r" in marks:
            shapes.extend(_diagonal(marks["r"], r0, r1, c0, c1, refs))
        row_in = row is not None and r0 <= row <= r1
        col_in = col is not None and c0 <= col <= c1
        whole_row = (
            {"x0": c0 - 0.5, "x1": c1 + 0.5, "y0": row - 0.5, "y1": row + 0.5} if row_in else {}
        )
        whole_col = (
            {"x0": col - 0.5, "x1": col + 0.5, "y0": r0 - 0.5, "y1": r1 + 0.5} if col_in else {}
        )
        if row_in and col_in and max(r1 - r0, c1 - c0) < SMALL_SIDE:
            box = {"x0": col - 0.5, "x1": col + 0.5, "y0": row - 0.5, "y1": row + 0.5}
            shapes.extend(_outline(box, refs))
        elif row_in and col_in:  # a cell is smaller than a pixel here: a cross through it
            shapes.extend(_outline(whole_row, refs, 1) + _outline(whole_col, refs, 1))
        elif row_in and col is None:  # the whole row: a table row, a key's row of a^K_i
            shapes.extend(_outline(whole_row, refs))
        elif col_in and row is None:
            shapes.extend(_outline(whole_col, refs))
    return shapes


def diagonal_text(distance: int) -> str:
    """What the dotted line through a picked pair's cell is, for a caption."""
    return f"the dotted diagonal is j - i = {distance}, the cells at the pair's distance"


def _outline(box: dict, refs: dict, width: float = 2) -> list[dict]:
    common = {"type": "rect", **box, **refs, "layer": "above", "name": "picked pair"}
    return [
        {**common, "line": {"color": HALO, "width": width + 2}},
        {**common, "line": {"color": INK, "width": width}},
    ]


def _diagonal(r: int, r0: float, r1: float, c0: float, c1: float, refs: dict) -> list[dict]:
    """The cells with j - i = r inside the panel, as one dotted line through their centres."""
    first, last = max(r0, c0 - r), min(r1, c1 - r)
    if first > last:
        return []
    return [
        {
            "type": "line",
            "x0": first + r - 0.5,
            "y0": first - 0.5,
            "x1": last + r + 0.5,
            "y1": last + 0.5,
            **refs,
            "line": DIAGONAL,
            "layer": "above",
            "name": "picked distance",
        }
    ]


def clicked_pair(event: Mapping | None) -> tuple[int, int] | None:
    """(i, j) of the last clicked cell marker in a plotly selection event, else None (a cell
    marker sits at x = j, y = i; no other trace of a heatmap figure can be selected)."""
    points = event["selection"]["points"] if event else []
    for point in reversed(points):
        x, y = point.get("x"), point.get("y")
        if isinstance(x, int | float) and isinstance(y, int | float):
            return int(y), int(x)
    return None


def distance_shapes(layout: Mapping, distance: int) -> list[dict]:
    """A vertical line at x = ``distance`` on every x axis of a chart against j - i (each
    subplot of a small-multiples chart), labelled once by the caller's legend or caption."""
    axes = sorted(key for key in layout if key.startswith("xaxis")) or ["xaxis"]
    shapes = []
    for key in axes:
        suffix = key[len("xaxis") :]
        shapes.append(
            {
                "type": "line",
                "x0": distance,
                "x1": distance,
                "y0": 0,
                "y1": 1,
                "xref": f"x{suffix}",
                "yref": f"y{suffix} domain",
                "line": {"color": HALO, "width": 1.5},
                "layer": "above",
                "name": "picked distance",
            }
        )
    return shapes
