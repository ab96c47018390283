"""A control whose range follows another control: its kept value is moved into the new range
before it is drawn, said once in a caption, and the URL is never blamed for it.

Each test replays a sequence that raised (StreamlitValueBelowMinError, StreamlitValueAboveMaxError,
IndexError) or blamed the URL before every widget took its value through explorer.frame.widgets.fit.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from explorer.stories.generalization.controls import TYPED_EXAMPLE
from tests.app.conftest import assert_clean, chart_spec, open_page


def captions(at: AppTest) -> str:
    return " ".join(c.value.replace("\\", "") for c in at.caption)


def warnings(at: AppTest) -> str:
    return " ".join(w.value.replace("\\", "") for w in at.warning)


def step(at: AppTest, kind: str, key: str, value: object) -> AppTest:
    getattr(at, kind)(key=key).set_value(value).run()
    assert_clean(at)
    return at


def test_page_up_twice_on_the_window_start_keeps_the_zoom_in_range() -> None:
    at = open_page("attention", n="1024")
    step(at, "slider", "win", 51)  # PageUp: a tenth of the range
    step(at, "slider", "win", 102)
    assert at.slider(key="attention_zoom").value == 102  # never moved: follows its default
    assert at.slider(key="attention_zoom").min == 102
    step(at, "slider", "attention_zoom", 120)  # now the user's value
    step(at, "slider", "win", 400)
    assert at.slider(key="attention_zoom").value == 400
    assert "zoom 120 was below the new minimum 400; moved to 400" in captions(at)
    step(at, "selectbox", "heads", 4)
    assert "was below" not in captions(at)  # said once
    assert "URL parameter" not in warnings(at)


def test_typing_a_sentence_under_a_kept_window_start_moves_it() -> None:
    at = open_page("lookup", n="1211", win="1500")
    assert "got '1500'; using 699" in warnings(at)  # the link's own value: the URL is named
    step(at, "selectbox", "d_model", 32)
    step(at, "slider", "n", 2000)
    step(at, "slider", "win", 1400)
    step(at, "slider", "lookup_zoom", 1500)
    step(at, "text_input", "text", " ".join(["w"] * 600))  # 600 tokens: last start 88
    assert at.slider(key="win").value == 88
    assert "window start 1400 was above the new maximum 88; moved to 88" in captions(at)
    assert at.slider(key="lookup_zoom").value == 599
    assert "URL parameter" not in warnings(at)
    step(at, "selectbox", "d_model", 64)
    step(at, "text_input", "text", "a b c")  # no window: the slider is hidden, its value kept
    step(at, "text_input", "text", " ".join(["w"] * 700))
    assert at.slider(key="win").value == 88
    assert "URL parameter" not in warnings(at)


def test_a_window_start_kept_while_the_window_is_hidden_moves_when_it_returns() -> None:
    at = open_page("logits", n="1024", win="400")
    step(at, "slider", "n", 100)
    step(at, "slider", "n", 700)
    assert at.slider(key="win").value == 188
    assert "window start 400 was above the new maximum 188; moved to 188" in captions(at)
    assert "URL parameter" not in warnings(at)


def overview_ticks(at: AppTest) -> list[str]:
    return chart_spec(at, "overview_index")["layout"]["xaxis"]["ticktext"]


def test_overview_labels_a_window_by_its_positions() -> None:
    at = open_page("overview", n="1024", win="1")
    assert_clean(at)
    assert overview_ticks(at)[:2] == ["k1", "k2"]
    at = open_page("overview", n="4096", win="3584")
    assert_clean(at)
    assert overview_ticks(at)[0] == "k3584"
    step(at, "text_input", "text", " ".join(f"t{i}" for i in range(600)))
    assert at.slider(key="win").value == 88
    assert overview_ticks(at)[0] == "t88"
    step(at, "text_input", "text", "the cat sat")
    assert overview_ticks(at) == ["the", "cat", "sat"]


def test_lookup_sliders_hidden_by_the_view_switch_move_when_shown_again() -> None:
    at = open_page("lookup", n="64", d_model="128", heads="1")
    step(at, "slider", "ak_channel", 100)
    step(at, "radio", "ak_view", "by query row")
    step(at, "slider", "ak_row", 60)
    step(at, "selectbox", "d_model", 8)
    step(at, "slider", "n", 16)
    assert at.slider(key="ak_row").value == 15
    assert "query row i 60 was above the new maximum 15; moved to 15" in captions(at)
    step(at, "radio", "ak_view", "by channel")
    assert at.slider(key="ak_channel").value == 7
    assert "channel 100 was above the new maximum 7; moved to 7" in captions(at)
    assert "URL parameter" not in warnings(at)


def test_a_head_that_no_longer_exists_moves_to_the_last_head() -> None:
    at = open_page("attention", heads="8")
    step(at, "button_group", "attention_head", 5)
    step(at, "selectbox", "heads", 2)
    assert at.button_group(key="attention_head").value == 1
    assert "head 5 was not one of the choices now (0, 1); moved to 1" in captions(at)


def test_picked_cells_follow_the_sequence() -> None:
    at = open_page("skew", n="64")
    step(at, "number_input", "i", 60)
    step(at, "slider", "n", 16)
    assert at.number_input(key="i").value == 15
    assert "query i 60 was above the new maximum 15; moved to 15" in captions(at)
    assert "URL parameter" not in warnings(at)


def test_the_trained_length_for_the_profile_follows_n() -> None:
    at = open_page("family", n="64")
    step(at, "slider", "built_for", 50)
    step(at, "slider", "n", 20)
    assert at.slider(key="built_for").value == 20
    assert "was above the new maximum 20; moved to 20" in captions(at)


def test_a_link_value_out_of_range_is_named_with_the_url_parameter() -> None:
    at = open_page("attention", n="1024", attention_zoom="5000")
    assert_clean(at)
    assert "URL parameter attention_zoom: must be an integer in [0, 511], got '5000'; using 0" in (
        warnings(at)
    )
    assert at.slider(key="attention_zoom").value == 0


def test_typed_tokens_that_are_not_ids_are_named() -> None:
    """Bad ids get a warning that names them and the example drawn instead, as Basics and
    Multi-head warn and fall back; never an error box."""
    for text, shown in (("abc", "'abc'"), ("", "an empty text"), ("3 0 4", "'3 0 4'")):
        at = open_page("trained", trained_source="Typed", trained_tokens=text)
        assert not at.exception and not at.error
        said = [w.value.replace("\\", "") for w in at.warning]
        assert [w for w in said if w.startswith("trained_tokens")] == [
            "trained_tokens (token ids): must be integers in [1, 15] separated by spaces or "
            f"commas, got {shown}; showing {TYPED_EXAMPLE} instead."
        ], said
    at = open_page("trained", trained_source="Typed")
    step(at, "text_input", "trained_tokens", "4 5 6")
    at.text_input(key="trained_tokens").set_value("x y").run()
    assert not at.exception and not at.error
    assert any("got 'x y'" in w.value.replace("\\", "") for w in at.warning)
    step(at, "radio", "trained_source", "random")  # the typed text no longer matters


def test_typed_tokens_from_a_link_longer_than_the_box_keep_their_beginning() -> None:
    at = open_page("trained", trained_source="Typed", trained_tokens="1 " * 300)
    assert_clean(at)
    assert (
        "URL parameter trained_tokens: must be text of at most 512 characters, got "
        "'1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ...'; using the first 512 characters"
    ) in warnings(at)
    assert at.text_input(key="trained_tokens").value == "1 " * 256
    assert any("of 128 positions" in m.value for m in at.markdown)  # LENGTH_MAX ids used
