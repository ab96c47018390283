"""Shared sidebar controls: URL -> validated widgets -> one frozen :class:`ViewParams`.

Every control is bound to the URL (``bind="query-params"``), so a copied link reproduces the
view. Streamlit silently drops a bound value it cannot use (``?n=abc``, ``?n=100000``,
``?k=-5``, ``?n=1&n=2``) and falls back to the default, so the raw query string is validated
first by :func:`explorer.frame.url_query.parse_query`, and every corrected value is written into the
widget's session state before the widget is created.

That alone leaves the corrected key out of the address bar: on a session's first run Streamlit
drops a URL value its bound widget cannot take, and does not write the value set in session
state. So the corrected value is written into the URL by hand with
:func:`explorer.frame.widgets.write_url`, which draws that one widget unbound in this run and
binds it again in the next (the one place that decides how a widget is bound). The address bar
then holds exactly the view shown (a default is left out, as a bound widget leaves it out).

Every widget, here and on the pages, gets its value through :func:`explorer.frame.widgets.fit`: a
value kept in this session that no longer fits the widget's range (the window start after n
shrank) is moved into it and said in words before the widget is drawn.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
from collections.abc import Sequence

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.pages_manager import PagesManager

from explorer.frame import colour_vision, query_values
from explorer.frame.params import (
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
    TRAINED_CLIPS,
    TRAINED_LAYERS,
    WEIGHTS_DEFAULT,
    WEIGHTS_KINDS,
    ViewParams,
    tokenize,
)
from explorer.frame.url_query import DEFAULTS, QUERY_KEYS, ParsedQuery, parse_query
from explorer.frame.view_url import start_view_url
from explorer.frame.widgets import (
    choice,
    int_number,
    int_slider,
    md_escape,
    set_from_code,
    text_box,
    url_bound_keys,
    write_url,
)

PARAMS_STATE_KEY = "_view_params"
_K_BEFORE_KEY = "_k_before"  # the view's k, so that a trained k steps in the direction it moves


def raw_query() -> dict[str, list[str]]:
    """Every value of every key in the address (``?n=1&n=2`` -> ``{"n": ["1", "2"]}``)."""
    return {key: st.query_params.get_all(key) for key in st.query_params.to_dict()}


def sidebar_controls() -> tuple[ViewParams, ParsedQuery]:
    """Draw the shared controls; return the view and what was parsed from the URL it came from.

    A shared widget that already holds a value in this session shows that value (the URL only
    mirrors it): the URL is checked for the others alone, so it is never blamed for a value the
    user set. Reruns once when the URL had to be corrected (see the module docstring).
    """
    start_view_url()  # the address this view's widgets write, for its download
    typed = clean_typed_text()
    kept = {key: st.session_state[key] for key in QUERY_KEYS if key in st.session_state}
    parsed = parse_query(raw_query(), kept, st.session_state.get(_K_BEFORE_KEY))
    parsed = dataclasses.replace(parsed, warnings=(*parsed.warnings, *typed))
    fix_url(parsed)
    trained = parsed.params.trained

    with st.sidebar:
        st.header("Controls")
        weights = choice(
            "weights", WEIGHTS_KINDS, "weights", default=WEIGHTS_DEFAULT,
            help="Random: seeded random draws, every control free. Trained: a Shaw model of "
            "the family (a causal character model trained on Python's help topics), its own "
            f"q, k, v and tables; k snaps to the trained clip distances "
            f"{', '.join(map(str, TRAINED_CLIPS))}.",
        )  # fmt: skip
        layer = (
            choice(
                "layer",
                list(range(TRAINED_LAYERS)),
                "layer",
                help="The trained model's layer whose attention the pages draw.",
            )  # fmt: skip
            if trained
            else 0
        )
        fixed = "Fixed by the trained model: switch weights to random to change it."
        text = text_box(
            "Sentence (its tokens label the axes; n follows)",
            "text",
            "",
            TEXT_MAX_CHARS,
            placeholder="e.g. the cat sat on the mat",
        )
        tokens = tuple(text[:N_MAX]) if trained else tokenize(text)
        has_text = bool(tokens)
        if has_text:  # the slider shows the n in use, and the URL and the download store it
            set_from_code("n", len(tokens), N_DEFAULT)
        n = int_slider(
            "n (sequence length)",
            1,
            N_MAX,
            "n",
            N_DEFAULT,
            disabled=has_text,
            help="Disabled while a sentence is typed: n is then its token count (its "
            "character count with trained weights; without a sentence they read the first n "
            "held-out characters).",
        )
        k = int_slider(
            "k (clip distance)",
            0,
            K_MAX,
            "k",
            K_DEFAULT,
            help="Distances beyond ±k share the edge vectors; k = 0 is one shared vector."
            + (f" Trained at k = {', '.join(map(str, TRAINED_CLIPS))} only." if trained else ""),
        )
        left, right = st.columns(2)
        with left:
            d_model = choice(
                "d_model", D_MODEL_CHOICES, "d_model", kind="select",
                default=D_MODEL_DEFAULT, disabled=trained,
                help=fixed if trained else None,
            )  # fmt: skip
        with right:
            heads = choice(
                "heads", HEADS_CHOICES, "heads", kind="select", default=HEADS_DEFAULT,
                disabled=trained,
                help=fixed if trained else "Every choice divides every d_model: head dim = "
                "d_model / heads.",
            )  # fmt: skip
        seed = int_number(
            "seed", 0, SEED_MAX, "seed", SEED_DEFAULT, disabled=trained,
            help="Trained weights draw nothing at random." if trained else None,
        )  # fmt: skip
        mask = choice(
            "mask", MASK_KINDS, "mask", kind="radio", default=MASK_DEFAULT, horizontal=True,
            disabled=trained,
            help="The trained models are causal language models: each character sees only "
            "itself and the characters before it." if trained else "Random weights open "
            "without a mask (the trained models are causal).",
        )  # fmt: skip
        pad = int_number(
            "pad (trailing padded keys)",
            0,
            N_MAX,
            "pad",
            PAD_DEFAULT,
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
            weights=str(weights),
            layer=int(layer),
        )
        params = dataclasses.replace(params, win=window_start(params))
        st.session_state[_K_BEFORE_KEY] = params.k
        # no table shape here: most pages draw no Shaw table (the Lookup page shows its own)
        st.caption(
            f"n = {params.length}{' (token count)' if has_text else ''} · "
            f"head dim d = {params.d_model} / {params.heads} = {params.head_dim}"
            + (f" · {params.n_pad} padded key(s)" if "padding" in params.mask else "")
        )
        if has_text and len(text.split()) > N_MAX:
            st.caption(f"Only the first {N_MAX} tokens are used.")
        colour_vision.control()  # how every chart is coloured: no field of the view
    return params, parsed


def clean_typed_text() -> tuple[str, ...]:
    """Text typed in the sidebar gets the cleaning a URL's text gets (control and bidirectional
    characters removed, the length limit): the same text shows the same view either way.
    Returns the warning, if anything was removed."""
    typed = st.session_state.get("text")
    if not isinstance(typed, str):
        return ()
    cleaned, problem = query_values.clean_text(typed, "Sentence (URL parameter text)")
    if cleaned == typed:
        return ()
    st.session_state["text"] = cleaned  # before the widget is drawn: the box shows it too
    return (problem,)


def fix_url(parsed: ParsedQuery) -> None:
    """Put every corrected value into its widget and the address bar; drop removed keys.

    A key already bound by an earlier run of this session stays bound: Streamlit then writes
    the corrected value, set in session state, into the URL itself.
    """
    for key, value in parsed.corrections.items():
        st.session_state[key] = value  # a bound widget takes a corrected value this way only
        write_url(key, None if value == DEFAULTS[key] else str(value))
    for key in parsed.remove:
        with contextlib.suppress(StreamlitAPIException):
            st.query_params.pop(key, None)


def report_other_keys(keys: Sequence[str], where) -> None:
    """After the page ran: warn about each URL key neither shared nor one of its controls.

    Only a page's controls bound to the address read it (their values are in session state):
    any other key is not used by this view (a typo, another page's control, a control hidden
    here, an uploader's or a button's key, a tag). It is removed so a copied link is clean.
    """
    bound = url_bound_keys() & set(st.session_state)  # drawn, and read from the address
    unused = [key for key in keys if key not in bound and key in st.query_params]
    if not unused:
        return
    known = [*QUERY_KEYS, *bound]
    for key in unused:
        near = difflib.get_close_matches(key, known, n=1)
        what = f"is not a setting of this page{f' (did you mean {near[0]}?)' if near else ''}"
        if key in st.session_state:  # an uploader's or a button's key: set on the page only
            what = "is not a setting the address can hold (uploads and buttons are set on the page)"
        text = md_escape(f"URL parameter {key} {what}; ignored and removed from the address")
        where.warning(text, icon=":material/warning:")
        st.query_params.pop(key, None)


def window_start(params: ViewParams) -> int:
    """The window slider (only above DISPLAY_MAX positions); returns the window's first position.

    A start kept from a longer sequence moves to the last start this one has, and says so.
    """
    last = params.length - DISPLAY_MAX
    if last <= 0:
        return 0
    return int_slider(
        f"window start (heatmaps show {DISPLAY_MAX} positions)",
        0,
        last,
        "win",
        name="window start",
        help=f"n is above {DISPLAY_MAX}: every n x n heatmap shows the queries and keys "
        f"[start, start + {DISPLAY_MAX}).",
    )


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
