"""The Check page's figures: one head of the definition's output, and with an upload the
definition, the visitor's output and their difference side by side, every differing cell
outlined. Cells the convention does not compare are blank.

The differing cells are hatched and outlined by one trace per panel (each run of them along a
row one rectangle), not one layout shape per cell: plotly redraws every shape on every hover
and slows past a few hundred, and 64 x 64 cells can differ.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.scales import colour_range, make_scale
from relpos_core.check import KINDS

INK = "#111111"  # the hatch and outline of differing cells


def one_head(array: np.ndarray, head: int) -> np.ndarray:
    """The 2-D matrix a figure draws: batch 0 and head ``head`` of an output with those axes."""
    z = np.asarray(array, dtype=np.float64)
    while z.ndim > 3:
        z = z[0]
    return z[head] if z.ndim == 3 else z


def head_count(array: np.ndarray) -> int:
    """How many heads the drawn output has (1 for a matrix without a head axis)."""
    shape = np.shape(array)
    return shape[-3] if len(shape) >= 3 else 1


def axis_titles(kind: str) -> tuple[str, str]:
    """(rows, columns) of the drawn matrix in the kind's words."""
    axes = KINDS[kind].axes[-2:] if len(KINDS[kind].axes) >= 2 else ("row", "column")
    return axes[0], axes[1]


def value_scale(kind: str, matrices: list[np.ndarray]):
    """Integers (T5's buckets) on the index scale over their range; values diverging at 0, a
    few large ones saturating rather than washing the rest out."""
    if KINDS[kind].exact:
        finite = np.concatenate([m[np.isfinite(m)] for m in matrices])
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return make_scale("index", matrices, zrange=(low, max(high, low + 1)))
    return make_scale("diverging", matrices, zrange=colour_range(matrices).zrange)


def panels_of(kind: str, titled: dict[str, np.ndarray], compared: np.ndarray) -> list[Panel]:
    rows, cols = axis_titles(kind)
    # a memory cell layout's columns are the memory's keys, then the segment's: column c is not
    # key j
    key = "c" if KINDS[kind].pair == "memory cell" else "j"
    symbols = {"query": "i", "key": key, "position": "p", "channel": "c"}
    return [
        Panel(
            np.where(compared, z, np.nan),
            title=title,
            x_title=cols,
            y_title=rows,
            x_symbol=symbols.get(cols, "c"),
            y_symbol=symbols.get(rows, "r"),
        )
        for title, z in titled.items()
    ]


def reference_figure(kind: str, output: np.ndarray, compared: np.ndarray, head: int):
    """The definition's output on the page's inputs, one head; (figure, caption)."""
    z, mask = one_head(output, head), one_head(compared, head).astype(bool)
    panels = panels_of(kind, {"the definition": z}, mask)
    scale = value_scale(kind, [p.z for p in panels])
    blank = " Cells the convention does not compare are blank." if not mask.all() else ""
    return panel_grid(panels, scale, max_width=520), scale.caption + blank


def comparison_figure(
    kind: str, expected: np.ndarray, got: np.ndarray, differing: np.ndarray, compared, head: int
) -> tuple[go.Figure, str]:
    """The definition, the upload and upload - definition, one head; the cells that differ
    outlined on all three; (figure, caption)."""
    want, mine = one_head(expected, head), one_head(got, head)
    mask = one_head(compared, head).astype(bool)
    bad = one_head(differing, head).astype(bool) & mask
    panels = panels_of(
        kind, {"the definition": want, "yours": mine, "yours - definition": mine - want}, mask
    )
    pair = value_scale(kind, [panels[0].z, panels[1].z])
    # nothing differs: the difference on the values' own scale, white (rounding is not news);
    # something does: on a scale of its own, so a small real difference shows
    bound = max(abs(pair.zmin), abs(pair.zmax)) or 1.0
    zrange = None if bad.any() else (-bound, bound)
    gap = make_scale("diverging", [panels[2].z], zrange=zrange)
    fig = panel_grid(panels, [pair, pair, gap], columns=3, image_side=256)
    fig.add_traces(hatch_traces(fig, len(panels), bad))
    count = int(bad.sum())
    outlined = (
        f"Every differing cell of this head is hatched and outlined in black ({count} of "
        f"{int(mask.sum())} compared)."
        if count
        else "No cell of this head differs."
    )
    shared = (
        f"one colour scale, {pair.zmin:.3g} to {pair.zmax:.3g}"
        f"{'' if KINDS[kind].exact else ', centred at 0'}"
    )
    scales = (
        f"The definition and yours share {shared}; the difference has its own, "
        f"{gap.zmin:.3g} to {gap.zmax:.3g}, centred at 0."
        if bad.any()
        else f"The definition and yours share {shared}; the difference, within rounding, is "
        f"drawn on ±{bound:.3g}, the values' own size, so it is white."
    )
    return fig, f"{outlined} {scales}"


def hatch_traces(fig: go.Figure, panels: int, bad: np.ndarray) -> list[dict]:
    """For each of the first ``panels`` subplots, one trace that hatches and outlines every
    cell ``bad`` marks (bool, rows x cols): each run of differing cells along a row is one
    closed rectangle in data units (so it fits cells of any shape, and a zoom), filled with a
    diagonal hatch that leaves the cell's colour showing between its lines; no hover (the
    heatmap's own hover and clicks pass through)."""
    padded = np.pad(bad, ((0, 0), (1, 1))).astype(np.int8)
    step = np.diff(padded, axis=1)
    rows, first = np.nonzero(step == 1)  # row-major: each run's start and end pair up
    last = np.nonzero(step == -1)[1] - 1
    if not rows.size:
        return []
    left, right, top, bottom = first - 0.5, last + 0.5, rows - 0.5, rows + 0.5
    gap = np.full(rows.size, np.nan)
    x = np.stack([left, right, right, left, left, gap], 1).ravel().astype(np.float32)
    y = np.stack([top, top, bottom, bottom, top, gap], 1).ravel().astype(np.float32)
    pattern = {"shape": "/", "fgcolor": INK, "bgcolor": "rgba(0,0,0,0)", "size": 6}
    return [
        {"type": "scatter", "mode": "lines", "x": x, "y": y, "fill": "toself",
         "fillcolor": "rgba(0,0,0,0)", "fillpattern": {**pattern, "solidity": 0.2},
         "line": {"color": INK, "width": 1}, "hoverinfo": "skip", "showlegend": False,
         "name": "differing cells", "xaxis": fig.data[t].xaxis or "x",
         "yaxis": fig.data[t].yaxis or "y"}
        for t in range(panels)
    ]  # fmt: skip
