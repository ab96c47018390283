"""The Attention page's own control: whose lines the token view keeps, picked in a list or by a
click on a token."""

from __future__ import annotations

import streamlit as st

from explorer.figures.token_view import TOKENS_MAX, focus_from_click
from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice
from explorer.weights.reading import axis_labels

TOKENS_CHART = "chart_attention_tokens"


def focus_token() -> None:
    """A click on a token keeps only its lines; a click that clears the selection (the same
    token again, or a double click) shows them all."""
    event = st.session_state.get(TOKENS_CHART)
    points = event["selection"]["points"] if event else []
    picked = focus_from_click(points)
    if picked is not None:
        st.session_state["token_focus"] = picked
    elif not points:
        st.session_state["token_focus"] = "all"


def token_focus_picker(params: ViewParams) -> str:
    """The URL-bound ``token_focus``: "all", or one drawn token as a query ("q3") or a key
    ("k3"), drawn in a third of the width."""
    rows, cols = axis_labels(params)
    start, stop = params.window
    shown = range(start, start + min(TOKENS_MAX, stop - start))
    names = {"all": "every token"} | {
        f"{side}{p}": f"{word} {p}: {labels[p]}"  # the axes' labels: whitespace made visible
        for side, word, labels in (("q", "query", rows), ("k", "key", cols))
        for p in shown
    }
    with st.columns([1, 2])[0]:  # a third of the width: its options are short
        return choice(
            "lines of",
            list(names),
            "token_focus",
            kind="select",
            format_func=names.get,
            help="Keep only one token's lines, as a query (its weights over the keys) or as a key "
            "(the queries that read it). Clicking a token in the figure picks it; clicking it "
            "again, or a double click, shows every token.",
        )
