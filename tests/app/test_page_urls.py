"""A page's own controls live in the URL too: opening a link reproduces the view a user reached
by clicking, and a value the control cannot take warns instead of vanishing."""

from __future__ import annotations

import numpy as np
import pytest

from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import PANEL_TYPES, trace_pixels, trace_z


def warnings_of(at) -> str:
    return " ".join(w.value.replace("\\", "") for w in at.warning)  # drop the markdown escapes


def clicked(page: str, set_values, query: dict[str, str]):
    """The view reached by opening ``page`` and then setting widgets by hand."""
    at = open_page(page, **query)
    for getter, key, value in set_values:  # one at a time: a control may appear after another
        getattr(at, getter)(key=key).set_value(value).run()
    return at


def panels(at, key: str) -> list[np.ndarray]:
    """What each panel of ``chart_<key>`` carries: a heatmap's z, or an image's pixels."""
    traces = [t for t in chart_spec(at, key)["data"] if t["type"] in PANEL_TYPES]
    assert traces, f"chart_{key} has no panel"
    return [trace_pixels(t) if t["type"] == "image" else trace_z(t) for t in traces]


@pytest.mark.parametrize(
    ("page", "url", "widgets", "chart"),
    [
        (
            "attention",
            {"attention_head": "1"},
            [("segmented_control", "attention_head", 1)],
            "attention_weights",
        ),
        (
            "logits",
            {"logits_head": "1"},
            [("segmented_control", "logits_head", 1)],
            "logits_head",  # the head's content and relative terms
        ),
        (
            "lookup",
            {"ak_view": "by query row", "ak_row": "5"},
            [("radio", "ak_view", "by query row"), ("slider", "ak_row", 5)],
            "a_k_row",
        ),
        (
            "skew",
            {"skew_kind": "unmasked (two-sided)", "skew_head": "1", "skew_step": "4 sliced"},
            [("segmented_control", "skew_kind", "unmasked (two-sided)"),
             ("segmented_control", "skew_head", 1),
             ("segmented_control", "skew_step", 4)],
            "skew_unmasked_result",
        ),
        (
            "trained",
            {"trained_model": "absolute (trained)", "trained_length": "20", "trained_seed": "3"},
            [("segmented_control", "trained_model", "absolute"), ("slider", "trained_length", 20),
             ("number_input", "trained_seed", 3)],
            "trained_prediction",
        ),
    ],
)  # fmt: skip
def test_a_link_reproduces_what_clicking_shows(page, url, widgets, chart) -> None:
    linked = open_page(page, **url)
    assert_clean(linked)
    assert not linked.warning, warnings_of(linked)
    for getter, key, value in widgets:
        assert getattr(linked, getter)(key=key).value == value
    by_hand = clicked(page, widgets, {})
    assert chart in chart_keys(linked)
    shown = panels(linked, chart)
    for mine, theirs in zip(shown, panels(by_hand, chart), strict=True):
        np.testing.assert_array_equal(mine, theirs)
    default = open_page(page)  # and the link did change the view
    if chart in chart_keys(default):
        before = panels(default, chart)
        changed = [not np.array_equal(a, b) for a, b in zip(before, shown, strict=True)]
        assert any(changed), changed  # an overlay (the skew's shading) may stay the same


@pytest.mark.parametrize(
    ("page", "url", "getter", "key", "expected", "words"),
    [
        ("attention", {"attention_head": "7"}, "segmented_control", "attention_head", 0,
         ["attention_head", "one of 0, 1", "'7'"]),
        ("lookup", {"ak_view": "by query row", "ak_row": "99"}, "slider", "ak_row", 0,
         ["ak_row", "[0, 7]", "'99'"]),
        ("lookup", {"ak_channel": "x<b>"}, "slider", "ak_channel", 0,
         ["ak_channel", "[0, 7]", "'x<b>'"]),
        ("skew", {"skew_distance": "maybe"}, "toggle", "skew_distance", True,
         ["skew_distance", "true or false", "'maybe'"]),
        ("trained", {"trained_length": "0"}, "slider", "trained_length", 32,
         ["trained_length", "[1, 128]", "'0'"]),
    ],
)  # fmt: skip
def test_a_value_the_control_cannot_take_warns(page, url, getter, key, expected, words) -> None:
    at = open_page(page, **url)
    assert_clean(at)
    assert getattr(at, getter)(key=key).value == expected
    shown = warnings_of(at)
    for word in words:
        assert word in shown, (word, shown)
