"""Shared sidebar controls: URL -> validated widgets -> one frozen :class:`ViewParams`.

Every control is bound to the URL (``bind="query-params"``), so a copied link reproduces the
view. Streamlit silently drops a bound value it cannot use (``?n=abc``, ``?n=100000``,
``?k=-5``) and falls back to the default; the issue asks for a visible warning and clamping, so
the raw query string is validated first by :func:`relpos_core.params.parse_query`, and every
corrected value is written into the widget's session state before the widget is created.
"""

from __future__ import annotations

import dataclasses
import re

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from relpos_core.params import (
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
    parse_query,
)

PARAMS_STATE_KEY = "_view_params"
BIND = "query-params"
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md_escape(text: str) -> str:
    """Backslash-escape every punctuation character so markdown shows ``text`` literally."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def sidebar_controls() -> tuple[ViewParams, tuple[str, ...]]:
    """Draw the shared controls; return the view and the warnings about the URL it came from."""
    parsed = parse_query(st.query_params.to_dict())
    for key, value in parsed.corrections.items():
        st.session_state[key] = value  # a bound widget takes a corrected value this way only
    with st.sidebar:
        st.header("Controls")
        text = st.text_input(
            "Sentence (its tokens label the axes; n follows)",
            value="",
            max_chars=TEXT_MAX_CHARS,
            key="text",
            bind=BIND,
            placeholder="e.g. the cat sat on the mat",
        )
        has_text = bool(text.split())
        n = st.slider(
            "n (sequence length)",
            1,
            N_MAX,
            N_DEFAULT,
            key="n",
            bind=BIND,
            disabled=has_text,
            help="Disabled while a sentence is typed: n is then its token count.",
        )
        k = st.slider(
            "k (clip distance)",
            0,
            K_MAX,
            K_DEFAULT,
            key="k",
            bind=BIND,
            help="Distances beyond ±k share the edge vectors; k = 0 is one shared vector.",
        )
        left, right = st.columns(2)
        d_model = left.selectbox(
            "d_model",
            D_MODEL_CHOICES,
            index=D_MODEL_CHOICES.index(D_MODEL_DEFAULT),
            key="d_model",
            bind=BIND,
        )
        heads = right.selectbox(
            "heads",
            HEADS_CHOICES,
            index=HEADS_CHOICES.index(HEADS_DEFAULT),
            key="heads",
            bind=BIND,
            help="Every choice divides every d_model: head dim = d_model / heads.",
        )
        seed = st.number_input("seed", 0, SEED_MAX, SEED_DEFAULT, step=1, key="seed", bind=BIND)
        mask = st.radio(
            "mask",
            MASK_KINDS,
            index=MASK_KINDS.index(MASK_DEFAULT),
            horizontal=True,
            key="mask",
            bind=BIND,
        )
        pad = st.number_input(
            "pad (trailing padded keys)",
            0,
            N_MAX,
            PAD_DEFAULT,
            step=1,
            key="pad",
            bind=BIND,
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
        params = dataclasses.replace(params, win=window_start(params, parsed.params.win))
        st.caption(
            f"n = {params.length}{' (token count)' if has_text else ''} · "
            f"head dim d = {params.d_model} / {params.heads} = {params.head_dim} · "
            f"tables (2k+1, d) = ({2 * params.k + 1}, {params.head_dim})"
            + (f" · {params.n_pad} padded key(s)" if "padding" in params.mask else "")
        )
        if has_text and len(text.split()) > N_MAX:
            st.caption(f"Only the first {N_MAX} tokens are used.")
    return params, parsed.warnings


def window_start(params: ViewParams, url_start: int) -> int:
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
        bind=BIND,
        help=f"n is above {DISPLAY_MAX}: every n x n heatmap shows the queries and keys "
        f"[start, start + {DISPLAY_MAX}).",
    )
    return int(start)


def show_warnings(warnings: tuple[str, ...]) -> None:
    """Each URL problem as a visible warning, its user-supplied parts escaped."""
    for message in warnings:
        st.warning(md_escape(message), icon=":material/warning:")


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
