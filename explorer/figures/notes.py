"""What to notice in a figure, written from the numbers it shows (pure: ints and arrays in,
one sentence out). Each page puts the sentence under the figure it reads."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.figures.head_reading import (
    NOTICE,
    STANDOUT,
    HeadReading,
    Hypothesis,
    read_head,
    spans,
)
from explorer.figures.numbers import count, percent, plural
from explorer.frame.params import ViewParams


def distance_word(r: int, unit: str = "position") -> str:
    """j - i in words: 'the same position', 'the previous position', '3 positions back'.

    >>> distance_word(-1), distance_word(0), distance_word(4, "character")
    ('the previous position', 'the same position', '4 characters ahead')
    """
    if r == 0:
        return f"the same {unit}"
    if r == -1:
        return f"the previous {unit}"
    if r == 1:
        return f"the next {unit}"
    return f"{abs(r)} {unit}s {'back' if r < 0 else 'ahead'}"


def _ahead(k: int) -> str:
    return "w_+1" if k == 1 else f"w_+1..w_+{k}"


def clip_note(n: int, k: int, causal: bool = False) -> str:
    """What the clip distance k does to a sequence of n positions (``causal``: under a causal
    mask, which hides every key ahead, so that no pair reads a row w_r with r > 0).

    >>> clip_note(8, 20)
    'k = 20 >= n - 1 = 7: nothing is clipped; table rows 0-12 and 28-40 are never read.'
    >>> clip_note(8, 2, causal=True)[:70]
    'k = 2 < n - 1 = 7: the 15 pairs with j - i < -2 (23% of all 64) share '
    """
    if k == 0:
        return (
            "k = 0: every pair reads the one vector w_0, so the relative term is one constant "
            "per query row, which softmax ignores: position reaches the weights not at all "
            "(only the values, through a^V)."
        )
    masked = " under the causal mask (no key ahead is read)" if causal else ""
    if k >= n - 1:
        # pairs read the rows of distances -(n - 1)..(n - 1), or ..0 under the causal mask
        read = range(k - (n - 1), k + (0 if causal else n - 1) + 1)
        unused = [r for r in range(2 * k + 1) if r not in read]
        never = f"; table rows {spans(unused, ' and ')} are never read{masked}" if unused else ""
        return f"k = {k} >= n - 1 = {n - 1}: nothing is clipped{never}."
    every = count(n * n)
    if causal:
        back = (n - k) * (n - k - 1) // 2  # pairs with j - i < -k
        return (
            f"k = {k} < n - 1 = {n - 1}: the {count(back)} pairs with j - i < -{k} "
            f"({percent(back, n * n)} of all {every}) share the edge row w_-{k}; the causal "
            f"mask hides every key ahead (j > i), so no pair reads {_ahead(k)}."
        )
    clipped = (n - k) * (n - k - 1)  # pairs with |j - i| > k
    return (
        f"k = {k} < n - 1 = {n - 1}: the {count(clipped)} pairs with |j - i| > {k} "
        f"({percent(clipped, n * n)} of all {every}) share the edge rows w_-{k} and w_+{k}."
    )


def band_note(n: int, k: int, causal: bool = False) -> str:
    """Why the relative term looks as it does: constant off the band within each row
    (``causal``: the keys ahead are masked, drawn blank)."""
    masked = " Keys ahead (j > i) are masked: blank (grey)." if causal else ""
    if k == 0:
        return (
            "One colour per row: the relative term is q_i · w_0, the same for every key." + masked
        )
    if n == 1:  # one query, one key: nothing to compare along a row or between rows
        return "One cell: query 0 reads w_0 for key 0, its own position."
    if k >= n - 1:
        # under the causal mask row 0 sees key 0 alone: only rows of two keys or more vary
        several = " that sees two keys or more" if causal else ""
        return (
            "Every cell reads its own distance's row: the term changes along each row"
            f"{several}, and from row to row because q_i changes per row." + masked
        )
    if causal:
        return (
            f"Within each row, every key {k} or more back holds one value (q_i · w_-{k}); only "
            f"the band -{k} < j - i <= 0 varies, and the keys ahead (j > i) are masked: blank "
            "(grey). The values differ from row to row because q_i changes per row."
        )
    return (
        f"Within each row, every key {k} or more back holds one value (q_i · w_-{k}) and "
        f"every key {k} or more ahead another (q_i · w_+{k}); only the band |j - i| < {k} "
        "varies. The values differ from row to row because q_i changes per row."
    )


def _where(best: Hypothesis, unit: str, labels: Sequence[str]) -> str:
    """The cell a hypothesis names: a distance, the first token, or one fixed key."""
    if best.kind == "distance":
        return f"{distance_word(best.at, unit)} (j - i = {best.at})"
    name = f"j = {best.at}" + (f", '{labels[best.at]}'" if best.at < len(labels) else "")
    which = f"the first {unit}" if best.at == 0 else f"one fixed {unit}"
    return f"{which} ({name}) whatever the query"


def head_note(
    reading: HeadReading, head: int, unit: str = "position", labels: Sequence[str] = ()
) -> str:
    """Where head ``head`` puts its weight, from :func:`read_head`: the distance or fixed key
    it follows, or an even spread, with its numbers and the query rows they average over.

    >>> print(head_note(read_head(np.eye(4, k=-1)), 2))
    head 2 puts 100% of a row's weight on the previous position (j - i = -1), on average over
    query rows 1-3.
    """
    best = reading.best
    if best is None:
        return f"head {head}: no query row sees two keys or more, so none has a choice to make."
    over = f"on average over query row{'s' * (len(best.rows) > 1)} {spans(best.rows)}"
    where = _where(best, unit, labels)
    entropy = (
        f"a row's entropy is on average {percent(reading.evenness)} of an even spread's "
        "(log of the keys it sees)"
        if reading.even_rows
        else "no row has two keys drawn to measure its spread"
    )
    if reading.pattern in ("distance", "key"):
        return f"head {head} puts {percent(best.share)} of a row's weight on {where}, {over}."
    if reading.pattern == "leans":
        return (
            f"head {head} leans on {where}: {percent(best.share)} of a row's weight {over}, "
            f"where an even spread puts {percent(best.even_share)}; {entropy}."
        )
    if reading.pattern == "even":
        evenly = "evenly" if percent(reading.evenness) == "100%" else "close to evenly"
        return (
            f"head {head} spreads its weight {evenly} over the keys each row sees: {entropy}, "
            f"over query row{'s' * (len(reading.even_rows) > 1)} {spans(reading.even_rows)}."
        )
    small = (
        f"under {STANDOUT:g} times the {percent(best.even_share)} an even spread puts there"
        if best.share < STANDOUT * best.even_share
        else f"under {percent(NOTICE)} of a row's weight"
    )
    return (
        f"head {head} follows no one distance or key: the most, {percent(best.share)} of a "
        f"row's weight {over} on {where}, is {small}; {entropy}."
    )


def weights_note(
    weights: np.ndarray,
    head: int,
    *,
    visible: np.ndarray | None = None,
    offset: int = 0,
    unit: str = "position",
    labels: Sequence[str] = (),
) -> str:
    """:func:`head_note` of the weights drawn (see :func:`read_head` for the arguments).

    >>> print(weights_note(np.eye(3)[[0, 0, 0]], 1, unit="character", labels="abc"))
    head 1 puts 100% of a row's weight on the first character (j = 0, 'a') whatever the query,
    on average over query rows 0-2.
    """
    return head_note(read_head(weights, visible, offset), head, unit, labels)


def head_short(reading: HeadReading) -> str:
    """:func:`head_note` in one short line, to sit under a small map of the head.

    >>> head_short(read_head(np.eye(4, k=-1))), head_short(read_head(np.full((3, 3), 1 / 3)))
    ('100% on j - i = -1', 'even (entropy 100%)')
    """
    best = reading.best
    if best is None:
        return "no choice"
    cell = f"j - i = {best.at}" if best.kind == "distance" else f"j = {best.at}"
    if reading.pattern == "even":
        return f"even (entropy {percent(reading.evenness)})"
    if reading.pattern == "mixed":
        return "no one pattern" + (
            f" (entropy {percent(reading.evenness)})" if reading.even_rows else ""
        )
    if reading.pattern == "leans":
        return f"{percent(best.share)} on {cell} (even: {percent(best.even_share)})"
    return f"{percent(best.share)} on {cell}"


def favoured_distance_note(
    term: np.ndarray,
    distance: np.ndarray,
    valid: np.ndarray,
    what: str,
    clip: int | None = None,
    min_cells: int = 3,
) -> str:
    """Which distance a position term favours: its mean over the valid cells of each distance.

    ``term``, ``distance`` (j - i) and ``valid`` (bool) are the same (rows, cols) grid. With a
    clip distance k every j - i beyond ±k reads the same edge row w_±k, so those distances are
    one group (mean over all their cells). Groups of fewer than ``min_cells`` cells are left
    out (a mean over one or two cells is a few query rows' values, not the term's preference),
    unless every group is that small. Each extreme is given with the cells its mean is over.

    >>> d = np.array([[0, 1], [-1, 0]])
    >>> note = favoured_distance_note(np.array([[1.0, 9.0], [3.0, 2.0]]), d, d <= 0, "the term")
    >>> note.split(" and ")[0].split(", ")[1], note.split(": ")[1]
    ('the term is largest at j - i = -1 (mean 3 over 1 cell)', 'it favours the previous position.')
    """
    cells = valid & np.isfinite(term)
    if not cells.any():
        return ""
    group = distance if clip is None else np.clip(distance, -clip, clip)
    seen, counts = np.unique(group[cells], return_counts=True)
    means = np.array([term[cells & (group == g)].mean() for g in seen])
    enough = counts >= min_cells
    left_out = enough.any() and not enough.all()
    if left_out:
        seen, counts, means = seen[enough], counts[enough], means[enough]
    beyond = distance[cells]

    def name(g: int) -> str:
        if clip is not None and g == -clip and (beyond < -clip).any():
            return f"j - i <= -{clip}, which all read w_-{clip}"
        if clip is not None and g == clip and (beyond > clip).any():
            return f"j - i >= {clip}, which all read w_+{clip}"
        return f"j - i = {g}"

    def at(index: int) -> str:
        cells = plural(int(counts[index]), "cell")
        return f"{name(int(seen[index]))} (mean {means[index]:.3g} over {cells})"

    high, low = int(means.argmax()), int(means.argmin())
    if high == low:
        return f"{what[:1].upper()}{what[1:]} has one distance here, {at(high)}."
    g = int(seen[high])
    favours = distance_word(g)
    if name(g) != f"j - i = {g}":  # a clipped group: the edge distance and every one beyond
        favours = f"keys {abs(g)} or more positions {'back' if g < 0 else 'ahead'}"
    fewer = f" Distances held by fewer than {min_cells} cells are left out." if left_out else ""
    return (
        f"On average over its {int(cells.sum()):,} valid cells, {what} is largest at {at(high)} "
        f"and smallest at {at(low)}: it favours {favours}.{fewer}"
    )


def read_on_window(params: ViewParams) -> str:
    """The sentence a note ends with when it was read on a window, not the whole matrix."""
    if not params.windowed:
        return ""
    start, stop = params.window
    return (
        f" These numbers are read on the window of queries and keys {start}-{stop - 1} only, "
        "not the whole matrix: move it with *window start* in the sidebar."
    )
