"""What a visitor sees when a view cannot be drawn: decided once, for whole pages (app.py) and
for the fragments that rerun part of one.

A ``ValueError`` is a limit a visitor can reach (a size over the memory budget, a value out of
range): its message is shown as it is. Anything else is a bug: a short apology on the page, the
traceback in the server log only. A fragment's rerun does not pass through app.py, and an
exception escaping it reaches Streamlit's own error box (a redacted "This app has encountered
an error" on Community Cloud), so fragments take the same handler through :func:`fragment`.
Streamlit's reruns and stops are ``BaseException``s and pass through untouched.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from explorer.frame.host import collect_soon
from explorer.frame.memory import one_view_at_a_time
from explorer.frame.widgets import md_escape

LOG = logging.getLogger(__name__)


@contextlib.contextmanager
def shown_failures() -> Iterator[None]:
    """Run a page, or part of one, and show its failure as an error box instead of raising."""
    try:
        yield
    except ValueError as error:  # a limit a user can reach: say which, never a traceback
        st.error(md_escape(f"That view cannot be drawn: {error}"), icon=":material/error:")
    except Exception:  # a bug: log it for the maintainer, show the user a friendly message
        LOG.exception("unexpected error while drawing the page")
        st.error(
            "Something went wrong while drawing this page. Try other settings or reload; "
            "the details are in the server log.",
            icon=":material/error:",
        )


def fragment(function: Callable[..., Any]) -> Callable[..., Any]:
    """``st.fragment`` of :func:`guarded_view`: a fragment's rerun fails and waits as a page's."""
    return st.fragment(guarded_view(function))


def guarded_view(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run in the view slot (``explorer.frame.memory.one_view_at_a_time``, as app.py
    runs a page) with its failures shown as a whole page's are."""

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            with one_view_at_a_time(), shown_failures():
                return function(*args, **kwargs)
            return None
        finally:
            collect_soon()  # a fragment's rerun too: Streamlit's own collection is off

    return guarded
