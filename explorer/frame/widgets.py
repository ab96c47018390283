"""The explorer's URL-bound widgets, each given a value it can take before it is drawn.

A control's allowed values often follow another control: the window start follows n, a zoom
follows the window, a head picker follows the head count, a picked cell follows the sequence.
Streamlit keeps a bound widget's value in session state, also while the widget is hidden, and
when that value no longer fits the widget's new range it raises (``StreamlitValueBelowMinError``,
``StreamlitValueAboveMaxError``) or falls back to its default without a word. So every widget
here first calls :func:`fit`, which settles in session state the value the widget will show
(before the widget exists: the only moment Streamlit lets it be set):

- a value kept from an earlier run of this session is the user's own (the URL only mirrors
  it): one that no longer fits moves to the nearest allowed value, and a caption says so,
  once; one the user never moved (still the widget's default) follows the new default quietly;
- otherwise the value comes from the URL just opened: one the widget cannot take is replaced by
  the default, with a warning naming the URL parameter, what is allowed and the value.

It also decides how each widget is bound to the URL (``bind="query-params"``, under its key).
A bound widget writes into the URL exactly what it shows (an option's label, a number as
Streamlit writes it), and Streamlit reads back only that. So a URL may spell a value otherwise
(an option's own name, a name a link of an earlier version wrote) or hold one the widget cannot
take, and Streamlit would then drop it from the address on a session's first run without
writing the value the widget shows instead. :func:`write_url` writes that value by hand: the
widget is drawn unbound in that one run (a bound key cannot be written by hand) and bound again
in its next run, when its value is set once more so that Streamlit also writes a change the
browser made while it was unbound. The address bar then always holds the view shown, in the
form the widget writes, and a copied link reopens it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

import streamlit as st
from streamlit.errors import StreamlitAPIException

from explorer.frame.allowed import BOOLEAN, Allowed, int_range, one_of, some_of, text_of_length
from explorer.frame.query_values import quoted
from explorer.frame.screen import PHONE_WIDTH, buttons_fit, is_phone
from explorer.frame.view_url import record_url

BIND = "query-params"
_DEFAULTS_KEY = "_widget_defaults"  # key -> the default each widget was last drawn with
_WRITTEN_KEY = "_url_written_by_hand"  # keys whose URL value this run wrote: drawn unbound
_UNBOUND_KEY = "_url_unbound"  # keys whose widget was drawn unbound: bound again next run
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md_escape(text: str) -> str:
    """Backslash-escape every punctuation character so markdown shows ``text`` literally."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def write_url(key: str, value: str | Sequence[str] | None) -> None:
    """Write ``value`` into the address as URL parameter ``key`` (None: remove the key) and
    draw widget ``key`` unbound in this run (see the module docstring).

    A key bound by an earlier run of this session cannot be written by hand, nor needs to be:
    Streamlit writes a value set in session state into the URL itself.
    """
    try:
        if value is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = value
    except StreamlitAPIException:
        return
    st.session_state[_WRITTEN_KEY] = {*st.session_state.get(_WRITTEN_KEY, ()), key}


def _url_binding(key: str) -> str | None:
    """How widget ``key`` is bound in this run: ``BIND``, or None right after its URL value
    was written by hand (:func:`write_url`)."""
    written = st.session_state.get(_WRITTEN_KEY, set())
    if key not in written:
        return BIND
    st.session_state[_WRITTEN_KEY] = written - {key}
    st.session_state[_UNBOUND_KEY] = {*st.session_state.get(_UNBOUND_KEY, ()), key}
    return None


def set_from_code(key: str, value: object, default: object) -> None:
    """Give widget ``key`` a value from code, before it is drawn (the n of a typed sentence).

    Streamlit writes such a value into the URL only once the widget was drawn in an earlier
    run of the session: before its first drawing the value is written by hand, so that the
    address does not depend on how many runs the page took.
    """
    st.session_state[key] = value
    if key not in st.session_state.get(_DEFAULTS_KEY, {}):  # fit has never seen it
        write_url(key, None if value == default else str(value))


