"""explorer.frame.url_query: untrusted query strings -> a view, a warning per problem, the URL
fix."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.frame.params import DISPLAY_MAX, N_MAX, TEXT_MAX_CHARS, WIN_MAX, ViewParams
from explorer.frame.url_query import QUERY_KEYS, parse_query


def parse_random(query, *args):
    """parse_query of a URL that asks for random weights (the app opens on trained ones,
    which fix d_model, heads, the mask and k: tests/app/test_trained_views.py)."""
    return parse_query({"weights": "random", **query}, *args)


def test_good_query_round_trips() -> None:
    parsed = parse_random(
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
    parsed = parse_random(query)
    assert getattr(parsed.params, key) == used and parsed.corrections == {key: used}
    assert len(parsed.warnings) == 1
    for word in words:
        assert word in parsed.warnings[0]


@pytest.mark.parametrize(
    "text", ["<script>alert(1)</script>", "[CLS] the cat [SEP]", "snake_case *bold* `x` \\ &"]
)
def test_markup_is_kept_and_never_reported(text: str) -> None:
    parsed = parse_random({"text": text})
    assert parsed.params.text == text  # the app shows it literally: nothing is changed
    assert parsed.warnings == () and parsed.corrections == {}


def test_what_is_changed_in_the_text_is_reported() -> None:
    long = parse_random({"text": "x" * (TEXT_MAX_CHARS + 10)})
    assert len(long.params.text) == TEXT_MAX_CHARS and "truncated" in long.warnings[0]
    assert long.corrections == {"text": long.params.text}
    hidden = parse_random({"text": "the\x00 cat\u202e sat\tdown"})
    assert hidden.params.text == "the cat sat\tdown"  # whitespace stays: it only splits tokens
    assert hidden.warnings == (
        "URL parameter text: removed 2 control character(s) that cannot be shown",
    )


@pytest.mark.parametrize(("values", "used"), [(["1", "2"], 2), (["3", "abc"], 8), (["8", "8"], 8)])
def test_a_repeated_key_uses_its_last_value_and_says_so(values: list[str], used: int) -> None:
    parsed = parse_random({"n": values})
    assert parsed.params.n == used and parsed.corrections == {"n": used}
    assert parsed.warnings[0] == (
        f"URL parameter n is given 2 times ({', '.join(repr(v) for v in values)}); "
        f"using the last one, {values[-1]!r}"
    )


@pytest.mark.parametrize(
    ("query", "field", "used", "alias"),
    [
        ({"d": "64"}, "d_model", 64, "d"),
        ({"h": "4"}, "heads", 4, "h"),
        ({"N": "16"}, "n", 16, "N"),
        ({"max_relative_position": "5"}, "k", 5, "max_relative_position"),
        ({"sentence": "a b c"}, "text", "a b c", "sentence"),
    ],
)
def test_an_alias_is_used_for_its_key_and_named(query, field, used, alias) -> None:
    parsed = parse_random(query)
    assert getattr(parsed.params, field) == used
    assert parsed.corrections == {field: used} and parsed.remove == (alias,)
    assert parsed.warnings == (
        f"URL parameter {alias}: read as {field}, the name this app uses; "
        f"the address now says {field}",
    )


def test_the_real_key_wins_over_an_alias() -> None:
    parsed = parse_random({"d": "64", "d_model": "32"})
    assert parsed.params.d_model == 32 and parsed.corrections == {} and parsed.remove == ("d",)
    assert parsed.warnings == ("URL parameter d: ignored, d_model is given too",)


def test_keys_that_are_not_shared_are_handed_back() -> None:
    parsed = parse_random({"utm_source": "x", "attention_head": "1", "n": "5"})
    assert parsed.other_keys == ("utm_source", "attention_head") and parsed.warnings == ()


@given(st.dictionaries(st.sampled_from((*QUERY_KEYS, "other")), st.text(max_size=30)))
def test_parse_query_never_raises(raw: dict[str, str]) -> None:
    parsed = parse_random(raw)
    assert isinstance(parsed.params, ViewParams)
    assert set(parsed.corrections) <= set(QUERY_KEYS)


def test_window_start_from_the_url_is_clamped_with_a_warning() -> None:
    parsed = parse_random({"n": "4096", "win": "99999"})
    assert parsed.params.win == WIN_MAX and parsed.corrections == {"win": WIN_MAX}
    assert "win (window start) must be an integer in [0, 3584]" in parsed.warnings[0]
    assert N_MAX == 4096 and WIN_MAX == N_MAX - DISPLAY_MAX


@pytest.mark.parametrize(
    ("query", "used", "words"),
    [
        ({"n": "600", "win": "99999"}, 88, "[0, 88] at n = 600, got '99999'; using 88"),
        ({"n": "1024", "win": "-3"}, 0, "[0, 512] at n = 1024, got '-3'; using 0"),
        ({"text": "w " * 520, "win": "50"}, 8, "[0, 8] at n = 520, got '50'; using 8"),
    ],
)
def test_the_window_clamp_says_the_start_it_uses(query, used, words) -> None:
    parsed = parse_random(query)
    assert parsed.params.win == used and parsed.params.window[0] == used
    assert parsed.corrections["win"] == used
    assert [w for w in parsed.warnings if words in w]


def test_a_window_start_without_a_window_is_ignored_and_removed() -> None:
    parsed = parse_random({"n": "8", "win": "3"})
    assert parsed.params.win == 0 and parsed.remove == ("win",) and "win" not in parsed.corrections
    assert "applies only above n = 512" in parsed.warnings[0]


def test_values_the_widgets_keep_are_used_and_their_url_form_never_blamed() -> None:
    # the URL still says what the widgets showed before the sentence shrank the sequence
    raw = {"n": "1211", "win": "1500", "d": "32", "k": "abc"}
    kept = {"n": 1211, "win": 1400, "d_model": 64, "text": "w " * 600}
    parsed = parse_random(raw, kept)
    assert not [w for w in parsed.warnings if "win" in w or "d_model" in w]
    assert "win" not in parsed.corrections and "d_model" not in parsed.corrections
    assert parsed.params.d_model == 64 and parsed.params.length == 600
    assert parsed.params.window == (88, 600)  # the widget itself moves the kept 1400 to 88
    assert parsed.remove == ("d",)  # an alias is still taken out of the address
    assert parsed.corrections == {"k": 2} and "got 'abc'" in parsed.warnings[0]


def test_the_app_opens_on_trained_weights_with_the_models_sizes() -> None:
    parsed = parse_query({})
    assert parsed.params.weights == "trained"
    assert (parsed.params.d_model, parsed.params.heads, parsed.params.mask) == (128, 4, "causal")
    assert parsed.corrections == {"d_model": 128, "heads": 4, "mask": "causal"}
    assert not parsed.warnings  # nothing the URL said was replaced
