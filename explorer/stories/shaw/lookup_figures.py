"""The Lookup table page's figures: the distances and their clipped index, the tables w^K and
w^V, one slice of the gathered a^K, and the arrays its download holds."""

from __future__ import annotations

import numpy as np

from explorer.figures.heatmaps import Panel, Scale, panel_grid
from explorer.figures.scales import make_scale
from explorer.figures.unread import blank, hidden_keys, untrained_line
from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.shaw.panels import Drawn, hidden_line, window_axes, window_hidden
from explorer.stories.shaw.views import LookupView
from explorer.weights.reading import axis_labels
from explorer.weights.source import source_of


def distance_figure(params: ViewParams, view: LookupView) -> Drawn:
    """j - i and its clipped value, each on its own scale."""
    n, k = params.length, params.k
    at = window_axes(params)
    panels = [
        Panel(view.distance, title="distance j - i", cell_text=view.distance.astype(int), **at),
        Panel(view.clipped, title=f"clipped to ±{k}", cell_text=view.clipped.astype(int), **at),
    ]
    # Each on its own scale: at n = 1024 j - i spans ±1023 and a shared scale would blank ±k.
    start, stop = params.window
    spans = f"±{n - 1}"
    if params.windowed:  # what the panel draws first, then the whole sequence
        spans = f"±{stop - start - 1} in the window drawn (±{n - 1} over all {n} positions)"
    scales = [
        make_scale("diverging", [view.distance]),
        make_scale("diverging", [view.clipped], zrange=(-max(k, 1), max(k, 1))),
    ]
    return Drawn(
        panel_grid(panels, scales, columns=2, max_width=700),
        panels,
        scales,
        shape=(n, n),
        caption=f"Each panel has its own scale centred at 0: j - i spans {spans}, the clipped "
        f"distances stop at ±{k}, so the band |j - i| <= {k} is what the right panel shows.",
    )


def index_figure(params: ViewParams, view: LookupView) -> Drawn:
    """The row of the table each pair reads, clip(j - i, k) + k."""
    n, k = params.length, params.k
    scale = make_scale("index", [view.index], zrange=(0, max(2 * k, 1)))
    panel = Panel(
        view.index,
        title="index into the table",
        cell_text=view.index.astype(int),
        **window_axes(params),
    )
    return Drawn(
        panel_grid([panel], scale, max_width=340),
        [panel],
        scale,
        shape=(n, n),
        caption=f"values 0..{2 * k}",
    )


def _rows_hold(k: int) -> str:
    """Which w_r the table rows 0..2k hold."""
    if k == 0:
        return "its one row 0 holds w_0"
    return f"rows 0..{2 * k} hold w_-{k} .. w_+{k} (row {k}: w_0)"


def tables_figure(params: ViewParams, view: LookupView) -> Drawn:
    """w^K and w^V side by side, one row per clipped distance, on one scale; the rows training
    never updated (a trained causal model's w_+1..w_+k) blank, left out of the scale."""
    k = params.k
    untrained = source_of(params).never_trained()
    rows = np.isin(np.arange(-k, k + 1), untrained)[:, None]  # (2k+1, 1)
    panels = [
        Panel(
            blank(z, rows if untrained else None),
            title=name,
            x_title="channel",
            y_title="table row r + k",  # one convention at every k: the index map's values
            x_symbol="channel",
            y_symbol="row",
        )
        for z, name in ((view.table_k, "w^K"), (view.table_v, "w^V"))
    ]
    scale = make_scale("diverging", [p.z for p in panels])
    return Drawn(
        panel_grid(panels, scale, columns=2),
        panels,
        scale,
        shape=view.table_k.shape,
        caption=f"w^K and w^V: table row r + k holds w_r, so {_rows_hold(k)}. "
        + (untrained_line(untrained) + " " if untrained else "")
        + scale.caption,
    )


