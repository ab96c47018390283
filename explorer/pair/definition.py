"""One picked pair (i, j) for the whole explorer: its distance, the table row it reads, the window
that shows it and why a mask hides it (``explorer.pair.facts`` computes its numbers).

The pair is not part of :class:`ViewParams` (every cached view is keyed by the view, and a
pick must not recompute them): the sidebar binds it to the URL as ``i`` and ``j``, a click on
any (i, j) heatmap cell sets it, and pages read it after their views are built.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.frame.params import DISPLAY_MAX, ViewParams


@dataclass(frozen=True)
class Pair:
    """Query ``i`` and key ``j`` (absolute positions) at clip distance ``k``."""

    i: int
    j: int
    k: int

    @property
    def distance(self) -> int:
        return self.j - self.i

    @property
    def clipped(self) -> int:
        return max(-self.k, min(self.k, self.distance))

    @property
    def table_row(self) -> int:
        """Row of w^K and w^V the pair reads: clip(j - i, k) + k."""
        return self.clipped + self.k

    def marks(self) -> dict[str, int]:
        """The value each axis symbol takes at this pair (what a figure outlines)."""
        return {"i": self.i, "j": self.j, "row": self.table_row, "r": self.distance}


def window_for(pair: Pair, params: ViewParams) -> int | None:
    """The window start that shows both i and j: the current one if it does, else the one that
    centres them (as near it as the sequence allows); None when the pair is too far apart for
    any window (|j - i| >= DISPLAY_MAX)."""
    lo, hi = min(pair.i, pair.j), max(pair.i, pair.j)
    if hi - lo >= DISPLAY_MAX:
        return None
    start, stop = params.window
    if start <= lo and hi < stop:
        return start
    last = max(0, params.length - DISPLAY_MAX)
    centred = (lo + hi) // 2 - DISPLAY_MAX // 2
    return min(min(lo, last), max(max(0, hi - DISPLAY_MAX + 1), centred))


def hidden_reason(params: ViewParams, causal: bool, i: int, j: int) -> str:
    """Why the mask hides key j from query i, '' when it does not (in words)."""
    if causal and j > i:
        return f"key {j} comes after query {i}: the causal mask hides it"
    if "padding" in params.mask and j >= params.length - params.n_pad:
        return f"key {j} is padding (the last {params.n_pad} key(s)): the padding mask hides it"
    return ""
