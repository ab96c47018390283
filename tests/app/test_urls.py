"""URL parameters through AppTest: good ones set the view, bad ones warn and never raise."""

from __future__ import annotations

import numpy as np
import pytest

import relpos_core as rc
from explorer.params import DISPLAY_MAX, N_MAX
from tests.app.conftest import assert_clean, chart_spec, chart_z, open_page


def warnings_of(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]  # drop the markdown escapes


def test_good_parameters_set_the_view_and_the_page() -> None:
    at = open_page("lookup", n="7", k="2", d_model="32", heads="4", seed="5", mask="causal")
    assert_clean(at)
    assert not at.warning
    assert at.slider(key="n").value == 7 and at.slider(key="k").value == 2
    assert at.selectbox(key="d_model").value == 32 and at.selectbox(key="heads").value == 4
    assert at.number_input(key="seed").value == 5 and at.radio(key="mask").value == "causal"
    np.testing.assert_array_equal(chart_z(at, "index"), rc.relative_index(7, 7, 2).numpy())
    assert chart_z(at, "table_k").shape == (5, 8)  # (2k+1, d_model / heads)


@pytest.mark.parametrize(
    ("query", "slider", "expected", "words"),
    [
        ({"n": "abc"}, "n", 8, ["n (sequence length)", "[1, 4096]", "'abc'"]),
        ({"n": "100000"}, "n", N_MAX, ["n (sequence length)", "[1, 4096]", "'100000'", "4096"]),
        ({"k": "-5"}, "k", 0, ["k (clip distance)", "[0, 64]", "'-5'"]),
        ({"n": "3.5"}, "n", 3, ["n (sequence length)", "'3.5'", "using 3"]),
    ],
)
def test_bad_numbers_are_clamped_or_ignored_with_a_warning(query, slider, expected, words):
    at = open_page("lookup", **query)
    assert_clean(at)
    assert at.slider(key=slider).value == expected
    shown = " ".join(warnings_of(at))
    for word in words:
        assert word in shown, (word, shown)
    size = min(at.slider(key="n").value, DISPLAY_MAX)
    assert chart_z(at, "index").shape == (size, size)


def test_bad_choices_fall_back_with_a_warning() -> None:
    at = open_page("overview", d_model="12", heads="3", mask="zzz", seed="-1")
    assert_clean(at)
    assert at.selectbox(key="d_model").value == 16 and at.selectbox(key="heads").value == 2
    assert at.radio(key="mask").value == "none" and at.number_input(key="seed").value == 0
    shown = " ".join(warnings_of(at))
    for word in ("d_model", "'12'", "heads", "'3'", "mask", "'zzz'", "seed", "'-1'"):
        assert word in shown, (word, shown)


def test_markup_in_text_is_shown_escaped_never_rendered() -> None:
    text = "<script>alert(1)</script> <b>bold</b> [x](javascript:alert(1))"
    at = open_page("attention", text=text)
    assert_clean(at)
    assert any("markup" in w for w in warnings_of(at))
    ticks = chart_spec(at, "attention_weights")["layout"]["xaxis"]["ticktext"]
    assert ticks[0].startswith("&lt;script&gt;") and ticks[1] == "&lt;b&gt;bold&lt;/b&gt;"
    assert not any("<" in tick for tick in ticks)
    tokens_line = next(m.value for m in at.markdown if m.value.startswith("Tokens:"))
    assert "`<script>alert(1)</script>`" in tokens_line  # inline code: shown literally
    for element in [*at.warning, *at.info]:
        assert "<script>" not in element.value  # escaped for markdown


def test_unknown_parameters_are_left_alone() -> None:
    at = open_page("overview", utm_source="x", n="5")
    assert_clean(at)
    assert not at.warning and at.slider(key="n").value == 5
