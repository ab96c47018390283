"""What the Transformer-XL shift page says: its introduction, the captions under its controls
and chart, where the picked value sits in every step, the picked cell by the shift and by
definition, and the check's badges and memory figures. Strings and small functions of the
story's values; the page draws them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.figures.draw import bytes_text
from explorer.figures.notes import favoured_distance_note
from explorer.figures.numbers import plural
from explorer.pair.definition import Pair
from explorer.stories.shift.rel_shift import (
    CHECK_QUERIES,
    STEP_WORDS,
    STEPS,
    STORY_QUERIES,
    ShiftCheck,
    ShiftStory,
)
from explorer.stories.shift.rel_shift_tables import holds_text
from explorer.stories.shift.stepping import Place, place_table

STEP_LABELS = [f"{number} {word}" for number, word in enumerate(STEP_WORDS, start=1)]

INTRO = (
    "Transformer-XL adds to the content logit three terms (Dai et al. 2019, Sec. 3.3). The two "
    "that depend on position, (b) and (d), need one score per query and distance. The "
    "reference code computes them against every distance a query may see, in the *relative* "
    "layout (column c is the distance j - i = c - (n_k - 1)), and moves them to the *absolute* "
    "layout (column j is key j) with Transformer-XL's **rel_shift**: a pad, a reshape and a "
    "slice, no gather (Appendix B). The paper indexes its sinusoid R by i - j; every distance "
    "on this page is written j - i, as on every other page, so distance j - i = -3 reads R_3."
)
LIKE_THE_SKEW = (
    "With no memory (M = 0) these are exactly the steps of the Music Transformer's masked skew "
    "on the Skew page: the same pad on the left, the same reshape, the same dropped first row, "
    "and the same wrong cells above the diagonal that the causal mask removes."
)
MEMORY_HELP = "Cached positions of the previous segment before the queries: n_k = n_q + M keys."


def story_notes(story: ShiftStory, n: int) -> list[str]:
    """Captions under the controls: the queries the steps are drawn for, and n_k = n_q + M."""
    q_len, k_len = story.queries, story.keys
    notes = []
    if n > STORY_QUERIES:
        notes.append(
            f"n = {n} queries: the steps are drawn for the first {STORY_QUERIES} of them "
            f"(n_q = {q_len}, n_k = {k_len}), where every cell stays readable. Their right cells "
            "(j <= i) hold the values of the first rows of the shift of all n queries; "
            "their wrong cells hold other leftovers there, as that shift has more keys."
        )
    memory = story.memory
    notes.append(
        f"n_q = {plural(q_len, 'query', 'queries')} after M = {plural(memory, 'memory position')}: "
        f"n_k = {plural(k_len, 'key')}."
    )
    return notes


def chart_caption(story: ShiftStory, name: str, picked: bool) -> str:
    """Under the step's chart: what its colours, marks and written distances mean."""
    return (
        "Colour: the value, (b) + (d) of head "
        f"{story.head}, on one scale for every step. Each cell shows the distance j - i of the "
        "value it holds for the query it came from (pad: the padding zero). Outlined in "
        "black: values that become right result cells. Hatched and outlined in red: "
        "values that become wrong result cells (key j > i). Greyed: what the slice drops."
        + (
            " The dashed line separates the memory keys (m) from the segment's."
            if story.memory and name == "result"
            else ""
        )
        + (" Gold: the picked value." if picked else "")
        + " Click a cell to pick the value it holds"
        + (
            " (one that lands on a memory key picks nothing: the sidebar's pair is a query "
            "and a key of the sequence)."
            if story.memory
            else "."
        )
    )


def distance_note(story: ShiftStory) -> str:
    """What to notice: the distance the head's (b) + (d) favours, on the right cells."""
    return favoured_distance_note(
        story.definition, story.distance, story.valid, f"head {story.head}'s (b) + (d)"
    )


def place_lines(story: ShiftStory, places: Sequence[Place | None]) -> str:
    """A markdown table: where the picked value sits in every step."""

    def where(name: str, place: Place) -> str:
        step, r, c = story.step(name), place.row, place.col
        if name in ("input", "padded"):
            column = f"column {c} (j - i = {step.x_ticks[c]})"
            return f"query i = {r}, " + ("the pad column" if step.pad[r, c] else column)
        if name == "result":
            return f"i = {r}, key j = {c}"
        return f"row {r}, column {c}"

    return place_table(STEP_LABELS, STEPS, places, where)


