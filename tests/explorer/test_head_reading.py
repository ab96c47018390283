"""The head-note engine against the definition cell by cell, on random and constructed heads."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.figures.head_reading import read_head
from explorer.figures.notes import head_note, head_short, weights_note
from explorer.figures.numbers import percent
from tests.explorer.head_brute import assert_note_reads, brute_reading


def softmax_rows(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    e = np.where(allowed, np.exp(logits - logits.max(1, keepdims=True)), 0.0)
    return e / np.maximum(e.sum(1, keepdims=True), 1e-300)


def masks(n: int, kind: str, pad: int = 2) -> np.ndarray:
    i, j = np.indices((n, n))
    return {
        "none": np.ones((n, n), dtype=bool),
        "causal": j <= i,
        "padding": j < n - pad,
        "causal-padding": (j <= i) & (j < n - pad),
    }[kind]


def assert_reads_like_brute(weights: np.ndarray, visible=None, offset: int = 0) -> None:
    got, want = read_head(weights, visible, offset), brute_reading(weights, visible, offset)
    assert got.pattern == want["pattern"]
    if want["pattern"] == "none":
        return
    assert (got.best.kind, got.best.at) == (want["kind"], want["at"])
    assert got.best.share == pytest.approx(want["share"], abs=1e-12)
    assert list(got.best.rows) == want["rows"]
    np.testing.assert_allclose(got.evenness, want["evenness"], atol=1e-12)
    assert list(got.even_rows) == want["even_rows"]
    assert_note_reads(head_note(got, 0), want)  # the sentence states those numbers


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "causal-padding"])
@pytest.mark.parametrize("seed", range(6))
def test_random_heads_read_like_the_definition(kind: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    allowed = masks(n, kind, pad=int(rng.integers(0, n)))
    w = softmax_rows(rng.normal(scale=rng.choice([0.3, 3.0]), size=(n, n)), allowed)
    assert_reads_like_brute(np.where(allowed, w, np.nan))  # masked cells NaN
    assert_reads_like_brute(w, visible=allowed)  # masked cells exactly 0, the mask given


@pytest.mark.parametrize("seed", range(4))
def test_a_window_reads_like_the_definition(seed: int) -> None:
    """A diagonal window from position 40: rows also see keys before it; positions absolute."""
    rng = np.random.default_rng(seed)
    n, start, size = 60, 40, 12
    allowed = masks(n, "causal")
    w = softmax_rows(rng.normal(scale=3.0, size=(n, n)), allowed)
    window = np.where(allowed, w, np.nan)[start : start + size, start : start + size]
    assert_reads_like_brute(window, offset=start)
    assert read_head(window, offset=start).best.rows[0] >= start


def test_a_head_on_a_fixed_key_is_named_by_that_key() -> None:
    n = 8
    allowed = masks(n, "causal")
    logits = np.where(np.arange(n)[None, :] == 2, 6.0, 0.0) + 0 * np.arange(n)[:, None]
    reading = read_head(np.where(allowed, softmax_rows(logits, allowed), np.nan))
    assert (reading.pattern, reading.best.kind, reading.best.at) == ("key", "key", 2)
    assert reading.best.rows == tuple(range(2, n))  # only rows that see key 2
    note = weights_note(np.where(allowed, softmax_rows(logits, allowed), np.nan), 1)
    assert "one fixed position (j = 2) whatever the query" in note


def test_the_first_token_is_a_fixed_key_worded_as_such() -> None:
    w = np.where(masks(6, "causal"), np.eye(6)[[0] * 6], np.nan)
    reading = read_head(w)
    assert (reading.pattern, reading.best.at, reading.best.rows) == ("key", 0, (1, 2, 3, 4, 5))
    assert "the first position (j = 0)" in head_note(reading, 0)
    assert head_short(reading) == "100% on j = 0"


@pytest.mark.parametrize("r", [-3, -1, 0, 2])
def test_a_head_on_a_distance_is_named_by_that_distance(r: int) -> None:
    n = 9
    allowed = masks(n, "causal" if r <= 0 else "none")
    i, j = np.indices((n, n))
    w = softmax_rows(np.where(j - i == r, 8.0, 0.0), allowed)
    reading = read_head(np.where(allowed, w, np.nan))
    assert (reading.pattern, reading.best.kind, reading.best.at) == ("distance", "distance", r)
    # rows that see a key at j - i = r and have a choice; a causal row 0 has none
    want = [i for i in range(n) if 0 <= i + r < n and allowed[i].sum() >= 2]
    assert list(reading.best.rows) == want
    assert f"(j - i = {r})" in head_note(reading, 0)


@pytest.mark.parametrize("kind", ["none", "causal", "causal-padding"])
def test_a_uniform_head_is_said_to_spread_evenly(kind: str) -> None:
    allowed = masks(10, kind)
    w = np.where(allowed, 1.0, np.nan) / allowed.sum(1, keepdims=True)
    reading = read_head(w)
    assert reading.pattern == "even" and reading.evenness == pytest.approx(1.0)
    assert "spreads its weight evenly" in head_note(reading, 0)
    assert percent(reading.evenness) == "100%"


def test_a_distance_on_few_rows_does_not_win() -> None:
    """Row 7 alone puts all on key 0 (j - i = -7): defined on one row of seven, not chosen."""
    n = 8
    allowed = masks(n, "causal")
    w = np.where(allowed, 1.0, 0.0) / allowed.sum(1, keepdims=True)
    w[7] = np.eye(n)[0]
    w[1:7] = 0.6 * np.eye(n, k=-1)[1:7] + 0.4 * w[1:7] * (np.eye(n, k=-1)[1:7] == 0)
    reading = read_head(np.where(allowed, w, np.nan))
    assert reading.best.at == -1 and len(reading.best.rows) == 7


def test_every_key_masked_says_no_choice() -> None:
    reading = read_head(np.full((3, 3), np.nan))
    assert reading.pattern == "none" and head_short(reading) == "no choice"
    assert "no query row sees two keys or more" in head_note(reading, 1)


@pytest.mark.parametrize("x", [0.0, 1.0, 0.26, 0.9985, 0.99996, 0.004, 1e-5, 0.5])
def test_percent_says_100_or_0_only_when_exact(x: float) -> None:
    text = percent(x)
    assert (text == "100%") == (x == 1.0) and (text == "0%") == (x == 0.0)
    if text[0].isdigit():
        assert abs(float(text[:-1]) - 100 * x) <= 0.5 * 10 ** -len((text[:-1] + ".").split(".")[1])


def test_a_head_that_stands_out_with_less_than_half_leans() -> None:
    """35% on key 0 in every row of ten keys: 3.5 times an even spread's 10%, under half."""
    w = np.full((10, 10), 0.65 / 9)
    w[:, 0] = 0.35
    reading = read_head(w)
    assert (reading.pattern, reading.best.at) == ("leans", 0)
    assert reading.best.share == pytest.approx(0.35) and reading.best.even_share == 0.1
    assert head_note(reading, 0).startswith("head 0 leans on the first position (j = 0)")
    assert head_short(reading) == "35% on j = 0 (even: 10%)"