def never_drawn(values: Mapping[str, object]) -> dict[str, str]:
    """Of ``values`` (control key -> value), those of the controls this session has never
    drawn, as URL strings. Streamlit writes a control's value into the address only once it
    was drawn (see :func:`set_from_code`), so a page opened on values set in session state
    carries these in its address and the controls write the rest."""
    drawn = st.session_state.get(_DEFAULTS_KEY, {})
    return {key: str(value) for key, value in values.items() if key not in drawn}


def url_bound_keys() -> set[str]:
    """The keys of every widget this session has bound to the URL: each is drawn after
    :func:`fit`, which records it. A key the URL names outside them is read by nothing."""
    return set(st.session_state.get(_DEFAULTS_KEY, {}))


def _bind_again(key: str) -> None:
    """A widget drawn unbound in its last run is bound again: its value is set once more, so
    that Streamlit writes into the URL a change the browser made while it was unbound."""
    unbound = st.session_state.get(_UNBOUND_KEY, set())
    if key in unbound:
        st.session_state[_UNBOUND_KEY] = unbound - {key}
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def fit(key: str, allowed: Allowed, default: object, name: str) -> str | None:
    """Settle the value widget ``key`` will show, before it is drawn (see the module docstring);
    return how it is bound to the URL in this run (pass it as the widget's ``bind``).

    ``name`` is what the caption calls the control when a kept value had to move.
    """
    if not allowed.fits(default):
        default = allowed.nearest(default)
    _bind_again(key)
    defaults = st.session_state.get(_DEFAULTS_KEY, {})
    untouched = defaults.get(key, default)
    st.session_state[_DEFAULTS_KEY] = {**defaults, key: default}
    if key in st.session_state:  # kept: the user's value, whatever the URL shows
        kept = st.session_state[key]
        if allowed.fits(kept):
            return _url_binding(key)
        moved = allowed.nearest(kept)
        st.session_state[key] = default if moved is None or kept == untouched else moved
        if kept != untouched:
            shown = st.session_state[key]
            st.caption(
                ":material/tune: "
                + md_escape(f"{name} {kept} was {allowed.outside(kept)}; moved to {shown}")
            )
        return _url_binding(key)
    raws = st.query_params.get_all(key)
    if not raws:
        return _url_binding(key)
    value = allowed.read(raws)
    if len(raws) > 1 and not allowed.many:  # as the shared keys say it (url_query._one_value)
        listed = ", ".join(quoted(raw, 12) for raw in raws)
        st.warning(
            md_escape(
                f"URL parameter {key} is given {len(raws)} times ({listed}); using the last "
                f"one, {quoted(raws[-1])}"
            ),
            icon=":material/warning:",
        )
    if value is not None and allowed.fits(value):
        if raws != allowed.url_values(value):  # spelled otherwise, or repeated
            st.session_state[key] = value
            write_url(key, None if value == default else allowed.url_values(value))
        return _url_binding(key)
    cut = allowed.url_nearest and isinstance(value, str)  # over-long text keeps its beginning
    use = allowed.nearest(value) if cut else default
    raw = next((r for r in raws if r and allowed.parse(r) is None), raws[-1])
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    used = f"the first {len(use)} characters" if cut else ", ".join(allowed.url_values(use))
    st.warning(
        md_escape(f"URL parameter {key}: must be {allowed.text}, got {shown!r}; using {used}"),
        icon=":material/warning:",
    )
    st.session_state[key] = use
    write_url(key, None if use == default else allowed.url_values(use))
    return _url_binding(key)


def int_slider(
    label: str,
    low: int,
    high: int,
    key: str,
    value: int | None = None,
    *,
    name: str | None = None,
    **kwargs,
) -> int:
    """A URL-bound integer slider in [low, high] (``value`` defaults to ``low``, and a default
    outside the range is taken at the nearer end), fitted first."""
    value = low if value is None else min(max(value, low), high)
    allowed = int_range(low, high)
    bind = fit(key, allowed, value, name or label)
    shown = int(st.slider(label, low, high, value, key=key, bind=bind, **kwargs))
    record_url(key, allowed, value, shown)
    return shown


