"""Shared sidebar controls: URL -> validated widgets -> one frozen :class:`ViewParams`.

Every control is bound to the URL (``bind="query-params"``), so a copied link reproduces the
view. Streamlit silently drops a bound value it cannot use (``?n=abc``, ``?n=100000``,
``?k=-5``, ``?n=1&n=2``) and falls back to the default, so the raw query string is validated
first by :func:`explorer.url_query.parse_query`, and every corrected value is written into the
widget's session state before the widget is created.

That alone leaves the corrected key out of the address bar: on a session's first run Streamlit
drops a URL value its bound widget cannot take, and does not write the value set in session
state. So on a run that corrects a key, that one widget is created unbound, and the corrected
value is written into the URL with ``st.query_params`` (allowed for a key no widget is bound
to). From the next run on the widget is bound again and keeps its value, which is set once more
so that Streamlit writes into the URL a change the browser made while the widget was unbound.
The address bar then holds exactly the view shown (a default is left out, as a bound widget
leaves it out).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import re
from collections.abc import Callable, Collection, Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.pages_manager import PagesManager

from explorer.params import (
    D_MODEL_CHOICES,
    D_MODEL_DEFAULT,
    DISPLAY_MAX,
    HEADS_CHOICES,
    HEADS_DEFAULT,
    K_DEFAULT,
    K_MAX,
    MASK_DEFAULT,
    MASK_KINDS,
    N_DEFAULT,
    N_MAX,
    PAD_DEFAULT,
    SEED_DEFAULT,
    SEED_MAX,
    TEXT_MAX_CHARS,
    ViewParams,
)
from explorer.url_query import DEFAULTS, QUERY_KEYS, ParsedQuery, parse_query

PARAMS_STATE_KEY = "_view_params"
_UNBOUND_STATE_KEY = "_url_unbound"  # widgets created unbound in the last run
BIND = "query-params"
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md_escape(text: str) -> str:
    """Backslash-escape every punctuation character so markdown shows ``text`` literally."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def raw_query() -> dict[str, list[str]]:
    """Every value of every key in the address (``?n=1&n=2`` -> ``{"n": ["1", "2"]}``)."""
    return {key: st.query_params.get_all(key) for key in st.query_params.to_dict()}


def sidebar_controls() -> tuple[ViewParams, ParsedQuery]:
    """Draw the shared controls; return the view and what was parsed from the URL it came from.

    Reruns once when the URL had to be corrected (see the module docstring).
    """
    parsed = parse_query(raw_query())
    unbound = fix_url(parsed)

    def bind(key: str) -> str | None:
        return None if key in unbound else BIND

    with st.sidebar:
        st.header("Controls")
        text = st.text_input(
            "Sentence (its tokens label the axes; n follows)",
            value="",
            max_chars=TEXT_MAX_CHARS,
            key="text",
            bind=bind("text"),
            placeholder="e.g. the cat sat on the mat",
        )
        has_text = bool(text.split())
        n = st.slider(
            "n (sequence length)",
            1,
            N_MAX,
            N_DEFAULT,
            key="n",
            bind=bind("n"),
            disabled=has_text,
            help="Disabled while a sentence is typed: n is then its token count.",
        )
        k = st.slider(
            "k (clip distance)",
            0,
            K_MAX,
            K_DEFAULT,
            key="k",
            bind=bind("k"),
            help="Distances beyond ±k share the edge vectors; k = 0 is one shared vector.",
        )
        left, right = st.columns(2)
        d_model = left.selectbox(
            "d_model",
            D_MODEL_CHOICES,
            index=D_MODEL_CHOICES.index(D_MODEL_DEFAULT),
            key="d_model",
            bind=bind("d_model"),
        )
        heads = right.selectbox(
            "heads",
            HEADS_CHOICES,
            index=HEADS_CHOICES.index(HEADS_DEFAULT),
            key="heads",
            bind=bind("heads"),
            help="Every choice divides every d_model: head dim = d_model / heads.",
        )
        seed = st.number_input(
            "seed", 0, SEED_MAX, SEED_DEFAULT, step=1, key="seed", bind=bind("seed")
        )
        mask = st.radio(
            "mask",
            MASK_KINDS,
            index=MASK_KINDS.index(MASK_DEFAULT),
            horizontal=True,
            key="mask",
            bind=bind("mask"),
        )
        pad = st.number_input(
            "pad (trailing padded keys)",
            0,
            N_MAX,
            PAD_DEFAULT,
            step=1,
            key="pad",
            bind=bind("pad"),
            disabled="padding" not in mask,
        )
        params = ViewParams(
            n=int(n),
            k=int(k),
            d_model=int(d_model),
            heads=int(heads),
            seed=int(seed),
            mask=str(mask),
            pad=int(pad),
            text=text,
        )
        params = dataclasses.replace(
            params, win=window_start(params, parsed.params.win, bind("win"))
        )
        st.caption(
            f"n = {params.length}{' (token count)' if has_text else ''} · "
            f"head dim d = {params.d_model} / {params.heads} = {params.head_dim} · "
            f"tables (2k+1, d) = ({2 * params.k + 1}, {params.head_dim})"
            + (f" · {params.n_pad} padded key(s)" if "padding" in params.mask else "")
        )
        if has_text and len(text.split()) > N_MAX:
            st.caption(f"Only the first {N_MAX} tokens are used.")
    return params, parsed


