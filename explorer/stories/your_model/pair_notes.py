"""Your model's notes on the picked pair (i, j): each figure's value at its distance j - i."""

from __future__ import annotations

import numpy as np

from explorer.pair.definition import Pair
from explorer.stories.your_model.views import RopeView, ShawView, T5View


def values_by_head(values: np.ndarray) -> str:
    """'head 0 0.12, head 1 -0.5' (more than 16 heads: the range and where it lies)."""
    if len(values) <= 16:
        return ", ".join(f"head {h} {v:.3g}" for h, v in enumerate(values))
    low, high = int(np.argmin(values)), int(np.argmax(values))
    return f"from {values[low]:.3g} (head {low}) to {values[high]:.3g} (head {high})"


def t5_pair_note(view: T5View, pair: Pair | None) -> str:
    """The picked pair on the lines: its distance's bucket and each head's bias there."""
    if pair is None:
        return ""
    d = pair.distance
    at = d + view.n - 1
    bucket = int(view.bucket[at])
    untrained = view.untrained_distance
    state = ", never trained" if untrained is not None and untrained[at] else ""
    said = (
        f" At the pair's j - i = {d}, bucket {bucket}{state}: "
        f"{values_by_head(view.bias[:, at])} (logit units)."
    )
    if not view.stack.bidirectional and d > 0:
        said += f" Key {pair.j} comes after query {pair.i}: a decoder's causal mask hides it."
    return said


def matrix_pair_note(view: T5View, pair: Pair | None, head: int, size: int) -> str:
    """Where the picked pair is on the matrix of its first ``size`` queries and keys."""
    if pair is None:
        return ""
    d = pair.distance
    value = float(view.bias[head, d + view.n - 1])
    masked = not view.stack.bidirectional and d > 0
    held = "is masked" if masked else f"holds {value:.4g}"
    if pair.i < size and pair.j < size:
        return f" The picked pair ({pair.i}, {pair.j}) is outlined: its cell {held}."
    if abs(d) < size:
        return (
            f" The picked pair ({pair.i}, {pair.j}) lies beyond the first {size}; every cell "
            f"on the dotted diagonal j - i = {d} {held}, as it does."
        )
    return (
        f" The picked pair's j - i = {d} lies beyond this matrix; its value, {value:.4g}"
        f"{' (masked)' if masked else ''}, is on the lines above."
    )


def shaw_pair_note(view: ShawView, pair: Pair | None) -> str:
    """The row of the checkpoint's tables the picked pair reads, and its norms."""
    if pair is None:
        return ""
    k, d = view.layer.k, pair.distance
    r = max(-k, min(k, d))
    norms = ", ".join(
        f"|{name}_{r}| = {np.linalg.norm(t[r + k]):.3g}" for name, t in view.tables.items()
    )
    clipped = f"clip({d}, {k}) = {r}" if r != d else f"{d}"
    return (
        f" The picked pair's j - i = {d} reads row r = {clipped} of this layer's tables (its k = "
        f"{k}, not the sidebar's; outlined above): {norms}."
    )


def alibi_pair_note(slopes: np.ndarray, pair: Pair | None) -> str:
    if pair is None:
        return ""
    d = pair.distance
    if d == 0:
        return " At the pair's j - i = 0 every head's bias is 0."
    return f" At the pair's j - i = {d}, -m_h |{d}|: {values_by_head(-slopes * abs(d))}."


def rope_pair_note(view: RopeView, pair: Pair | None) -> str:
    """The rotation between the picked pair: each rotary pair turns by θ_t (j - i)."""
    if pair is None:
        return ""
    d = pair.distance
    if d == 0:
        return " At the pair's j - i = 0 no rotary pair turns."
    angle = 2 * np.pi * d / view.wavelength  # θ_t (j - i), radians
    full = int((view.wavelength <= abs(d)).sum())
    return (
        f" Between the pair's positions (j - i = {d}, the solid line at {abs(d)}) pair t turns by "
        f"θ_t·{d}: pair 0 by {angle[0]:.4g} rad ({angle[0] / (2 * np.pi):.3g} turns), the "
        f"slowest by {angle[-1]:.3g} rad; {full} of {len(angle)} turn full circle or more "
        "(wavelength at most |j - i|, below the solid line)."
    )
