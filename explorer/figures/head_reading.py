"""Where one attention head puts its weight, tested the way a learner reads a weights map.

``weights`` (rows, cols): query i down, key j across, the window whose first query and first key
are both position ``offset``; a masked cell is NaN or False in ``visible`` (its weight is 0).
Hypotheses, each measured on the cells drawn:

    distance r   the key at j - i = r:      share = mean over the rows that see a key at j - i = r
                                                    of w[i, i + r]
    key c        one fixed key j = c:       share = mean over the rows that see key c of w[i, c]
                 (j = 0 is the first token)
    even         every key seen alike:      evenness = mean over rows of H(p_i) / log(m_i),
                                                    p_i row i's weights, m_i the keys it sees

A hypothesis stands out when its share is at least STANDOUT times the share an even spread
would give the same cells (mean over its rows of the row's weight drawn / m_i, which is 1 / m_i
when the whole row is drawn), and at least NOTICE.

Only rows that see two keys or more count: a row with one key has no choice (row 0 under a
causal mask). On a window from ``offset`` > 0 every row also sees keys 0..offset-1 before it (a
causal or padding mask hides later keys only), so each row with a key drawn counts; its
evenness is read on the keys drawn (p_i renormalised over them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# The thresholds that pick the words (the numbers themselves are always stated):
SUPPORT = 0.5  # a hypothesis counts when it is defined on at least half the rows that count
STANDOUT = 1.5  # it stands out with at least 1.5 times the share an even spread gives its cells
NOTICE = 0.1  # and at least 10% of a row's weight: 1% on one key of 300 is no pattern to read
FOCUS = 0.5  # one that stands out with at least half a row's weight on average names the head
EVEN = 0.85  # else, with none standing out, an entropy >= 85% of log(keys) on average is even


@dataclass(frozen=True)
class Hypothesis:
    kind: str  # "distance" (j - i = at) or "key" (j = at)
    at: int  # r, or the key's position (offset included)
    share: float  # mean over ``rows`` of the weight on that cell
    rows: tuple[int, ...]  # the query positions averaged over (offset included)
    even_share: float  # the same mean had each row spread its weight drawn evenly: 1 / keys


@dataclass(frozen=True)
class HeadReading:
    # "distance" or "key" (the best stands out and holds half the weight or more), "leans" (it
    # stands out with less), "even" or "mixed" (nothing stands out), "none" (no row has a choice)
    pattern: str
    best: Hypothesis | None  # the counted hypothesis with the largest share
    evenness: float  # mean over ``even_rows`` of H / log(keys seen); NaN when none
    even_rows: tuple[int, ...]


def read_head(
    weights: np.ndarray, visible: np.ndarray | None = None, offset: int = 0
) -> HeadReading:
    """Test every distance, every key and the even spread on one head's weights.

    >>> causal = np.tril(np.ones((4, 4), dtype=bool))
    >>> r = read_head(np.where(causal, 1 / np.arange(1, 5)[:, None], np.nan))  # even
    >>> r.pattern, round(r.evenness, 6), r.even_rows
    ('even', 1.0, (1, 2, 3))
    >>> r = read_head(np.eye(4, k=-1))  # the previous position; row 0 sees no key to count
    >>> r.pattern, r.best.at, r.best.share, r.best.rows
    ('distance', -1, 1.0, (1, 2, 3))
    """
    w = np.asarray(weights, dtype=np.float64)
    seen = np.isfinite(w) if visible is None else np.asarray(visible, dtype=bool) & np.isfinite(w)
    w = np.where(seen, w, 0.0)
    rows, cols = w.shape
    keys = seen.sum(1)  # (rows,) keys drawn that each row sees
    counts = (keys >= 2) | ((keys >= 1) & (offset > 0))  # rows with a choice
    valid = seen & counts[:, None]  # (rows, cols) the cells every hypothesis reads
    if not counts.any():
        return HeadReading("none", None, math.nan, ())
    need = max(1, math.ceil(SUPPORT * counts.sum()))

    # distance r = j - i, shifted to r + rows - 1 >= 0: weight summed and rows counted per r
    index = (np.arange(cols)[None, :] - np.arange(rows)[:, None] + rows - 1)[valid]
    by_distance = np.bincount(index, weights=w[valid], minlength=rows + cols - 1)
    n_distance = np.bincount(index, minlength=rows + cols - 1)
    by_key, n_key = w.sum(0, where=valid), valid.sum(0)
    # (share, rows, tie order, kind, at): a tie goes to the one on more rows, then to the
    # distance, then to the nearer distance or the earlier key
    candidates = [
        (total / n, n, -abs(r), "distance", r)
        for r, total, n in zip(range(-(rows - 1), cols), by_distance, n_distance, strict=True)
        if n >= need
    ] + [
        (total / n, n, -cols - j, "key", j)
        for j, (total, n) in enumerate(zip(by_key, n_key, strict=True))
        if n >= need
    ]
    share, _, _, kind, at = max(candidates)
    j, i = np.arange(cols)[None, :], np.arange(rows)[:, None]
    on = np.flatnonzero((valid & ((j - i == at) if kind == "distance" else (j == at))).any(1))
    # an even spread of row i's drawn weight gives each of its keys drawn total_i / keys_i
    even_share = float(np.mean(w[on].sum(1, where=valid[on]) / keys[on]))
    best = Hypothesis(
        kind,
        at + offset * (kind == "key"),
        float(share),
        tuple(int(row) + offset for row in on),
        even_share,
    )

    evenness, even_rows = _evenness(w, valid)
    if share >= max(STANDOUT * even_share, NOTICE):  # the head follows this distance or key
        pattern = kind if share >= FOCUS else "leans"
    else:
        pattern = "even" if evenness >= EVEN else "mixed"
    return HeadReading(pattern, best, evenness, tuple(int(i) + offset for i in even_rows))


def _evenness(w: np.ndarray, valid: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean over rows with two keys or more drawn of H(p_i) / log(m_i), and those rows."""
    m, total = valid.sum(1), w.sum(1, where=valid)
    rows = np.flatnonzero((m >= 2) & (total > 0))
    if rows.size == 0:
        return math.nan, rows
    p = w[rows] / total[rows, None]
    plogp = np.where(valid[rows] & (p > 0), p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return float(np.mean(-plogp.sum(1) / np.log(m[rows]))), rows


def spans(positions: Sequence[int], joiner: str = ", ") -> str:
    """Sorted positions as runs: (1, 2, 3, 5, 7, 8) -> '1-3, 5, 7-8'.

    >>> spans((1, 2, 3, 5, 7, 8)), spans((4,)), spans([0, 1, 2, 5], " and ")
    ('1-3, 5, 7-8', '4', '0-2 and 5')
    """
    runs: list[list[int]] = []
    for p in positions:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return joiner.join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