def int_number(
    label: str,
    low: int,
    high: int,
    key: str,
    value: int,
    *,
    name: str | None = None,
    **kwargs,
) -> int:
    """A URL-bound integer box in [low, high], fitted first; a default that another control's
    range moved outside [low, high] is taken at the nearer end."""
    value = min(max(value, low), high)
    allowed = int_range(low, high)
    bind = fit(key, allowed, value, name or label)
    shown = int(st.number_input(label, low, high, value, step=1, key=key, bind=bind, **kwargs))
    record_url(key, allowed, value, shown)
    return shown


def choice(
    label: str,
    options: Sequence[object],
    key: str,
    *,
    kind: Literal["segmented", "radio", "select", "select_slider"] = "segmented",
    format_func=str,
    default: object = None,
    name: str | None = None,
    aliases: Mapping[str, object] | None = None,
    room: int = PHONE_WIDTH,
    **kwargs,
):
    """A URL-bound segmented control, radio, select box or select slider over ``options``,
    fitted first; ``default`` (else the first option) by default. On a phone a segmented
    control whose buttons would not fit one row (``room`` px) is a select box: wrapped, its
    buttons took two or three rows and read as separate controls.

    The URL holds the option as the control shows it (``format_func``); ``aliases`` are other
    spellings a URL may use (old links), read and rewritten. A deselected segmented control
    reads as the default, so the result is always an option.
    """
    default = options[0] if default is None else default
    if (
        kind == "segmented"
        and is_phone()
        and not buttons_fit(list(map(format_func, options)), room)
    ):
        kind = "select"  # the URL holds the same label either way: a link opens on both
    allowed = one_of(options, format_func, none_fits=kind == "segmented", aliases=aliases)
    bind = fit(key, allowed, default, name or label)
    common = {"key": key, "bind": bind, "format_func": format_func, **kwargs}
    if kind == "segmented":
        widget = st.segmented_control(label, options, default=default, **common)
    elif kind == "select_slider":
        widget = st.select_slider(label, options, value=default, **common)
    else:
        draw = st.radio if kind == "radio" else st.selectbox
        widget = draw(label, options, index=list(options).index(default), **common)
    record_url(key, allowed, default, widget)
    return default if widget is None else widget


def choices(label: str, options: Sequence[object], key: str, **kwargs) -> list:
    """A URL-bound multiselect over ``options``, every option picked by default, fitted first
    (the URL holds one value per option picked: ``key=a&key=b``)."""
    allowed = some_of(options)
    bind = fit(key, allowed, list(options), label)
    picked = st.multiselect(label, options, default=list(options), key=key, bind=bind, **kwargs)
    record_url(key, allowed, list(options), picked)
    return picked


def toggle(label: str, key: str, value: bool) -> bool:
    """A URL-bound toggle, fitted first (the URL says true or false)."""
    bind = fit(key, BOOLEAN, value, label)
    shown = bool(st.toggle(label, value=value, key=key, bind=bind))
    record_url(key, BOOLEAN, value, shown)
    return shown


def text_box(label: str, key: str, value: str, max_chars: int, **kwargs) -> str:
    """A URL-bound text input of at most ``max_chars`` characters, fitted first."""
    allowed = text_of_length(max_chars)
    bind = fit(key, allowed, value, label)
    typed = st.text_input(label, value, max_chars=max_chars, key=key, bind=bind, **kwargs)
    record_url(key, allowed, value, typed)
    return typed


def head_picker(heads: int, key: str) -> int:
    """The head a page draws: a URL-bound segmented control over 0..heads-1."""
    return choice("head", list(range(heads)), key)


SCALE_CHOICES = {"own": "each its own", "shared": "one for all"}


def shared_scale_picker(key: str) -> bool:
    """Whether a figure's panels share one colour scale (to compare their sizes) or each has
    its own (to show its own pattern, the default): a URL-bound segmented control."""
    picked = choice("colour scale", list(SCALE_CHOICES), key, format_func=SCALE_CHOICES.get)
    return picked == "shared"