def channel_figure(params: ViewParams, block: np.ndarray, channel: int, scale: Scale) -> Drawn:
    """a^K[:, :, channel] on the window (``block``, W x W), on the tables' ``scale``."""
    n = params.length
    hidden = window_hidden(params)
    panel = Panel(blank(block, hidden), title=f"a^K[:, :, {channel}]", **window_axes(params))
    return Drawn(
        panel_grid([panel], scale),
        [panel],
        scale,
        shape=(n, n),
        caption="Same colour scale as the tables."
        + (" " + hidden_line(params) if hidden is not None else ""),
        latex=rf"a^K_{{ij}}[{channel}] = w^K_{{\operatorname{{clip}}(j - i,\, k)}}[{channel}]",
    )


def row_figure(params: ViewParams, block: np.ndarray, query: int, scale: Scale) -> Drawn:
    """a^K[query, window] (``block``, W x d): the vectors one query meets, on the tables' scale."""
    n, k, d = params.length, params.k, params.head_dim
    start, stop = params.window
    _, cols = axis_labels(params)
    hidden = hidden_keys(
        1, stop - start, causal=params.causal, row_offset=query, col_offset=start,
        keys=n, padded=params.n_pad,
    )  # fmt: skip  # (1, W): the window's keys hidden from this query
    hidden = None if hidden is None else hidden.T  # (W, 1): key j is row j of the block
    panel = Panel(
        blank(block, hidden),
        title=f"a^K[{query}, :, :] (query {query})",
        x_title="channel",
        y_title="key j",
        y_labels=cols,
        row_offset=start,
        x_symbol="channel",
        y_symbol="j",
    )
    return Drawn(
        panel_grid([panel], scale),
        [panel],
        scale,
        shape=(n, d),
        caption=("" if not params.windowed else f"keys {start}-{stop - 1} of {n}. ")
        + "Same colour scale as the tables; row j is table row "
        + f"clip(j - {query}, {k}) + {k}."
        + (" " + hidden_line(params) if hidden is not None else ""),
        latex=rf"a^K_{{{query}j}} = w^K_{{\operatorname{{clip}}(j - {query},\, k)}}",
    )


def lookup_arrays(params: ViewParams, view: LookupView) -> dict[str, Labelled]:
    """What the page's download holds: the distances, the index and both tables."""
    start, stop = params.window
    labels = position_labels(params, start, stop)
    pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
    distances = [str(r) for r in range(-params.k, params.k + 1)]
    return {
        "distance": Labelled(view.distance, "j - i", **pairs),
        "clipped": Labelled(view.clipped, "clip(j - i, k)", **pairs),
        "index": Labelled(view.index, "clip(j - i, k) + k", **pairs),
        "w_K": Labelled(
            view.table_k,
            "w^K, row r = distance r - k",
            rows=distances,
            corner="distance \\ channel",
        ),
        "w_V": Labelled(
            view.table_v,
            "w^V, row r = distance r - k",
            rows=distances,
            corner="distance \\ channel",
        ),
    }


def channel_arrays(params: ViewParams, chart: Drawn, channel: int) -> dict[str, Labelled]:
    """The a^K channel the page draws (:func:`channel_figure`), for its download."""
    labels = position_labels(params, *params.window)
    return {
        f"a_K_channel{channel}": Labelled(
            chart.panels[0].z,
            f"a^K_ij[{channel}] = w^K[clip(j - i, k) + k, {channel}] (w_K.csv column "
            f"{channel} looked up by index.csv) on the window, masked cells empty",
            rows=labels,
            cols=labels,
            corner="query i \\ key j",
        )
    }


def row_arrays(params: ViewParams, chart: Drawn, query: int) -> dict[str, Labelled]:
    """The a^K query row the page draws (:func:`row_figure`), for its download."""
    return {
        f"a_K_row{query}": Labelled(
            chart.panels[0].z,
            f"a^K_{query}j = w^K[clip(j - {query}, k) + k] (a row of w_K.csv) for each key j "
            "of the window, keys hidden from the query empty",
            rows=position_labels(params, *params.window),
            cols=[str(c) for c in range(params.head_dim)],
            corner="key j \\ channel",
        )
    }
