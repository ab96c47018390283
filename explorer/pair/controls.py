"""The picked pair's controls: two URL-bound boxes ``i`` and ``j`` in the sidebar, set also by a
click on any (i, j) heatmap cell; a pick outside the window moves the window, or says why not.

An empty box means no pick. The pair is kept apart from the view (see
:mod:`explorer.pair.definition`): pages read it with :func:`current_pair` after their views are
built.
"""

from __future__ import annotations

from functools import partial

import plotly.graph_objects as go
import streamlit as st

from explorer.frame.allowed import Allowed, int_range
from explorer.frame.controls import PARAMS_STATE_KEY
from explorer.frame.params import DISPLAY_MAX, ViewParams
from explorer.frame.view_url import record_url
from explorer.frame.widgets import fit
from explorer.pair.definition import Pair, hidden_reason, window_for
from explorer.pair.marks import clicked_pair, diagonal_text, distance_shapes, pair_shapes
from relpos_core.schemes.catalogue import scheme_entry

PAIR_STATE_KEY = "_picked_pair"
_PICKED_IN_CALLBACK = "_pair_picked"  # set by a click; cleared by the next full run
_SCHEMES_DRAWN = "_pair_schemes_drawn"  # what the page draws, for the sidebar's caption
_DIAGONAL_DRAWN = "_pair_diagonal_drawn"  # a chart of this run drew the pair's diagonal


def positions_or_none(n: int) -> Allowed:
    """A position in [0, n - 1], or None (no pick)."""
    ints = int_range(0, n - 1)
    return Allowed(
        text=f"empty or an integer in [0, {n - 1}]",
        fits=lambda value: value is None or ints.fits(value),
        nearest=ints.nearest,
        outside=ints.outside,
        parse=ints.parse,
        url_form=lambda value: "no pick" if value is None else str(value),
    )


def pick_cell(i: int, j: int) -> None:
    """Pick (i, j) (a click's callback: runs before the rerun, so the boxes take it)."""
    st.session_state["i"], st.session_state["j"] = int(i), int(j)
    st.session_state[_PICKED_IN_CALLBACK] = True
    follow_window()


def pick_from_chart(chart_key: str) -> None:
    """A click on a cell marker of chart ``chart_key`` picks that cell's (i, j)."""
    cell = clicked_pair(st.session_state.get(chart_key))
    if cell is not None:
        pick_cell(*cell)


def rerun_whole_page() -> None:
    """After a click in a fragment (which reruns only itself), redraw the whole page so that
    every figure shows the new pair. A full run clears the flag in the sidebar first."""
    if st.session_state.pop(_PICKED_IN_CALLBACK, False):
        st.rerun(scope="app")


def clear_pair() -> None:
    st.session_state["i"] = st.session_state["j"] = None


def follow_window() -> None:
    """Move the window so that it shows a newly picked pair (when some window can)."""
    params = st.session_state.get(PARAMS_STATE_KEY)  # the view of the run the click came from
    i, j = st.session_state.get("i"), st.session_state.get("j")
    if not isinstance(params, ViewParams) or i is None or j is None or not params.windowed:
        return
    start = window_for(Pair(int(i), int(j), params.k), params)
    if start is not None and start != params.window[0]:
        st.session_state["win"] = start


def pair_inputs(params: ViewParams) -> Pair | None:
    """The sidebar's picked pair (drawn at the end of the sidebar); None without a pick."""
    n = params.length
    st.session_state.pop(_PICKED_IN_CALLBACK, None)
    st.session_state.pop(_SCHEMES_DRAWN, None)  # a page that stopped early said nothing
    st.session_state.pop(_DIAGONAL_DRAWN, None)
    with st.sidebar:
        st.markdown("**Picked pair (i, j)**")
        left, right, clear = st.columns([2, 2, 1], vertical_alignment="bottom")
        picked = []
        for column, key, name in ((left, "i", "query i"), (right, "j", "key j")):
            with column:
                allowed = positions_or_none(n)
                bind = fit(key, allowed, None, name)
                value = st.number_input(
                    name, 0, n - 1, None, step=1, key=key, bind=bind,
                    placeholder="none", on_change=follow_window,
                    help="Click a cell of any (i, j) heatmap, or type both: every figure "
                    "outlines the pair and the pages give its numbers.",
                )  # fmt: skip
                record_url(key, allowed, None, value)
                picked.append(value)
        with clear:
            st.button(
                "", icon=":material/close:", key="pair_clear", on_click=clear_pair,
                help="Clear the picked pair", disabled=picked == [None, None],
            )  # fmt: skip
        if None in picked:
            pair = None
            if picked != [None, None]:
                st.caption("Set both i and j to pick a pair.")
        else:
            pair = Pair(int(picked[0]), int(picked[1]), params.k)
    st.session_state[PAIR_STATE_KEY] = pair
    return pair


