"""explorer.frame.params: limits, validation, and parsing untrusted URL strings."""

from __future__ import annotations

import pytest

from explorer.frame.params import (
    D_MODEL_CHOICES,
    DISPLAY_MAX,
    HEADS_CHOICES,
    N_MAX,
    WIN_MAX,
    ViewParams,
    tokenize,
)


def test_defaults_are_valid_and_divisible() -> None:
    params = ViewParams()
    assert params.length == params.n and params.d_model % params.heads == 0
    assert all(d % h == 0 for d in D_MODEL_CHOICES for h in HEADS_CHOICES)


def test_text_sets_the_length_and_tokens() -> None:
    params = ViewParams(n=100, text="  the cat   sat ")
    assert params.tokens == ("the", "cat", "sat") and params.length == 3
    assert tokenize("a " * (N_MAX + 5)) == ("a",) * N_MAX


@pytest.mark.parametrize(
    ("mask", "pad", "n", "causal", "n_pad"),
    [
        ("none", 3, 8, False, 0),
        ("causal", 3, 8, True, 0),
        ("padding", 3, 8, False, 3),
        ("padding", 50, 8, False, 8),  # clipped to the length
        ("causal-padding", 2, 8, True, 2),
    ],
)
def test_mask_kinds(mask: str, pad: int, n: int, causal: bool, n_pad: int) -> None:
    params = ViewParams(n=n, mask=mask, pad=pad)
    assert params.causal is causal and params.n_pad == n_pad


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("n", 0, ("n (sequence length)", "[1, 4096]", "0")),
        ("n", N_MAX + 1, ("n (sequence length)", "4097")),
        ("win", N_MAX, ("win (window start)", "[0, 3584]", "4096")),
        ("k", -1, ("k (clip distance)", "[0, 64]", "-1")),
        ("d_model", 12, ("d_model", "8, 16", "12")),
        ("heads", 3, ("heads", "3")),
        ("mask", "both", ("mask", "'both'")),
        ("n", True, ("n (sequence length)", "True")),
    ],
)
def test_invalid_values_raise_value_error_naming_them(field, value, words) -> None:
    with pytest.raises(ValueError) as info:
        ViewParams(**{field: value})
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize(
    ("n", "win", "window"),
    [
        (8, 0, (0, 8)),
        (512, 100, (0, 512)),  # no window below DISPLAY_MAX: the whole sequence
        (513, 0, (0, 512)),
        (4096, 1000, (1000, 1512)),
        (4096, WIN_MAX, (3584, 4096)),
        (1024, 3000, (512, 1024)),  # a start past the end is moved back
    ],
)
def test_window(n: int, win: int, window: tuple[int, int]) -> None:
    params = ViewParams(n=n, win=win)
    assert params.window == window
    assert params.windowed is (n > DISPLAY_MAX)
    assert window[1] - window[0] == min(n, DISPLAY_MAX)
