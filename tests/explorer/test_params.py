"""explorer.params: limits, validation, and parsing untrusted URL strings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.params import (
    D_MODEL_CHOICES,
    DISPLAY_MAX,
    HEADS_CHOICES,
    N_MAX,
    TEXT_MAX_CHARS,
    WIN_MAX,
    ViewParams,
    tokenize,
)
from explorer.url_query import QUERY_KEYS, parse_query


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


def test_good_query_round_trips() -> None:
    parsed = parse_query(
        {"n": "7", "k": "2", "d_model": "32", "heads": "4", "seed": "9", "mask": "causal",
         "pad": "1", "text": "", "page": "lookup"}
    )  # fmt: skip
    assert parsed.warnings == () and parsed.corrections == {}
    assert parsed.params == ViewParams(n=7, k=2, d_model=32, heads=4, seed=9, mask="causal", pad=1)


@pytest.mark.parametrize(
    ("query", "key", "used", "words"),
    [
        ({"n": "abc"}, "n", 8, ("n", "[1, 4096]", "'abc'", "using 8")),
        ({"n": "100000"}, "n", 4096, ("'100000'", "using 4096")),
        ({"k": "-5"}, "k", 0, ("k (clip distance)", "[0, 64]", "'-5'", "using 0")),
        ({"n": "3.5"}, "n", 3, ("'3.5'", "using 3")),
        ({"n": "nan"}, "n", 8, ("'nan'",)),
        ({"n": "1e999"}, "n", 8, ("'1e999'",)),
        ({"heads": "3"}, "heads", 2, ("heads", "1, 2, 4, 8", "'3'")),
        ({"mask": "<b>"}, "mask", "none", ("mask", "'<b>'")),
    ],
)
def test_bad_query_values_are_fixed_with_a_warning(query, key, used, words) -> None:
    parsed = parse_query(query)
    assert getattr(parsed.params, key) == used and parsed.corrections == {key: used}
    assert len(parsed.warnings) == 1
    for word in words:
        assert word in parsed.warnings[0]


def test_text_markup_and_length_are_reported() -> None:
    parsed = parse_query({"text": "<script>alert(1)</script>"})
    assert parsed.params.text == "<script>alert(1)</script>"  # kept, shown escaped by the app
    assert "markup" in parsed.warnings[0]
    long = parse_query({"text": "x" * (TEXT_MAX_CHARS + 10)})
    assert len(long.params.text) == TEXT_MAX_CHARS and "truncated" in long.warnings[0]


def test_repeated_parameters_use_the_last_value() -> None:
    assert parse_query({"n": ["3", "5"]}).params.n == 5


@given(st.dictionaries(st.sampled_from((*QUERY_KEYS, "other")), st.text(max_size=30)))
def test_parse_query_never_raises(raw: dict[str, str]) -> None:
    parsed = parse_query(raw)
    assert isinstance(parsed.params, ViewParams)
    assert set(parsed.corrections) <= set(raw)


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


def test_window_start_from_the_url_is_clamped_with_a_warning() -> None:
    parsed = parse_query({"n": "4096", "win": "99999"})
    assert parsed.params.win == WIN_MAX and parsed.corrections == {"win": WIN_MAX}
    assert "win (window start) must be an integer in [0, 3584]" in parsed.warnings[0]
    assert N_MAX == 4096 and WIN_MAX == N_MAX - DISPLAY_MAX
