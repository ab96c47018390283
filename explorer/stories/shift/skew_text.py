"""What the Skew page says: its introduction, the captions under its controls and charts, where
the picked value sits in every step, and the picked cell worked out by the skew and by
definition. Strings and small functions of the story's values; the page draws them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.figures.draw import bytes_text
from explorer.figures.notes import favoured_distance_note
from explorer.frame.widgets import md_escape
from explorer.pair.definition import Pair
from explorer.stories.shift.skew import STEPS, SkewStory
from explorer.stories.shift.skew_figures import writes_numbers
from explorer.stories.shift.stepping import Place, place_table

STEP_WORDS = {1: "relative", 2: "padded", 3: "reshaped", 4: "sliced"}
VARIANTS = ("follows the mask", "masked (causal)", "unmasked (two-sided)")


def intro(n: int, window: tuple[int, int], windowed: bool) -> str:
    """The page's opening paragraph: the skew with n the sequence length and d the head
    dimension (the paper's L, said once)."""
    start, stop = window
    return (
        "Instead of gathering $a^K$, an $(n, n, d)$ tensor, multiply the queries by one "
        "embedding per distance, $S = Q E_r^\\top$ / √d: column $c$ of $S$ is the "
        "distance $r = c - (n - 1)$, the relative layout. Row $i$ needs column $j - i + n - 1$ "
        "at key $j$: the skew shifts every row by its own offset with only a pad, a reshape and "
        "a slice (Huang et al. 2018, Sec. 3.4.1; Huang et al. write $L$ for the sequence length "
        f"$n$, here $n = {n}$). The queries are scaled by 1/√d first, as on every "
        "page, so each value is the relative term as it enters the softmax"
        + (
            f". The steps run on the window's {stop - start} queries as a sequence of their "
            f"own: in the steps, $n = {stop - start}$."
            if windowed
            else "."
        )
    )


def window_note(n: int, window: tuple[int, int]) -> str:
    """Why the window's own skew shows exactly the window of the full result."""
    start, stop = window
    return (
        f"The steps are the skew of the window's {stop - start} queries over a sequence of "
        f"{stop - start} (relative logits depend on j - i only, so its result is exactly the "
        f"window of the full result); the memory figures are for the full n = {n}."
    )


def is_masked(variant: str, mask: str) -> bool:
    """The skew a variant draws; "follows the mask": Huang's masked skew under a causal mask."""
    return "causal" in mask if variant == VARIANTS[0] else variant == VARIANTS[1]


def variant_note(mask: str, masked: bool) -> str:
    """Which skew "follows the mask" picked for the sidebar's mask."""
    return f"The sidebar's mask is {mask}: showing the " + (
        "masked skew (Huang et al.: distances -(n-1)..0 only)."
        if masked
        else "unmasked skew (distances -(n-1)..n-1)."
    )


def followed_cell(window: tuple[int, int], pair: Pair | None) -> tuple[int, int, str | None]:
    """(i, j) the story follows: the picked pair when it lies in the window, else a cell near
    the middle, with a caption that says so."""
    start, stop = window
    if pair is not None and start <= min(pair.i, pair.j) and max(pair.i, pair.j) < stop:
        return pair.i, pair.j, None
    i = start + (stop - start) // 2
    j = max(start, i - 2)
    caption = (
        f"Following (i, j) = ({i}, {j}), near the middle: click a cell of a step, or set "
        "query i and key j in the sidebar, to follow another value."
    )
    return i, j, caption


def cells_caption(masked: bool, shape: tuple[int, int], write_r: bool) -> str:
    """Under a step drawn cell by cell: whether its cells carry their r (the toggle, and
    :func:`~explorer.stories.shift.skew_figures.writes_numbers` for the step's size)."""
    if not writes_numbers(shape):
        numbers = (
            f"The cells of a {shape[0]} × {shape[1]} step are too small to hold their distance "
            "r: hover a cell for its r and value. "
        )
    elif write_r:
        numbers = "Each cell shows the distance r of the value it holds (pad: a padding zero). "
    else:
        numbers = ""
    masked_cells = ", and cells the causal mask removes." if masked else "."
    return (
        f"{numbers}Outlined: the cells whose values become relative logits; greyed: padding, "
        f"cells the slice drops{masked_cells} Click a cell to pick the value it holds."
    )


IMAGE_CAPTION = (
    "One pixel per cell, on the same diverging scale as every step. Outlined: the "
    "cells whose values become relative logits; greyed: the rest. The dotted cross "
    "marks the picked value; the inset on the right has its neighbourhood's exact "
    "values and distances."
)


def place_lines(story: SkewStory, places: Sequence[Place | None]) -> str:
    """A markdown table: where the picked value sits in every step."""

    def where(name: str, place: Place) -> str:
        if name in ("input", "padded"):
            if story.step(name).pad[place.row, place.col]:
                return f"row i = {place.y}, the pad column"
            return f"row i = {place.y}, column r = {place.x}"
        if name == "reshaped":
            return f"row {place.y}, column {place.x}"
        return f"row i = {place.y}, column j = {place.x}"

    labels = [f"{number} {word}" for number, word in STEP_WORDS.items()]
    return place_table(labels, STEPS, places, where)


@dataclass(frozen=True)
class PickedCell:
    """The picked cell in words: a heading, then (a relative logit) its distance and value in
    LaTeX and the definition in a caption, or (above the diagonal) what it holds instead."""

    heading: str
    latex: tuple[str, ...] = ()
    caption: str | None = None
    info: str | None = None


def picked_cell(
    story: SkewStory, i: int, j: int, k: int, labels: Sequence[str] | None
) -> PickedCell:
    """The picked cell: its distance, its table row, its value by the skew and by definition."""
    row, col = i - story.start, j - story.start
    names = f"$i = {i}$, $j = {j}$"
    if labels is not None:
        names = f'$i = {i}$ "{md_escape(labels[i])}", $j = {j}$ "{md_escape(labels[j])}"'
    heading = f"**Picked cell** {names}"
    value = float(story.steps[-1].z[row, col])
    if not story.valid[row, col]:
        cell = slice(row, row + 1), slice(col, col + 1)
        source, distance, pad = (int(a[0, 0]) for a in story.steps[-1].origin(*cell))
        holds = "the pad zero" if pad else f"$q_{{{source}}} \\cdot (E_r)$ at $r = {distance}$"
        return PickedCell(
            heading,
            info=f"(i, j) = ({i}, {j}) is above the diagonal: it is not a relative logit but "
            f"holds {holds}. The causal mask removes it.",
        )
    table_row = int(story.table_rows[row, col])
    column = j - i + story.length - 1
    # one formula a line: the column beside the chart is narrow, and KaTeX does not wrap there
    distance = rf"j - i = {j - i}"
    row_of = rf"\operatorname{{clip}}({j - i}, {k}) + {k} = {table_row}"
    root = rf"\sqrt{{{story.head_dim}}}"
    value_by_skew = (  # three lines: the column beside the chart is narrow
        rf"\begin{{aligned}} S^{{\mathrm{{rel}}}}_{{{i},{j}}} &= q_{{{i}}} \cdot "
        rf"(E_r)_{{{column}}} / {root} \\ &= q_{{{i}}} \cdot w^K_{{{table_row - k}}} / {root}"
        rf" \\ &= {value:.4g}"
        r"\end{aligned}"
    )
    caption = (
        r"Definition $q_i \cdot w^K_{\operatorname{clip}(j - i, k)}$ / √d = "
        f"{float(story.definition[row, col]):.4g}. "
        f"$E_r$'s row {j - i + story.length - 1} is $w^K_{{{table_row - k}}}$, "
        f"stored as table row {table_row}"
        + (" (the distance is beyond ±k: the edge row repeats)." if abs(j - i) > k else ".")
    )
    return PickedCell(heading, (distance, row_of, value_by_skew), caption)


def distance_note(story: SkewStory, head: int, k: int) -> str:
    """What to notice: the distance the head's relative logits favour, on the valid cells
    (every distance beyond ±k reads the same edge row: one group)."""
    rows, cols = np.indices(story.valid.shape)
    return favoured_distance_note(
        story.definition, cols - rows, story.valid, f"head {head}'s relative logit", clip=k
    )


def memory_metrics(story: SkewStory, n: int, d: int, heads: int) -> tuple[tuple[str, ...], ...]:
    """(label, value, help) of the three memory figures: E_r, a materialized a^K, the logits."""
    masked = story.masked
    return (
        (
            "skew needs $E_r$",
            bytes_text(story.bytes_skew),
            f"({n if masked else 2 * n - 1}, {d}) float32 for the "
            + ("masked" if masked else "unmasked")
            + " skew",
        ),
        (
            "materialized $a^K$ needs",
            bytes_text(story.bytes_materialized),
            f"({n}, {n}, {d}) float32: the einsum and matmul paths",
        ),
        ("logits (every path)", bytes_text(story.bytes_logits), f"({heads}, {n}, {n})"),
    )
