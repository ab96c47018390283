"""Where T5's bucket numbers go above its chart, and the runs of distances a flag marks: laid out
so no two numbers overlap at the narrowest plot."""

from __future__ import annotations

import numpy as np

LABEL_CHAR_PX, LABEL_GAP_PX = 6, 6  # a number's characters at its 9 px font; between two


def bucket_labels(
    spans: tuple[tuple[int, int, int], ...], low: float, high: float, plot_px: float
) -> list[tuple[int, float]]:
    """(bucket, x) of the bucket numbers written above the plot: each at the middle of its run's
    part within [low, high], the widest runs first, each kept only if it clears every number
    kept (LABEL_GAP_PX between them at ``plot_px`` pixels for the range).

    >>> bucket_labels(((2, -5, -2), (1, -1, -1), (0, 0, 0)), -5.5, 0.5, 60)
    [(2, -3.5), (1, -1.0)]
    """
    per_unit = plot_px / (high - low)
    placed: list[tuple[int, float, float]] = []  # (bucket, x, half width in units)
    visible = []
    for bucket, first, last in spans:
        a, b = max(first - 0.5, low), min(last + 0.5, high)
        if a < b:
            visible.append((b - a, bucket, (a + b) / 2))
    for _, bucket, x in sorted(visible, key=lambda v: -v[0]):
        half = (LABEL_CHAR_PX * len(str(bucket)) + LABEL_GAP_PX) / 2 / per_unit
        if all(abs(x - x2) >= half + half2 for _, x2, half2 in placed):
            placed.append((bucket, x, half))
    return sorted(((b, x) for b, x, _ in placed), key=lambda p: p[1])


def runs(distance: np.ndarray, flag: np.ndarray) -> list[tuple[int, int]]:
    """(first r, last r) of each run of True in ``flag`` along ascending ``distance``.

    >>> runs(np.arange(-3, 3), np.array([1, 1, 0, 0, 1, 0], bool))
    [(-3, -2), (1, 1)]
    """
    edges = np.diff(np.concatenate([[0], flag.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return [(int(distance[a]), int(distance[b])) for a, b in zip(starts, stops, strict=True)]
