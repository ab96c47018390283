"""The notes under the figures say what the numbers shown say: checked against brute force."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.notes import band_note, clip_note, focus_note


def rows_read(n: int, k: int) -> set[int]:
    """Table rows clip(j - i, k) + k that some pair (i, j) of n positions reads, pair by pair."""
    return {max(-k, min(k, j - i)) + k for i in range(n) for j in range(n)}


@pytest.mark.parametrize(("n", "k"), [(8, 20), (8, 7), (8, 8), (5, 64), (3, 2), (1, 5)])
def test_unclipped_note_names_exactly_the_rows_never_read(n: int, k: int) -> None:
    note = clip_note(n, k)
    named: set[int] = set()
    for low, high in re.findall(r"(\d+)(?:-(\d+))?(?= and| are)", note):
        named |= set(range(int(low), int(high or low) + 1))
    assert named == set(range(2 * k + 1)) - rows_read(n, k), note


@pytest.mark.parametrize(("n", "k"), [(8, 2), (16, 1), (10, 3)])
def test_clipped_note_counts_the_pairs_beyond_k(n: int, k: int) -> None:
    beyond = sum(abs(j - i) > k for i in range(n) for j in range(n))
    assert f"the {beyond} pairs with |j - i| > {k}" in clip_note(n, k)


def test_k0_says_softmax_ignores_the_relative_term() -> None:
    assert "softmax ignores" in clip_note(8, 0)
    assert "One colour per row" in band_note(8, 0)
    assert f"|j - i| < {3}" in band_note(8, 3)


def test_focus_note_finds_the_distance_with_the_most_weight() -> None:
    rng = np.random.default_rng(0)
    w = rng.random((6, 6))
    w[np.arange(1, 6), np.arange(0, 5)] += 5.0  # the previous position dominates
    w[0, 3] = np.nan  # a masked cell counts as no weight
    w = w / np.nansum(w, axis=1, keepdims=True)
    by_distance = {}
    for i in range(6):
        for j in range(6):
            if np.isfinite(w[i, j]):
                by_distance[j - i] = by_distance.get(j - i, 0.0) + w[i, j] / 6
    best = max(by_distance, key=by_distance.get)
    assert best == -1
    note = focus_note(w, 3)
    assert note.startswith(f"head 3 puts {100 * by_distance[best]:.0f} % of its weight on ")
    assert "the previous position (j - i = -1)" in note
