"""URL parameters through AppTest: good ones set the view, bad ones warn and never raise."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import relpos_core as rc
from explorer.frame.params import DISPLAY_MAX, N_MAX
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import panel_count, panel_positions, panel_z


def warnings_of(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]  # drop the markdown escapes


def test_good_parameters_set_the_view_and_the_page() -> None:
    at = open_page("lookup", n="7", k="2", d_model="32", heads="4", seed="5", mask="causal")
    assert_clean(at)
    assert not at.warning
    assert at.slider(key="n").value == 7 and at.slider(key="k").value == 2
    assert at.selectbox(key="d_model").value == 32 and at.selectbox(key="heads").value == 4
    assert at.number_input(key="seed").value == 5 and at.radio(key="mask").value == "causal"
    np.testing.assert_array_equal(panel_z(at, "index"), rc.relative_index(7, 7, 2).numpy())
    assert panel_count(at, "tables") == 2  # w^K and w^V side by side
    for panel in (0, 1):
        assert panel_z(at, "tables", panel).shape == (5, 8)  # (2k+1, d_model / heads)


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
    assert panel_positions(at, "index") == (size, size)  # at n = 4096 a window, as a PNG


def test_bad_choices_fall_back_with_a_warning() -> None:
    at = open_page("overview", d_model="12", heads="3", mask="zzz", seed="-1")
    assert_clean(at)
    assert at.selectbox(key="d_model").value == 16 and at.selectbox(key="heads").value == 2
    assert at.radio(key="mask").value == "none" and at.number_input(key="seed").value == 0
    shown = " ".join(warnings_of(at))
    for word in ("d_model", "'12'", "heads", "'3'", "mask", "'zzz'", "seed", "'-1'"):
        assert word in shown, (word, shown)


def test_markup_in_text_is_shown_escaped_never_rendered() -> None:
    script, bold, link = "<script>alert(1)</script>", "<b>bold</b>", "[x](javascript:alert(1))"
    text = f"{script} {bold} {link} {bold} {link}"  # the repeats bring up the info box too
    at = open_page("attention", text=text)
    assert_clean(at)
    assert not at.warning  # nothing was changed, so there is nothing to warn about
    assert at.text_input(key="text").value == text
    for key in ("attention_heads", "attention_weights"):
        layout = chart_spec(at, key)["layout"]
        for axis in ("xaxis", "yaxis"):  # tokens name the rows and columns, HTML-escaped
            ticks = layout[axis]["ticktext"]
            assert ticks[0].startswith("&lt;script&gt;") and ticks[1] == "&lt;b&gt;bold&lt;/b&gt;"
            assert not any("<" in tick for tick in ticks), ticks
    data = chart_spec(at, "attention_weights")["data"]
    (cells,) = [t for t in data if t.get("name") == "cells"]
    size = math.isqrt(len(cells["text"]))  # one marker per cell, row by row
    assert cells["text"][1 * size + 0].startswith(
        'i = 1 "&lt;b&gt;bold&lt;/b&gt;"<br>j = 0 "&lt;script&gt;ale…"'
    )
    token_text = [t.get("text") for t in chart_spec(at, "attention_tokens")["data"]]
    assert ["&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bold&lt;/b&gt;"] in [
        labels[:2] for labels in token_text if labels
    ]  # the token view writes each token in full, escaped
    for key in chart_keys(at):  # no chart carries the typed markup unescaped, anywhere
        spec = json.dumps(chart_spec(at, key), ensure_ascii=False)
        assert "<script" not in spec and "<b>bold" not in spec, key
    boxes = [*at.warning, *at.info]
    assert boxes  # the repeated tokens are named
    for element in boxes:  # escaped for markdown: no tag, no link
        assert "<script>" not in element.value and bold not in element.value
        assert "](javascript" not in element.value
    assert any(bold in box.value.replace("\\", "") for box in boxes)  # shown literally


@pytest.mark.parametrize("text", ["[CLS] the cat sat [SEP]", "snake_case and *stars* ok"])
def test_a_sentence_with_brackets_underscores_or_stars_gets_no_banner(text: str) -> None:
    at = open_page("lookup", text=text)
    assert_clean(at)
    assert not at.warning, warnings_of(at)
    assert at.text_input(key="text").value == text


def test_control_characters_are_removed_and_named() -> None:
    at = open_page("lookup", text="the\u202e cat\x07")
    assert_clean(at)
    assert warnings_of(at) == [
        "URL parameter text: removed 2 control character(s) that cannot be shown"
    ]
    assert at.text_input(key="text").value == "the cat"
    assert at.query_params["text"] == "the cat"


@pytest.mark.parametrize(("query", "n"), [({"n": "4097"}, 4096), ({"n": "0"}, 1), ({"n": "-7"}, 1)])
def test_a_clamped_value_is_written_back_into_the_url(query, n) -> None:
    """The address bar holds the value shown (the browser test checks the real address bar)."""
    at = open_page("lookup", **query)
    assert_clean(at)
    assert at.slider(key="n").value == n and at.query_params["n"] == str(n)
    assert f"using {n}" in " ".join(warnings_of(at))


def test_a_clamp_to_the_default_leaves_the_key_out_of_the_url() -> None:
    at = open_page("lookup", k="abc")
    assert at.slider(key="k").value == 2 and "k" not in at.query_params


def test_a_repeated_key_warns_naming_it_and_the_value_used() -> None:
    at = open_page("lookup", n=["1", "2"])
    assert_clean(at)
    assert warnings_of(at) == [
        "URL parameter n is given 2 times ('1', '2'); using the last one, '2'"
    ]
    assert at.slider(key="n").value == 2 and at.query_params["n"] == "2"
    assert panel_z(at, "index").shape == (2, 2)


def test_aliases_are_used_named_and_rewritten_to_the_real_key() -> None:
    at = open_page("lookup", d="64", h="4")
    assert_clean(at)
    assert warnings_of(at) == [
        "URL parameter d: read as d_model, the name this app uses; the address now says d_model",
        "URL parameter h: read as heads, the name this app uses; the address now says heads",
    ]
    assert at.selectbox(key="d_model").value == 64 and at.selectbox(key="heads").value == 4
    for panel in (0, 1):  # w^K and w^V
        assert panel_z(at, "tables", panel).shape == (5, 16)  # (2k+1, 64 / 4)
    assert "d" not in at.query_params and "h" not in at.query_params
    assert at.query_params["d_model"] == "64" and at.query_params["heads"] == "4"


@pytest.mark.parametrize(
    ("page", "query", "key"),
    [
        ("overview", {"utm_source": "x", "n": "5"}, "utm_source"),
        ("lookup", {"ak_row": "3"}, "ak_row"),  # a control this view does not show
        ("attention", {"dmodel_x": "64"}, "dmodel_x"),
    ],
)
def test_an_unknown_key_is_named_and_removed(page, query, key) -> None:
    at = open_page(page, **query)
    assert_clean(at)
    shown = warnings_of(at)
    assert len(shown) == 1 and shown[0].startswith(f"URL parameter {key} is not a setting")
    assert key not in at.query_params


def test_a_page_control_in_the_url_is_not_unknown() -> None:
    at = open_page("lookup", ak_view="by query row", ak_row="3", n="5")
    assert_clean(at)
    assert not at.warning and at.slider(key="ak_row").value == 3


def test_the_window_clamp_names_the_start_it_uses() -> None:
    at = open_page("lookup", n="600", win="99999")
    assert_clean(at)
    assert warnings_of(at) == [
        "URL parameter win: win (window start) must be an integer in [0, 88] at n = 600, "
        "got '99999'; using 88"
    ]
    assert at.slider(key="win").value == 88 and at.query_params["win"] == "88"
    assert any("queries and keys 88-599" in c.value for c in at.caption)
