"""What to notice in the Speed & memory page's numbers, written from the curves and timings it
draws (pure: the page's own arrays in, one sentence out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from explorer.frame.budget import format_bytes

A_K, ER, LOGITS = "einsum", "skew", "fp32 logits (b, h, n, n)"
YARDSTICKS = ("sdpa", "plain")  # attention without relative terms


def _first_over(ns: np.ndarray, values: np.ndarray, budget: float) -> str:
    """'n = 2,048': the first size whose value passes ``budget``, or that none does."""
    over = np.flatnonzero(values > budget)
    return f"from n = {int(ns[over[0]]):,}" if over.size else f"nowhere up to n = {int(ns[-1]):,}"


def memory_note(curves: Mapping[str, tuple[np.ndarray, np.ndarray]], budget: float) -> str:
    """The gap between the materialized a^K and the skew's Er at the chart's largest n, where
    each passes the budget, and what the (b, h, n, n) logits weigh beside Er."""
    ns, a_k = curves[A_K]
    er, logits = curves[ER][1], curves[LOGITS][1]
    n = int(ns[-1])
    return (
        f"At n = {n:,} the materialized a^K needs {format_bytes(a_k[-1])}, "
        f"{a_k[-1] / er[-1]:,.0f} times the skew's Er ({format_bytes(er[-1])}). The "
        f"materialized a^K passes the {format_bytes(budget)} budget "
        f"{_first_over(ns, a_k, budget)}, the skew's Er {_first_over(ns, er, budget)}; but "
        f"the logits every method except banded keeps weigh {format_bytes(logits[-1])} there, "
        f"{logits[-1] / er[-1]:,.0f} times Er: past the skew, the logits are the memory to save."
    )


def timing_note(rows: Sequence[Mapping[str, object]]) -> str:
    """At the largest n measured: the fastest and slowest relative method, and the fastest
    against attention without relative terms (sdpa)."""
    n = max(int(str(row["n"])) for row in rows)
    at_n = {str(r["method"]): float(str(r["median_ms"])) for r in rows if int(str(r["n"])) == n}
    relative = {m: ms for m, ms in at_n.items() if m not in YARDSTICKS}
    if not relative:
        return f"At n = {n:,} only attention without relative terms was measured."
    fast = min(relative, key=lambda m: relative[m])
    slow = max(relative, key=lambda m: relative[m])
    text = (
        f"At n = {n:,}, the largest measured, {fast} is the fastest relative method "
        f"({relative[fast]:.3g} ms)"
    )
    if slow != fast:
        ratio = relative[slow] / relative[fast]
        text += f", {ratio:.1f} times faster than {slow} ({relative[slow]:.3g} ms)"
    if "sdpa" in at_n:
        text += (
            f"; attention without relative terms (sdpa) takes {at_n['sdpa']:.3g} ms, "
            f"{relative[fast] / at_n['sdpa']:.1f} times less than {fast}"
        )
    return text + "."
