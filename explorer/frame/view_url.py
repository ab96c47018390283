"""The address a view writes: every URL-bound widget records itself as it is drawn.

Streamlit's binding leaves a widget at its default out of the address; the record keeps the
same rule, so a download's link (``explorer.frame.downloads``) is the address bar's query, no
more and no less, and its params.json holds every control, defaults included.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from explorer.frame.allowed import Allowed

_VIEW_URL_KEY = "_view_url"  # every bound widget this view drew: its value and URL form


def start_view_url() -> None:
    """Begin the URL record of a full run (the shared controls call this before any widget).

    The previous view's record is dropped here; its download keeps its own reference.
    """
    st.session_state[_VIEW_URL_KEY] = {}


def view_record() -> dict[str, tuple[object, list[str] | None]]:
    """Every bound widget this view drew, in the order drawn: key -> (the value it shows, its
    values in the address, None at its default). The same dict for the whole view: a download
    made before the page's last widget is drawn still sees that widget when clicked."""
    return st.session_state.setdefault(_VIEW_URL_KEY, {})


def url_of(record: Mapping[str, tuple[object, list[str] | None]]) -> list[tuple[str, str]]:
    """The address's query of a view record, one (key, value) per URL value.

    >>> url_of({"n": (16, ["16"]), "k": (2, None), "heads": ([0, 1], ["0", "1"])})
    [('n', '16'), ('heads', '0'), ('heads', '1')]
    """
    return [(key, value) for key, (_, url) in record.items() for value in url or ()]


def record_url(key: str, allowed: Allowed, default: object, value: object) -> None:
    """Note widget ``key`` showing ``value`` and its URL form: what Streamlit's binding (or
    :func:`write_url`) puts in the address, which leaves a default out. A fragment's rerun
    replaces its own widgets' entries in place."""
    record = view_record()
    record.pop(key, None)  # drawn again (a fragment): its place follows the latest drawing
    if value == default:
        record[key] = (value, None)
    else:
        record[key] = (value, [""] if value is None else allowed.url_values(value))
