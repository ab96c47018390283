"""What a learned position curve does past the distances training held, measured from its numbers.

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
