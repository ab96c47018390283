"""What a learned position curve does past the distances training held, measured from its numbers,
and the sentence that says it (:func:`beyond_note`).

A curve t(r) against r = j - i <= 0; ``edge`` = -(context - 1), the farthest distance a training
window holds. Read from the edge outward, s_0 = t(edge), s_1 = t(edge - 1), ..., each curve is
exactly one of (first match wins; "equal" is within TOL of its range within, |r| <= |edge|):

    holds    s_m = s_0 for every m              it keeps its edge value (a clipped table)
    zero     s_m = 0 for every m >= 1           it drops to 0 and stays flat (no vector there)
    linear   s_m - s_(m-1) = slope for every m  it keeps changing by one amount per position
    steps    s is constant between at most one jump per STEP_RUN positions on average
             (a bucketed table): the last jump starts the value it keeps to the chart's end
    varies   anything else: its range beyond, against its range within
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOL = 1e-3  # a change under 0.1 % of the curve's range within reads as none (float32 noise)
STEP_RUN = 8  # piecewise constant with runs of 8 positions or more on average reads as steps


@dataclass(frozen=True)
class Beyond:
    kind: str  # holds, zero, linear, steps, varies
    edge: int  # the farthest distance training held, -(context - 1)
    end: int  # the farthest distance drawn
    slope: float  # linear: the change per position further back (logits)
    jumps: tuple[int, ...]  # steps: the distances where a new value starts, nearest first
    span_beyond: float  # max - min of t(r) for r < edge
    span_within: float  # max - min of t(r) for edge <= r


def read_beyond(distance: np.ndarray, values: np.ndarray, context: int) -> Beyond:
    """Classify one curve ``values`` (m,) against ``distance`` (m,) past |j - i| = context - 1.

    >>> r = np.arange(-9, 1)
    >>> [read_beyond(r, t, 4).kind for t in (np.maximum(r, -3), r * (r >= -3), r * 0.5)]
    ['holds', 'zero', 'linear']
    >>> read_beyond(r, r * 0.5, 4).slope
    -0.5
    """
    edge = -(context - 1)
    order = np.argsort(-distance)  # 0, -1, -2, ...: from the query outward
    r, t = distance[order], np.asarray(values, dtype=np.float64)[order]
    within, outward = t[r >= edge], t[r <= edge]  # outward[0] = t(edge)
    span_within = float(np.ptp(within))
    span_beyond = float(np.ptp(outward[1:])) if outward.size > 1 else 0.0
    tol = max(TOL * span_within, 1e-9)
    step = np.diff(outward)  # s_m - s_(m-1)
    kind, slope, jumps = "varies", 0.0, ()
    if np.all(np.abs(outward - outward[0]) <= tol):
        kind = "holds"
    elif np.all(np.abs(outward[1:]) <= tol):
        kind = "zero"
    elif np.all(np.abs(step - step.mean()) <= tol):
        kind, slope = "linear", float(step.mean())
    else:
        moved = np.flatnonzero(np.abs(step) > tol)  # s_(m+1) differs from s_m
        if moved.size * STEP_RUN <= step.size:
            kind, jumps = "steps", tuple(int(r[r <= edge][m + 1]) for m in moved)
    return Beyond(kind, edge, int(r[-1]), slope, jumps, span_beyond, span_within)


def beyond_note(distance: np.ndarray, curves: dict[str, np.ndarray], context: int) -> str:
    """What each scheme's learned term does past the distances training held, read per head by
    :func:`read_beyond` and said in logits per position or as a shape.

    ``curves``: label -> (h, m) against ``distance`` (m,), j - i <= 0.

    >>> r = np.arange(-9, 1)
    >>> print(beyond_note(r, {"clip": np.maximum(r, -2)[None] * 1.0, "ramp": r[None] * 2.0}, 3))
    Past |j - i| = 2, the farthest a training window holds: clip holds its edge value out to
    j - i = -9; ramp keeps falling by 2 logits per position further back.
    """
    parts = []
    for label, values in curves.items():
        read = [read_beyond(distance, v, context) for v in np.asarray(values)]
        groups: dict[str, list[int]] = {}
        for head, b in enumerate(read):
            groups.setdefault(b.kind, []).append(head)
        if len(groups) == 1:
            parts.append(f"{label} {_beyond_phrase([read[h] for h in range(len(read))])}")
            continue
        said = [
            f"head{'s' * (len(heads) > 1)} {', '.join(map(str, heads))} "
            + _beyond_phrase([read[h] for h in heads])
            for heads in groups.values()
        ]
        parts.append(f"{label}: " + ", ".join(said))
    return (
        f"Past |j - i| = {context - 1}, the farthest a training window holds: "
        + "; ".join(parts)
        + "."
    )


def _beyond_phrase(read: list[Beyond]) -> str:
    """What curves of one kind do beyond the edge, with the numbers that show it."""
    first = read[0]
    if first.kind == "holds":
        return f"holds its edge value out to j - i = {first.end}"
    if first.kind == "zero":
        return f"drops to 0 at j - i = {first.edge - 1} and stays flat"
    if first.kind == "linear":
        sizes = sorted(abs(b.slope) for b in read)
        size = f"{sizes[0]:.3g}" + (f" to {sizes[-1]:.3g}" if sizes[-1] > sizes[0] else "")
        verb = "falling" if all(b.slope < 0 for b in read) else "changing"
        per_head = " (one slope per head)" if len(set(sizes)) > 1 else ""
        return f"keeps {verb} by {size} logits per position further back{per_head}"
    if first.kind == "steps":
        jumps = sorted({j for b in read for j in b.jumps}, reverse=True)
        at = ", ".join(map(str, jumps)) if len(jumps) <= 6 else f"{jumps[0]}, ..., {jumps[-1]}"
        return (
            f"steps at {len(jumps)} distance{'s' * (len(jumps) > 1)} (j - i = {at}), then "
            f"holds one value from {jumps[-1]} out to {first.end}"
        )
    beyond, within = max(b.span_beyond for b in read), max(b.span_within for b in read)
    return f"keeps varying (a range of up to {beyond:.3g} logits beyond, {within:.3g} within)"