def pair_schemes(*names: str) -> None:
    """Say which position schemes the page draws at the sidebar's settings (unsaid: none, as
    on Multi-head and masks, whose model has no position), so that the sidebar's pair caption,
    written after the page ran, says only what applies to them: the table row clip(j - i,
    k) + k only where a scheme clipped at the sidebar's k (Shaw's) is said."""
    st.session_state[_SCHEMES_DRAWN] = names


def pair_caption(pair: Pair, params: ViewParams) -> None:
    """One caption: the pair's distance, its row of Shaw's table where the page draws Shaw's
    scheme, what the dotted diagonal on its charts is, and whether the window shows the pair.
    Called after the page ran."""
    schemes = st.session_state.pop(_SCHEMES_DRAWN, ())
    text = f"j - i = {pair.distance}"
    clipped = [scheme_entry(s) for s in schemes if scheme_entry(s).from_view("k")]
    if clipped:
        whose = "table row" if len(clipped) == len(schemes) else f"{clipped[0].label}'s table row"
        text += f", {whose} clip({pair.distance}, {pair.k}) + {pair.k} = {pair.table_row}"
    text += "."
    if st.session_state.pop(_DIAGONAL_DRAWN, False):
        text += f" On the heatmaps, {diagonal_text(pair.distance)}."
    hidden = hidden_reason(params, params.causal, pair.i, pair.j)
    if hidden:  # a click on a blank cell picks it too, and learns why it is blank
        text += f" Its weight is 0: {hidden}."
    start, stop = params.window
    if not (start <= pair.i < stop and start <= pair.j < stop):
        if window_for(pair, params) is None:
            text += (
                f" i and j are {abs(pair.distance)} apart: no window of {DISPLAY_MAX} positions "
                "shows both, so the heatmaps cannot outline it; its numbers still hold."
            )
        else:
            target = window_for(pair, params)
            st.caption(text + f" Outside the window {start}-{stop - 1}.")
            st.button(
                f"Move the window to {target}-{target + DISPLAY_MAX - 1}",
                key="pair_window", on_click=move_window, args=(target,),
                help="Show the picked pair on the heatmaps.",
            )  # fmt: skip
            return
    st.caption(text)


def move_window(start: int) -> None:
    st.session_state["win"] = start


def current_pair() -> Pair | None:
    """The pair picked in this run's sidebar (pages call this)."""
    pair = st.session_state.get(PAIR_STATE_KEY)
    return pair if isinstance(pair, Pair) else None


def chart_options(fig: go.Figure, key: str) -> dict:
    """Outline the picked pair on ``fig`` and return the plotly_chart options that let a click
    on its cells pick one (none when it has no cell markers)."""
    rerun_whole_page()
    pair = current_pair()
    if pair is not None:
        traces = [
            {"meta": t.meta, "xaxis": t.xaxis or "x", "yaxis": t.yaxis or "y"}
            for t in fig.data
            if getattr(t, "meta", None)
        ]
        shapes = pair_shapes(traces, pair.marks())
        if any(shape["name"] == "picked distance" for shape in shapes):
            st.session_state[_DIAGONAL_DRAWN] = True  # the sidebar's caption says what it is
        if shapes:
            fig.update_layout(shapes=[*fig.layout.shapes, *shapes])
    if not any(t.name == "cells" for t in fig.data):
        return {}
    return {"on_select": partial(pick_from_chart, key), "selection_mode": "points"}


def mark_picked_distance(fig: go.Figure) -> str:
    """Draw the picked pair's j - i on a chart against distance; the caption's sentence."""
    pair = current_pair()
    if pair is None:
        return ""
    layout = fig.layout.to_plotly_json()
    fig.update_layout(shapes=[*fig.layout.shapes, *distance_shapes(layout, pair.distance)])
    return (
        f" The solid black line is the picked pair's distance j - i = {pair.distance} "
        f"(i = {pair.i}, j = {pair.j})."
    )
