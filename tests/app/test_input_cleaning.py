"""One treatment of input wherever it comes from: text typed in the sidebar is cleaned as the
same text in the URL is, and a page's own URL key given twice warns as a shared key does."""

from __future__ import annotations

import pytest

from explorer.frame.query_values import validate
from tests.app.conftest import assert_clean, open_page

HOSTILE = "the\u202e cat\x00 sat\u2066"  # a bidi override, a NUL, a bidi isolate


def warnings_of(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]  # drop the markdown escapes


def test_typed_text_is_cleaned_as_the_same_text_in_the_url() -> None:
    cleaned, _ = validate("text", HOSTILE)  # the URL's cleaning, the definition here
    assert cleaned != HOSTILE
    from_url = open_page("lookup", text=HOSTILE)
    typed = open_page("lookup")
    typed.text_input(key="text").set_value(HOSTILE).run()
    assert_clean(typed)
    for at in (from_url, typed):
        assert at.text_input(key="text").value == cleaned
        assert at.slider(key="n").value == len(cleaned.split())
    (warning,) = [w for w in warnings_of(typed) if "control character" in w]
    removed = len(HOSTILE) - len(cleaned)
    assert warning == (
        f"Sentence (URL parameter text): removed {removed} control character(s) that cannot "
        "be shown"
    )
    typed.run()  # the next run has nothing left to remove and says nothing more
    assert not [w for w in warnings_of(typed) if "control character" in w]


@pytest.mark.parametrize(
    ("page", "key", "values", "widget"),
    [
        ("skew", "skew_head", ["0", "1"], "segmented_control"),
        ("lookup", "ak_view", ["by channel", "by query row"], "radio"),
        ("attention", "attention_head", ["1", "0"], "segmented_control"),
        ("trained", "trained_length", ["9", "12"], "slider"),
    ],
)
def test_a_page_key_given_twice_warns_and_uses_the_last(page, key, values, widget) -> None:
    at = open_page(page, n="6", **{key: values})
    assert_clean(at)
    listed = ", ".join(repr(v) for v in values)
    want = f"URL parameter {key} is given 2 times ({listed}); using the last one, {values[-1]!r}"
    assert want in warnings_of(at), warnings_of(at)
    shown = getattr(at, widget)(key=key).value
    assert str(shown) == values[-1]