def _beyond(pair: Pair, drawn: int) -> str:
    """Which of the pair's positions the steps leave out: they draw queries 0..drawn-1 and,
    after the memory, keys 0..drawn-1."""
    named = {"query i": pair.i, "key j": pair.j}
    inside = [f"{name} = {at}" for name, at in named.items() if at < drawn]
    outside = [f"{name} = {at}" for name, at in named.items() if at >= drawn]
    where = f"the steps draw queries and keys 0-{drawn - 1}"
    if inside:
        return f"{inside[0]} is drawn, but {outside[0]} is not ({where})"
    return f"neither {outside[0]} nor {outside[1]} is ({where})"


def followed_cell(story: ShiftStory, pair: Pair | None) -> tuple[tuple[int, int] | None, str]:
    """The result cell (query row i, column M + j) of the sidebar's pair (i, j), or None, and a
    caption: how to pick a pair, or why the picked one is not drawn."""
    if pair is None:
        return None, (
            "No pair picked: click a cell of a step, or set query i and key j in the sidebar, "
            "to follow one value through every step."
        )
    if max(pair.i, pair.j) >= story.queries:
        return None, (
            f"The picked pair (i, j) = ({pair.i}, {pair.j}) is not drawn here: "
            f"{_beyond(pair, story.queries)}. Click a cell, or pick i and j below "
            f"{story.queries} in the sidebar, to follow a value through the steps."
        )
    return (pair.i, story.column(pair.j)), (
        f"Following the picked pair (i, j) = ({pair.i}, {pair.j}): key {pair.j} is column "
        f"M + j = {story.column(pair.j)}, after the {story.memory} memory keys."
    )


@dataclass(frozen=True)
class PickedCell:
    """The picked cell: a table (its distance, the input cell it copies, its value by the shift
    and by definition) and a verdict, ``right`` where the shift gives the definition's value."""

    table: str
    verdict: str
    right: bool


def picked_cell(story: ShiftStory, row: int, column: int) -> PickedCell:
    """Result cell (query row i, column M + j), by the shift and by definition."""
    i, j = row, story.key(column)
    result = story.step("result")
    code = int(result.code[row, column])
    source, input_column, distance = (int(a[row, column]) for a in result.origin())
    where = f"input row {source}, column {input_column} (j - i = {distance})"
    where = "the zero pad" if code == 0 else where
    table = "\n".join(
        [
            "| picked cell | |",
            "|---|---|",
            f"| ({i}, {j}) | query i = {i}, key j = {j}{' (a memory key)' if j < 0 else ''} |",
            f"| result column M + j | {column} |",
            f"| distance j - i | {story.distance[row, column]} |",
            f"| source cell | {where} |",
            f"| by the shift | {float(result.z[row, column]):.4g} |",
            f"| by the definition | {float(story.definition[row, column]):.4g} |",
        ]
    )
    if story.valid[row, column]:
        verdict = (
            f"j = {j} <= i = {i}: the shift gives {holds_text(story, code)}, "
            "the definition's value."
        )
        return PickedCell(table, verdict, right=True)
    what = "the zero pad" if code == 0 else f"{holds_text(story, code)}, from the next row"
    verdict = (
        f"j = {j} > i = {i}: a key after the query. The shift puts {what} here, "
        "not the term; Transformer-XL masks these cells."
    )
    return PickedCell(table, verdict, right=False)


def check_label(check: ShiftCheck, n: int) -> str:
    """The agreement badge's label: the shift against the definition, on which queries."""
    scope = (
        ("its one query" if n == 1 else f"all {n} queries")
        if check.queries == n
        else f"the first {check.queries} of the {n} queries"
    )
    return f"rel_shift vs the scheme's gathered (b) + (d) on j <= i, every head, {scope}"


def wrong_badge(check: ShiftCheck) -> str:
    """The badge that counts the cells the shift gets wrong."""
    return (
        f"{check.wrong_cells} of {check.cells} cells per head have key j > i: the shift "
        "gets them wrong and Transformer-XL masks them"
    )


CHECK_NOTE = (
    f"The check runs the shift on at most {CHECK_QUERIES} queries (every row's right "
    "cells depend on that row alone)."
)


def memory_metrics(check: ShiftCheck, n: int) -> tuple[tuple[str, str, str], ...]:
    """(label, value, help) of the two memory figures: every term, and the position work."""
    keys = n + check.memory
    return (
        (
            "every term at n (estimate)",
            bytes_text(check.logit_bytes),
            f"TransformerXL.logit_bytes({n}, {keys}): the four terms, their sum and "
            "the position work, float32, batch 1",
        ),
        (
            "of which position work",
            bytes_text(check.position_bytes),
            f"TransformerXL.position_bytes({n}, {keys}): R, W_R R and (q + v)(W_R R)^T",
        ),
    )
