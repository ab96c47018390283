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
    """Note widget ``key`` showing ``value`` (as :func:`url_form` gives it) and its URL values:
    what Streamlit's binding (or :func:`write_url`) puts in the address, which leaves a default
    out. A fragment's rerun replaces its own widgets' entries in place."""
    record = view_record()
    record.pop(key, None)  # drawn again (a fragment): its place follows the latest drawing
    if value == default:
        record[key] = (url_form(allowed, value), None)
    else:
        url = [""] if value is None else allowed.url_values(value)
        record[key] = (url_form(allowed, value), url)


def url_form(allowed: Allowed, value: object) -> object:
    """A control's value as params.json holds it: as the address writes it (an option by the
    label the control shows, a list as its labels); a number or true / false that the address
    writes as itself stays a number or a bool.

    >>> from explorer.frame.allowed import one_of
    >>> url_form(one_of(["own", "shared"], {"own": "each", "shared": "one for all"}.get), "shared")
    'one for all'
    """
    if value is None:
        return value
    values = allowed.url_values(value)
    if allowed.many:
        return values
    plain = isinstance(value, bool | int | float) and values[0] == str(value).lower()
    return value if plain else values[0]  # a number as a number; a step by its label
