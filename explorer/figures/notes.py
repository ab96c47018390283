"""What to notice in a figure, written from the numbers it shows (pure: ints and arrays in,
one sentence out). Each page puts the sentence under the figure it reads."""

from __future__ import annotations

import numpy as np

from explorer.figures.numbers import count, percent


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


def _runs(rows: list[int]) -> str:
    """Sorted table rows as ranges: [0, 1, 2, 5] -> '0-2 and 5'."""
    runs: list[list[int]] = []
    for r in rows:
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    return " and ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


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
        never = f"; table rows {_runs(unused)} are never read{masked}" if unused else ""
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
    if k >= n - 1:
        return (
            "Every cell reads its own distance's row: the term changes along each row, and "
            "from row to row because q_i changes per row." + masked
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
    term: np.ndarray, distance: np.ndarray, valid: np.ndarray, what: str
) -> str:
    """Which distance a position term favours: its mean over the valid cells at each j - i.

    ``term``, ``distance`` (j - i) and ``valid`` (bool) are the same (rows, cols) grid.

    >>> d = np.array([[0, 1], [-1, 0]])
    >>> note = favoured_distance_note(np.array([[1.0, 9.0], [3.0, 2.0]]), d, d <= 0, "the term")
    >>> note.split(" and ")[0].split("cells ")[1], note.split(": ")[1]
    ('the term is largest at j - i = -1 (3)', 'it favours the previous position.')
    """
    cells = valid & np.isfinite(term)
    if not cells.any():
        return ""
    seen = np.unique(distance[cells])
    means = np.array([term[cells & (distance == r)].mean() for r in seen])
    high, low = int(seen[means.argmax()]), int(seen[means.argmin()])
    if high == low:
        return f"{what[:1].upper()}{what[1:]} has one distance here, j - i = {high}."
    return (
        f"On average over its valid cells {what} is largest at j - i = {high} "
        f"({means.max():.3g}) and smallest at j - i = {low} ({means.min():.3g}): it favours "
        f"{distance_word(high)}."
    )
