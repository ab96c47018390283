"""BertViz's head view as a plotly figure: query tokens left, key tokens right, one line per
(query, key) pair weighted by its attention, one colour per head.

A line's opacity and width grow with its weight. Lines are grouped into a few weight levels per
head (plotly draws one style per trace), so a figure has at most ``heads * LEVELS`` line traces
whatever the number of pairs. At most ``TOKENS_MAX`` tokens and, per head, the
``LINES_PER_HEAD`` heaviest pairs are drawn; :func:`token_view` reports what it left out.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

TOKENS_MAX = 40
LINES_PER_HEAD = 400
WEIGHT_MIN = 0.02  # lighter pairs are not drawn
LEVELS = (0.02, 0.1, 0.25, 0.5)  # lower edges of the weight levels
HEAD_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
)


@dataclass(frozen=True)
class TokenView:
    figure: go.Figure
    tokens_shown: int
    tokens_total: int
    lines_shown: int  # over all heads
    lines_total: int  # pairs with weight >= WEIGHT_MIN, over all heads


def head_colour(head: int) -> str:
    return HEAD_COLOURS[head % len(HEAD_COLOURS)]


FOCUS_SIDES = {"q": "query", "k": "key"}


def parse_focus(value: str) -> tuple[str, int] | None:
    """A token focus as a control stores it: "all", or "q3" / "k3" (query / key position 3).

    >>> parse_focus("q3"), parse_focus("k12"), parse_focus("all")
    (('query', 3), ('key', 12), None)
    """
    if len(value) > 1 and value[0] in FOCUS_SIDES and value[1:].isdigit():
        return FOCUS_SIDES[value[0]], int(value[1:])
    return None


def focus_from_click(points: Sequence[dict]) -> str | None:
    """The focus a click on a token picks ("q3" / "k3"), from a plotly selection's points:
    the last point with a position (a token marker; lines carry none), None without one."""
    for point in reversed(points):
        position = point.get("customdata")
        if position is not None and point.get("x") in (0, 1):
            return f"{'q' if point['x'] == 0 else 'k'}{int(position)}"
    return None


def token_view(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    offset: int = 0,
    heads: Sequence[int] | None = None,
    focus: tuple[str, int] | None = None,
    pair: tuple[int, int] | None = None,
    height_per_token: int = 22,
) -> TokenView:
    """``weights`` (h, n_q, n_k) (NaN = masked) of tokens at positions offset, offset + 1, ...

    ``heads`` picks which heads get lines (all by default); every head keeps its colour.
    ``focus`` ("query" or "key", position) keeps only the lines of that token, as BertViz does
    when a token is hovered; its marker is drawn larger, in red. ``pair`` (i, j), the picked
    pair, is drawn as a black line whatever its weights, which its hover lists by head.
    """
    weights = np.asarray(weights, dtype=np.float32)
    if weights.ndim != 3:
        raise ValueError(f"token_view needs weights (h, n_q, n_k), got shape {weights.shape}")
    h, n_q, n_k = weights.shape
    shown = min(TOKENS_MAX, n_q, n_k)
    block = np.nan_to_num(weights[:, :shown, :shown], nan=0.0)
    heads = list(range(h)) if heads is None else list(heads)
    kept = np.ones(block.shape[1:], dtype=bool)  # (i, j) pairs whose lines may be drawn
    focused = None
    if focus is not None and 0 <= focus[1] - offset < shown:
        focused = focus[1] - offset
        if focus[0] == "query":
            kept[:] = False
            kept[focused, :] = True
        else:
            kept[:] = False
            kept[:, focused] = True
    block = np.where(kept, block, 0.0)
    total = (
        int((block[heads] >= WEIGHT_MIN).sum())
        if focused is not None
        else int((np.nan_to_num(weights, nan=0.0) >= WEIGHT_MIN).sum())
    )
    data: list[dict] = []
    drawn = 0
    for head in heads:
        w = block[head]
        flat = np.argsort(w, axis=None)[::-1][:LINES_PER_HEAD]
        i, j = np.unravel_index(flat, w.shape)
        keep = w[i, j] >= WEIGHT_MIN
        i, j = i[keep], j[keep]
        drawn += len(i)
        edges = (*LEVELS, np.inf)
        first = True
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            sel = (w[i, j] >= lo) & (w[i, j] < hi)
            if not sel.any():
                continue
            xs = np.tile(np.array([0.0, 1.0, np.nan]), int(sel.sum()))
            ys = np.stack([i[sel], j[sel], np.full(sel.sum(), np.nan)], axis=1).ravel()
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": xs.astype(np.float32),
                    "y": ys.astype(np.float32),
                    "line": {"color": head_colour(head), "width": 1 + 5 * min(lo, 0.6)},
                    "opacity": float(min(0.15 + 1.4 * lo, 0.9)),
                    "hoverinfo": "skip",
                    "showlegend": first,
                    "legendgroup": f"head {head}",
                    "name": f"head {head}",
                }
            )
            first = False
    if pair is not None and all(0 <= p - offset < shown for p in pair):
        pi, pj = pair[0] - offset, pair[1] - offset
        alphas = "<br>".join(
            f"head {head}: α = {float(np.nan_to_num(weights[head, pi, pj])):.3g}" for head in heads
        )
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": [0.0, 1.0],
                "y": [float(pi), float(pj)],
                "line": {"color": "black", "width": 3},
                "name": f"picked pair ({pair[0]}, {pair[1]})",
                "hovertemplate": f"picked pair i = {pair[0]}, j = {pair[1]}<br>{alphas}"
                "<extra></extra>",
            }
        )
    labels = [html.escape(t, quote=False) for t in tokens[offset : offset + shown]]
    labels += [""] * (shown - len(labels))
    for x, symbol, side in ((0.0, "i", "left"), (1.0, "j", "right")):  # text outside
        sizes, colours = np.full(shown, 6), np.full(shown, "#444", dtype=object)
        if focused is not None and (focus[0] == "query") == (x == 0.0):
            sizes[focused], colours[focused] = 12, "#d62728"
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": np.full(shown, x, dtype=np.float32),
                "y": np.arange(shown, dtype=np.float32),
                "text": labels,
                "textposition": f"middle {side}",
                "marker": {"size": sizes.tolist(), "color": colours.tolist()},
                "customdata": np.arange(offset, offset + shown),
                "hovertemplate": f'{symbol} = %{{customdata}} "%{{text}}"<extra></extra>',
                "showlegend": False,
                "name": "queries" if x == 0 else "keys",
            }
        )
    layout = {
        "xaxis": {"range": [-0.6, 1.6], "visible": False, "fixedrange": True},
        "yaxis": {"range": [shown - 0.5, -1.2], "visible": False, "fixedrange": True},
        "height": int(80 + height_per_token * shown),
        "width": 520,
        "margin": {"l": 10, "r": 10, "t": 30, "b": 10},
        "annotations": [
            {"x": 0, "y": -1, "text": "<b>query i</b>", "showarrow": False, "xanchor": "right"},
            {"x": 1, "y": -1, "text": "<b>key j</b>", "showarrow": False, "xanchor": "left"},
        ],
        "legend": {"orientation": "v", "x": 1.0, "y": 1.0, "itemclick": "toggle"},
        "plot_bgcolor": "white",
    }
    fig = go.Figure({"data": data, "layout": layout})
    return TokenView(fig, shown, min(n_q, n_k), drawn, total)
