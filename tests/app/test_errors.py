"""Nothing reaches Streamlit uncaught, so no user ever sees a traceback (Community Cloud would
show one whatever the config says)."""

from __future__ import annotations

import pytest

from explorer.stories.shaw import views as compute
from tests.app.conftest import open_page


def failing(error: Exception):
    def raise_it(*args, **kwargs):
        raise error

    return raise_it


def test_a_bug_shows_a_short_message_and_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compute, "lookup_view", failing(RuntimeError("internal detail 0x2a")))
    at = open_page("lookup")
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "Something went wrong" in shown
    assert "internal detail" not in shown and "Traceback" not in shown


def test_a_limit_the_user_reached_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    message = "n (sequence length) must be in [1, 4096], got 5000"
    monkeypatch.setattr(compute, "lookup_view", failing(ValueError(message)))
    at = open_page("lookup")
    assert not at.exception
    assert any(message in e.value.replace("\\", "") for e in at.error)
