"""The notes under the figures say what the numbers shown say: checked against brute force."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.figures.notes import band_note, clip_note


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


def learned_like(r: np.ndarray, context: int) -> dict[str, np.ndarray]:
    """Curves shaped like the family's learned terms: two heads each, j - i = r."""
    edge = -(context - 1)
    buckets = np.select([r >= edge - 3, r >= edge - 13, r >= edge - 30], [edge, 1.0, 2.0], 3.0)
    return {
        "clipped": np.stack([np.maximum(r, edge) * 0.5, np.maximum(r, edge) * -1.0]),
        "zeroed": np.stack([np.where(r >= edge, r - 1.0, 0.0), np.where(r >= edge, 2.0, 0.0)]),
        "ramp": np.stack([r * 0.25, r * 0.0625]),
        "buckets": np.stack([np.where(r >= edge, r, buckets), -np.where(r >= edge, r, buckets)]),
        "wave": np.stack([np.sin(r / 3.0), np.cos(r / 5.0)]),
        "mixed": np.stack([np.maximum(r, edge) * 1.0, np.sin(r / 3.0)]),
    }


def test_beyond_note_says_what_each_curve_does_past_the_training_length() -> None:
    from explorer.figures.beyond_reading import beyond_note
    from tests.explorer.beyond_check import check_beyond_note

    r, context = np.arange(-80, 1), 16
    curves = learned_like(r, context)
    said = check_beyond_note(beyond_note(r, curves, context), r, curves, context)
    assert said["clipped"] == "holds its edge value out to j - i = -80"
    assert said["zeroed"] == "drops to 0 at j - i = -16 and stays flat"
    assert said["ramp"].startswith("keeps falling by 0.0625 to 0.25 logits per position")
    assert said["buckets"].startswith("steps at 3 distances (j - i = -19, -29, -46)")
    assert said["wave"].startswith("keeps varying")
    assert (
        said["mixed"].startswith("head 0 holds its edge value")
        and "head 1 keeps varying" in (said["mixed"])
    )


def test_the_beyond_check_catches_a_false_claim() -> None:
    """The checker itself: a note that calls a ramp flat, or a clip a ramp, is refused."""
    from tests.explorer.beyond_check import check_beyond_note

    r, context = np.arange(-20, 1), 4
    ramp, clip = {"ramp": r[None] * 1.0}, {"clip": np.maximum(r, -3)[None] * 1.0}
    with pytest.raises(AssertionError):
        check_beyond_note("Past |j - i| = 3, the farthest a training window holds: ramp holds "
                          "its edge value out to j - i = -20.", r, ramp, context)  # fmt: skip
    falls = "clip keeps falling by 1 logits per position further back"
    with pytest.raises(AssertionError):
        check_beyond_note(f"Past |j - i| = 3, the farthest a training window holds: {falls}.",
                          r, clip, context)  # fmt: skip