def fix_url(parsed: ParsedQuery) -> set[str]:
    """Put every corrected value into its widget and the address bar; drop removed keys.

    Returns the keys whose widget must be created unbound in this run (see the module
    docstring). A key already bound by an earlier run of this session stays bound: Streamlit
    then writes the programmatic value into the URL itself.
    """
    for key in st.session_state.pop(_UNBOUND_STATE_KEY, ()):
        if key in st.session_state:  # unbound last run: the browser did not write its changes
            st.session_state[key] = st.session_state[key]  # so Streamlit writes the URL now
    unbound = set()
    for key, value in parsed.corrections.items():
        st.session_state[key] = value  # a bound widget takes a corrected value this way only
        try:
            if value == DEFAULTS[key]:
                st.query_params.pop(key, None)
            else:
                st.query_params[key] = str(value)
        except StreamlitAPIException:  # bound by an earlier run
            continue
        unbound.add(key)
    st.session_state[_UNBOUND_STATE_KEY] = unbound
    for key in parsed.remove:
        with contextlib.suppress(StreamlitAPIException):
            st.query_params.pop(key, None)
    return unbound


def report_other_keys(keys: Sequence[str], where) -> None:
    """After the page ran: warn about each URL key neither shared nor one of its controls.

    A page's own controls keep their values in session state under their key, so a key that
    is not there is not used by this view (a typo, another page's control, a control hidden
    in this view, a tracking tag). It is removed from the address so a copied link is clean.
    """
    unused = [key for key in keys if key not in st.session_state and key in st.query_params]
    if not unused:
        return
    known = [*QUERY_KEYS, *(k for k in st.session_state if isinstance(k, str) and k[:1] != "_")]
    for key in unused:
        near = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        with where:
            st.warning(
                md_escape(
                    f"URL parameter {key} is not a setting of this page{hint}; ignored and "
                    "removed from the address"
                ),
                icon=":material/warning:",
            )
        st.query_params.pop(key, None)


def window_start(params: ViewParams, url_start: int, bind: str | None = BIND) -> int:
    """The window slider (only above DISPLAY_MAX positions); returns the window's first position.

    A kept or URL (``url_start``) value beyond the last possible start is moved to that start.
    """
    last = params.length - DISPLAY_MAX
    if last <= 0:
        return 0
    if int(st.session_state.get("win", url_start)) > last:
        st.session_state["win"] = last  # before the widget exists: the only way to move it
    start = st.slider(
        f"window start (heatmaps show {DISPLAY_MAX} positions)",
        0,
        last,
        key="win",
        bind=bind,
        help=f"n is above {DISPLAY_MAX}: every n x n heatmap shows the queries and keys "
        f"[start, start + {DISPLAY_MAX}).",
    )
    return int(start)


def show_warnings(warnings: tuple[str, ...]) -> None:
    """Each URL problem as a visible warning, its user-supplied parts escaped."""
    for message in warnings:
        st.warning(md_escape(message), icon=":material/warning:")


def check_url_value(
    key: str, accepted: Collection[str] | Callable[[str], bool], default: object, allowed: str
) -> None:
    """Call before creating a page's own URL-bound widget ``key``.

    Streamlit silently drops a bound URL value the widget cannot take; this warns instead,
    naming the parameter, what is allowed and the value, and sets the widget to ``default``.
    ``accepted`` holds the URL forms of the valid values (Streamlit writes an option's label),
    or tells whether a URL form is valid.
    """
    raw = st.query_params.get(key)
    valid = accepted if callable(accepted) else accepted.__contains__
    if raw is None or valid(raw):
        return
    st.warning(
        md_escape(f"URL parameter {key}: must be {allowed}, got {raw!r}; using {default}"),
        icon=":material/warning:",
    )
    st.session_state[key] = default


def int_in(low: int, high: int) -> Callable[[str], bool]:
    """Whether a URL value is an integer in [low, high], written as Streamlit writes it."""

    def valid(raw: str) -> bool:
        return raw.lstrip("-").isdigit() and raw == str(int(raw)) and low <= int(raw) <= high

    return valid


