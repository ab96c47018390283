"""The sidebar's picked pair (i, j) on the Check page: where it lies in each kind's output, its
outline on the maps, and its numbers from the definition and from the visitor's output.

Each kind says where (its ``pair``, one of ``relpos_core.check.kind.PAIR_LAYOUTS``):

    cell            the cell (i, j): the skew's logit, ALiBi's bias, T5's bucket
    memory cell     the cell (i, M + j): Transformer-XL's M memory keys come first
    query row       the row z_i: query i's output (Shaw's), a sum over every key j
    position rows   the rows of positions i and j, each rotated by its own position (RoPE's:
                    q_i · k_j then depends on j - i alone)

The (i, j) maps get the pair's cell outlined by the explorer's own pair marks (a click on a cell
picks it there too); here are the marks those cannot place: a memory cell's column M + j and
the two position rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from explorer.pair.definition import Pair
from explorer.pair.marks import pair_shapes
from explorer.stories.check.figures import one_head
from relpos_core.check import KINDS

SHOWN = 4  # entries of a row written out
ROWS = ("query row", "position rows")  # layouts whose pair is read along rows of channels


@dataclass(frozen=True)
class PairPlace:
    """Where the pair is in one head of a kind's output: the rows it reads, and the column
    (None: whole rows of channels)."""

    pair: Pair
    rows: tuple[int, ...]
    column: int | None


def pair_place(
    kind: str, case: dict, output: np.ndarray, pair: Pair | None
) -> PairPlace | str | None:
    """The pair's place in ``output`` (the kind's output on the page's inputs of ``case``), or
    why it has none there; None without a pick."""
    if pair is None:
        return None
    positions = one_head(output, 0).shape[0]
    if max(pair.i, pair.j) >= positions:
        return (
            f"Picked pair (i, j) = ({pair.i}, {pair.j}): this page checks positions 0-"
            f"{positions - 1}, so the pair is not on its maps."
        )
    layout = KINDS[kind].pair
    if layout in ROWS:
        rows = (pair.i,) if layout == "query row" else tuple(dict.fromkeys((pair.i, pair.j)))
        return PairPlace(pair, rows, None)
    memory = int(case["m"]) - int(case["n"]) if layout == "memory cell" else 0
    return PairPlace(pair, (pair.i,), memory + pair.j)


def mark_pair(fig: go.Figure, kind: str, place: PairPlace) -> None:
    """Outline on ``fig`` what the explorer's pair marks cannot place themselves."""
    layout = KINDS[kind].pair
    if layout == "memory cell":
        marks = [{"i": place.rows[0], "c": place.column}]
    elif layout == "position rows":
        marks = [{"p": row} for row in place.rows]
    else:
        return
    traces = [
        {"meta": t.meta, "xaxis": t.xaxis or "x", "yaxis": t.yaxis or "y"}
        for t in fig.data
        if getattr(t, "meta", None)
    ]
    shapes = [shape for m in marks for shape in pair_shapes(traces, m)]
    fig.update_layout(shapes=[*fig.layout.shapes, *shapes])


def number(x: float, exact: bool) -> str:
    return str(int(x)) if exact else f"{x:.4g}"


def entries(row: np.ndarray) -> str:
    shown = ", ".join(f"{x:.3g}" for x in row[:SHOWN])
    return f"({shown}{', …' if len(row) > SHOWN else ''}; {len(row)} entries)"


def where_text(kind: str, place: PairPlace) -> str:
    """Where the pair is, in words (the first sentence of its note)."""
    p = place.pair
    head = f"Picked pair (i, j) = ({p.i}, {p.j}), j - i = {p.distance}: "
    layout, first = KINDS[kind].pair, KINDS[kind].first_position
    if layout == "query row":
        return head + (
            f"row {p.i} is z_{p.i}, query {p.i}'s output, a sum over every key (key {p.j} "
            "among them); it is outlined."
        )
    if layout == "position rows":
        rows = " and ".join(f"{r} (position {first + r})" for r in place.rows)
        return head + (
            f"rows {rows} are rotated each by its own position, so that q_i · k_j depends on "
            f"j - i alone; {'they are' if len(place.rows) > 1 else 'it is'} outlined."
        )
    if layout == "memory cell":
        return head + (
            f"its cell is row {p.i}, column {place.column} (the {place.column - p.j} memory "
            f"keys come first: key j is column M + j), outlined."
        )
    return head + (
        f"its cell is outlined, and the dotted diagonal is j - i = {p.distance}, the cells at "
        "its distance."
    )


def values_text(
    kind: str,
    place: PairPlace,
    head: int,
    expected: np.ndarray,
    compared: np.ndarray,
    got: np.ndarray | None = None,
    exact: bool = False,
) -> str:
    """The pair's numbers in head ``head``: the definition's, and the upload's (``got``) with
    their difference, or why the cell is not compared."""
    want, mask = one_head(expected, head), one_head(compared, head).astype(bool)
    mine = None if got is None else one_head(got, head)
    where = f"In head {head}" if np.ndim(expected) >= 3 else "Here"
    if place.column is not None:
        row, col = place.rows[0], place.column
        if not mask[row, col]:
            return (
                f"{where} this cell is not compared: key {place.pair.j} comes after query "
                f"{place.pair.i}, and the convention compares j ≤ i only."
            )
        text = f"{where} the definition gives {number(want[row, col], exact)}"
        if mine is None:
            return text + "."
        gap = abs(float(mine[row, col]) - float(want[row, col]))
        return text + (
            f", yours {number(mine[row, col], exact)} (difference {gap:.3g})."
            if np.isfinite(gap)
            else f", yours {mine[row, col]}."
        )
    parts = []
    for row in place.rows:
        line = f"row {row}: the definition {entries(want[row])}"
        if mine is not None:
            gap = float(np.max(np.abs(mine[row] - want[row])))
            line += f", yours {entries(mine[row])}, largest difference {gap:.3g}"
        parts.append(line)
    return f"{where}, " + "; ".join(parts) + "."
