"""The Attention page's token view keeps one token's lines when the URL (or a click) picks it."""

from __future__ import annotations

import numpy as np

from explorer.figures.token_view import WEIGHT_MIN
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of, panel_z

TEXT = "the cat sat on the mat"


def drawn_pairs(at) -> np.ndarray:
    lines = [t for t in chart_spec(at, "attention_tokens")["data"] if t["mode"] == "lines"]
    return np.concatenate([array_of(t["y"]).reshape(-1, 3)[:, :2] for t in lines]).astype(int)


def test_a_focused_query_draws_exactly_its_weights_over_the_threshold() -> None:
    at = open_page("attention", text=TEXT, heads="2", token_focus="q3")
    assert_clean(at)
    pairs = drawn_pairs(at)
    assert (pairs[:, 0] == 3).all()
    heavy = sum(int((panel_z(at, "attention_heads", h)[3] >= WEIGHT_MIN).sum()) for h in (0, 1))
    assert len(pairs) == heavy


def test_a_focused_key_and_every_token_again() -> None:
    at = open_page("attention", text=TEXT, token_focus="k1")
    assert_clean(at)
    assert (drawn_pairs(at)[:, 1] == 1).all()
    at.selectbox(key="token_focus").set_value("all").run()
    pairs = drawn_pairs(at)
    assert len(set(pairs[:, 0])) > 1 and len(set(pairs[:, 1])) > 1


def test_a_focus_the_tokens_do_not_have_is_named_and_dropped() -> None:
    at = open_page("attention", text="the cat", token_focus="q9")
    assert not at.exception and not at.error
    assert any("token_focus" in w.value.replace("\\", "") for w in at.warning)
    assert at.selectbox(key="token_focus").value == "all"