def int_slider(
    label: str, low: int, high: int, key: str, value: int | None = None, **kwargs
) -> int:
    """A URL-bound integer slider (``value`` defaults to ``low``), checked as
    :func:`check_url_value`."""
    value = low if value is None else value
    check_url_value(key, int_in(low, high), value, f"an integer in [{low}, {high}]")
    return int(st.slider(label, low, high, value, key=key, bind=BIND, **kwargs))


def choice(
    label: str,
    options: Sequence[object],
    key: str,
    *,
    radio: bool = False,
    format_func=str,
    default: object = None,
    **kwargs,
):
    """A URL-bound segmented control (or radio) over ``options``, ``default`` (else the first
    option) by default.

    A deselected segmented control reads as the default, so the result is always an option.
    """
    default = options[0] if default is None else default
    labels = [format_func(option) for option in options]
    check_url_value(key, labels, default, "one of " + ", ".join(labels))
    if radio:
        index = list(options).index(default)
        widget = st.radio(
            label, options, index=index, key=key, bind=BIND, format_func=format_func, **kwargs
        )
    else:
        widget = st.segmented_control(
            label, options, default=default, key=key, bind=BIND, format_func=format_func, **kwargs
        )
    return default if widget is None else widget


def int_number(label: str, low: int, high: int, key: str, value: int, **kwargs) -> int:
    """A URL-bound integer box in [low, high], checked as :func:`check_url_value`; a kept value
    outside the range (the range moved with another control) is moved into it first."""
    check_url_value(key, int_in(low, high), value, f"an integer in [{low}, {high}]")
    kept = st.session_state.get(key)
    if isinstance(kept, int) and not low <= kept <= high:
        st.session_state[key] = min(max(kept, low), high)
    return int(st.number_input(label, low, high, value, step=1, key=key, bind=BIND, **kwargs))


def toggle(label: str, key: str, value: bool) -> bool:
    """A URL-bound toggle, checked as :func:`check_url_value` (the URL says true / false)."""
    check_url_value(key, ["true", "false", "True", "False"], value, "true or false")
    return bool(st.toggle(label, value=value, key=key, bind=BIND))


def head_picker(heads: int, key: str) -> int:
    """The head a page draws: a URL-bound segmented control over 0..heads-1."""
    return choice("head", list(range(heads)), key)


def ensure_app_ran() -> None:
    """Rerun through app.py if Streamlit ran this page file on its own.

    Until some session on a fresh server has called ``st.navigation``, Streamlit treats the
    ``pages/`` folder as its legacy multipage layout: a shared deep link such as ``/lookup?n=64``
    runs ``pages/lookup.py`` alone, with no sidebar controls and the wrong navigation. The first
    ``st.navigation`` call switches that layout off for the whole process; a page that finds
    app.py's state missing switches it off itself and reruns, so the rerun goes through app.py
    and lands on the same page with the URL intact. (Streamlit 1.67, pinned.)
    """
    if PARAMS_STATE_KEY in st.session_state:
        return
    PagesManager.uses_pages_directory = False
    st.rerun()


def current_params() -> ViewParams:
    """The view app.py built for this run (pages call this; they never read widgets)."""
    ensure_app_ran()
    params = st.session_state.get(PARAMS_STATE_KEY)
    return params if isinstance(params, ViewParams) else ViewParams()


def position_input(label: str, key: str, default: int, low: int, high: int, **kwargs) -> int:
    """A URL-bound integer input in [low, high], checked as :func:`check_url_value`; a value
    kept from an earlier run outside the range (the range moved) is clamped into it."""
    check_url_value(key, int_in(low, high), default, f"an integer in [{low}, {high}]")
    kept = st.session_state.get(key)
    if isinstance(kept, int) and not low <= kept <= high:
        st.session_state[key] = min(max(kept, low), high)
    return int(st.number_input(label, low, high, default, step=1, key=key, bind=BIND, **kwargs))


def clicked_cell(chart_key: str) -> tuple[int, int] | None:
    """(row, col) of the last clicked heatmap cell of chart ``chart_key``, from the point's
    customdata; None when nothing with customdata is selected."""
    event = st.session_state.get(chart_key)
    points = event["selection"]["points"] if event else []
    cells = [p for p in points if p.get("customdata") is not None]
    if not cells:
        return None
    data = cells[-1]["customdata"]  # (row, col); a typed array arrives as {"0": row, "1": col}
    if isinstance(data, dict):
        return int(data["0"]), int(data["1"])
    return int(data[0]), int(data[1])
