"""The notes under the figures say what the numbers shown say: checked against brute force."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.figures.notes import band_note, clip_note, focus_note


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


def test_favoured_distance_note_names_the_distance_with_the_largest_mean() -> None:
    from explorer.figures.notes import favoured_distance_note

    rng = np.random.default_rng(1)
    term = rng.normal(size=(7, 7))
    i, j = np.indices(term.shape)
    valid = j <= i
    # j - i = -6 and -5 hold under 3 cells: the note leaves them out
    means = {r: np.mean([term[a, b] for a in range(7) for b in range(7) if b - a == r and b <= a])
             for r in range(-4, 1)}  # fmt: skip
    high, low = max(means, key=means.get), min(means, key=means.get)
    note = favoured_distance_note(term, j - i, valid, "the term")
    assert f"largest at j - i = {high} (mean {means[high]:.3g} over {7 + high} cells)" in note
    assert f"smallest at j - i = {low} (mean {means[low]:.3g} over {7 + low} cells)" in note


def test_beyond_note_measures_the_change_past_the_training_length() -> None:
    from explorer.figures.notes import beyond_note

    r = np.arange(-9, 1)  # training length 4: |j - i| <= 3 seen
    clipped = np.maximum(r, -2)[None] * 1.0  # a table clipped at 2: flat beyond
    ramp = r[None] * 2.0  # ALiBi-like: keeps falling
    note = beyond_note(r, {"clipped": clipped, "ramp": ramp}, 4)
    # ramp: range within 6 (0 to -6), moves 12 more beyond (-6 to -18): 200 %
    assert note == (
        "Past |j - i| = 3: clipped holds still (0% of its range within); ramp keeps moving (200%)."
    )