def test_rows_that_each_pick_their_own_key_follow_no_pattern() -> None:
    """Row i puts 50% on key 2i mod 11, 5% on each other: every key and every distance j - i
    is picked once, so none gets 1.5 times an even spread's share, yet no row is even."""
    n = 11
    w = np.full((n, n), 0.05)
    w[np.arange(n), 2 * np.arange(n) % n] = 0.5
    assert len(set(2 * np.arange(n) % n - np.arange(n))) == n  # distinct distances
    reading = read_head(w)
    assert reading.pattern == "mixed" and reading.evenness < 0.85
    assert reading.best.share < 1.5 * reading.best.even_share
    note = head_note(reading, 0)
    assert note.startswith("head 0 follows no one distance or key")
    assert_note_reads(note, brute_reading(w))
    assert head_short(reading).startswith("no one pattern (entropy ")


def test_a_key_with_under_a_tenth_of_the_weight_names_no_pattern() -> None:
    """Every row gives key 0 about 8% (3 times an even spread's 2.4%) and 80% to its own key."""
    n = 41
    w = np.full((n, n), 0.12 / (n - 2))
    w[:, 0] = 0.08
    w[np.arange(n), 2 * np.arange(n) % n] += 0.8
    w /= w.sum(1, keepdims=True)
    reading = read_head(w)
    assert reading.best.at == 0 and 2 * reading.best.even_share < reading.best.share < 0.1
    assert reading.pattern == "mixed"
    note = head_note(reading, 0)
    assert "is under 10% of a row's weight" in note
    assert_note_reads(note, brute_reading(w))
