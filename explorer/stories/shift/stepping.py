"""Following one value through the steps of a shift (the skew, Transformer-XL's rel_shift).

Both shifts are a pad, a reshape and a slice, so a value keeps its provenance code from step to
step; a pad zero has no code of its own, but pad, reshape and slice keep the row-major order, so
a pad is the cell right after the value before it. The skew and rel_shift stories each trace
their steps with codes; this module finds one value in every step, maps a cell of a step back
to the result cell that shows it, and writes the page's "where is it" table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

MISSING = "not there yet (the pad is added in step 2)"


class Step(Protocol):
    """One step of a traced shift: values ``z``, provenance ``code`` (0: a pad), and the axis
    coordinate of each column ``x`` and row ``y``."""

    z: np.ndarray
    code: np.ndarray

    @property
    def shape(self) -> tuple[int, int]: ...

    @property
    def x(self) -> np.ndarray: ...

    @property
    def y(self) -> np.ndarray: ...


class Stepped(Protocol):
    """A traced shift: its steps in order (the last is the result), the position of its first
    query and key, and whether a click on a pad picks the result cell the pad lands in."""

    start: int

    @property
    def steps(self) -> Sequence[Step]: ...

    @property
    def follows_pads(self) -> bool: ...

    def step(self, name: str) -> Step: ...


@dataclass(frozen=True)
class Place:
    """Where one value sits in one step: array (row, col), axis (x, y) coordinates, value."""

    row: int
    col: int
    x: int
    y: int
    value: float


def code_position(code: np.ndarray, target: int, before: int | None) -> tuple[int, int] | None:
    """(row, col) of the cell holding provenance ``target`` in one step's code matrix, or of
    the pad zero right after the cell holding ``before`` (a pad has no code of its own, and
    pad, reshape and slice keep the row-major order); None where it is not in this step.

    >>> code_position(np.array([[3, 0], [5, 7]]), 7, None), code_position(np.array([[3, 0]]), 0, 3)
    ((1, 1), (0, 1))
    """
    flat = code.reshape(-1)
    if before is None:
        hits = np.flatnonzero(flat == target)
    else:
        hits = np.flatnonzero(flat[:-1] == before) + 1
        hits = hits[flat[hits] == 0]
    return divmod(int(hits[0]), code.shape[1]) if hits.size else None


def locate(story: Stepped, i: int, j: int) -> tuple[Place | None, ...]:
    """The place of result cell (i, j) (absolute positions) in every step, None where absent.

    A value is found by its provenance code; a pad zero by the value right before it (none
    before the pad is added).
    """
    final = story.steps[-1]
    row, col = i - story.start, j - story.start
    target = int(final.code[row, col])
    before = None
    if target == 0:
        before = int(final.code.reshape(-1)[row * final.shape[1] + col - 1])
    places: list[Place | None] = []
    for step in story.steps:
        at = code_position(step.code, target, before)
        if at is None:
            places.append(None)
            continue
        r, c = at
        places.append(Place(r, c, int(step.x[c]), int(step.y[r]), float(step.z[r, c])))
    return tuple(places)


def result_cell_of(story: Stepped, name: str, row: int, col: int) -> tuple[int, int] | None:
    """The result cell (i, j) (absolute) that shows the value at (row, col) of step ``name``,
    if the value gets there. A pad is followed only where the story ``follows_pads``."""
    step = story.step(name)
    code = int(step.code[row, col])
    before = None
    if code == 0:  # a pad: the cell after the value before it
        at = row * step.shape[1] + col
        if not story.follows_pads or at == 0:
            return None
        before = int(step.code.reshape(-1)[at - 1])
    cell = code_position(story.steps[-1].code, code, before)
    if cell is None:
        return None
    return cell[0] + story.start, cell[1] + story.start


def place_table(
    labels: Sequence[str],
    names: Sequence[str],
    places: Sequence[Place | None],
    where: Callable[[str, Place], str],
) -> str:
    """A markdown table: where the picked value sits in every step (``where(name, place)``
    says it in the step's own axes) and its value there."""
    lines = ["| step | where | value |", "|---|---|---|"]
    for label, name, place in zip(labels, names, places, strict=True):
        if place is None:
            lines.append(f"| {label} | {MISSING} |  |")
        else:
            lines.append(f"| {label} | {where(name, place)} | {place.value:.4g} |")
    return "\n".join(lines)
