"""What to notice in a figure, written from the numbers it shows (pure: ints and arrays in,
one sentence out). Each page puts the sentence under the figure it reads."""

from __future__ import annotations

import numpy as np


def distance_word(r: int) -> str:
    """j - i in words: 'the same position', 'the previous position', '3 positions back'.

    >>> distance_word(-1), distance_word(0), distance_word(4)
    ('the previous position', 'the same position', '4 positions ahead')
    """
    if r == 0:
        return "the same position"
    if r == -1:
        return "the previous position"
    if r == 1:
        return "the next position"
    return f"{abs(r)} positions {'back' if r < 0 else 'ahead'}"


def clip_note(n: int, k: int) -> str:
    """What the clip distance k does to a sequence of n positions.

    >>> clip_note(8, 20)
    'k = 20 >= n - 1 = 7: nothing is clipped; table rows 0-12 and 28-40 are never read.'
    """
    if k == 0:
        return (
            "k = 0: every pair reads the one vector w_0, so the relative term is one constant "
            "per query row, which softmax ignores: position reaches the weights not at all "
            "(only the values, through a^V)."
        )
    if k >= n - 1:
        unused = []
        if k - n >= 0:
            unused.append(f"0-{k - n}" if k - n > 0 else "0")
        if k + n <= 2 * k:
            unused.append(f"{k + n}-{2 * k}" if k + n < 2 * k else f"{2 * k}")
        never = f"; table rows {' and '.join(unused)} are never read" if unused else ""
        return f"k = {k} >= n - 1 = {n - 1}: nothing is clipped{never}."
    clipped = (n - k) * (n - k - 1)  # pairs with |j - i| > k
    share = clipped / (n * n)
    return (
        f"k = {k} < n - 1 = {n - 1}: the {clipped} pairs with |j - i| > {k} ({share:.0%} of "
        f"all {n * n}) share the edge rows w_-{k} and w_+{k}."
    )


def band_note(n: int, k: int) -> str:
    """Why the relative term looks as it does: constant off the band within each row."""
    if k == 0:
        return "One colour per row: the relative term is q_i · w_0, the same for every key."
    if k >= n - 1:
        return (
            "Every cell reads its own distance's row: the term changes along each row, and "
            "from row to row because q_i changes per row."
        )
    return (
        f"Within each row, every key more than {k} back holds one value (q_i · w_-{k}) and every "
        f"key more than {k} ahead another (q_i · w_+{k}); only the band |j - i| < {k} varies. "
        "The values differ from row to row because q_i changes per row."
    )


def focus_note(weights: np.ndarray, head: int, offset: int = 0) -> str:
    """Where head ``head`` puts its weight on average: the distance j - i with the most weight.

    ``weights`` (W, W) of the window whose first query and key sit at position ``offset``;
    NaN cells are masked. The share is the mean over query rows of the weight at that distance.

    >>> focus_note(np.eye(4, k=-1), 2)[:60]
    'head 2 puts 75 % of its weight on the previous position (j -'
    """
    w = np.nan_to_num(np.asarray(weights, dtype=np.float64), nan=0.0)
    rows, cols = w.shape
    distance = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # j - i, from -(rows - 1)
    mass = np.bincount((distance + rows - 1).ravel(), weights=w.ravel(), minlength=rows + cols)
    best = int(np.argmax(mass))
    share, r = mass[best] / rows, best - (rows - 1)
    return (
        f"head {head} puts {100 * share:.0f} % of its weight on {distance_word(r)} "
        f"(j - i = {r}), on average over the {rows} query rows."
    )


FLAT = 0.02  # a change beyond the training length under 2 % of the range within reads as flat


def beyond_note(distance: np.ndarray, curves: dict[str, np.ndarray], context: int) -> str:
    """How far each scheme's learned term moves past the distances training held.

    ``curves``: label -> (h, m) against ``distance`` (m,), j - i <= 0. Within: |j - i| <
    context; the change beyond is the largest |t(r) - t(-(context - 1))| over the farther r,
    both the largest over the heads.

    >>> r = np.arange(-5, 1)
    >>> beyond_note(r, {"flat": np.array([[1, 1, 1, 1, 0, 0.0]]), "ramp": r[None] * 1.0}, 3)
    'Past |j - i| = 2: flat holds still (0% of its range within); ramp keeps moving (150%).'
    """
    edge = -(context - 1)
    inside, beyond = distance >= edge, distance < edge
    at_edge = int(np.flatnonzero(distance == edge)[0])
    parts = []
    for label, values in curves.items():
        within = np.ptp(values[:, inside], axis=1).max()
        moved = np.abs(values[:, beyond] - values[:, at_edge : at_edge + 1]).max()
        share = moved / within if within > 0 else 0.0
        verb = "holds still" if share < FLAT else "keeps moving"
        parts.append((verb, label, share))
    ordered = sorted(parts, key=lambda p: p[2])
    text = "; ".join(
        f"{label} {verb} ({share:.0%}{' of its range within' if t == 0 else ''})"
        for t, (verb, label, share) in enumerate(ordered)
    )
    return f"Past |j - i| = {context - 1}: {text}."


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
    ('the term is largest at j - i = -1 (mean 3 over 1 cells)', 'it favours the previous position.')
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
        return f"{name(int(seen[index]))} (mean {means[index]:.3g} over {counts[index]:,} cells)"

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
