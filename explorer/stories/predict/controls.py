"""The Predict page's clicks: a map of the every-head grid opens that head on its own page, and a
written character draws the attention that wrote it."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

from explorer.frame.widgets import never_drawn
from explorer.stories.predict.heads import head_link

OPEN_KEY = "predict_open"  # (page, address) a click on the grid asks the next run to open
GRID_CHART = "chart_predict_heads"


def open_head(name: str, clickable: dict[int, tuple[int, int]]) -> None:
    """A click on map (layer, head) of the grid: set the controls that page reads (a callback
    may, before they are drawn) and ask the next run to open it."""
    event = st.session_state.get(GRID_CHART)
    points = event["selection"]["points"] if event else []
    for point in reversed(points):
        where = clickable.get(point.get("curve_number"))
        link = None if where is None else head_link(name, *where)
        if link is not None:
            page, controls = link
            for key, value in controls.items():
                st.session_state[key] = value
            st.session_state[OPEN_KEY] = page, never_drawn(controls)
            return


def grid_clicks(name: str, clickable: dict[int, tuple[int, int]]) -> dict:
    """The plotly_chart options that make a click on a map of the grid open its head."""
    return {"on_select": partial(open_head, name, clickable), "selection_mode": "points"}


def open_page(page: Path, address: dict[str, str]) -> None:
    """Open ``page`` with ``address`` (the values of controls never drawn) as its query: the
    controls drawn before write their own values. A key some control still binds cannot be
    set by hand; then the page opens on its controls' values alone."""
    try:
        st.switch_page(page, query_params=address)
    except StreamlitAPIException:
        st.switch_page(page, query_params={})


CHARACTER_KEY = "predict_char"  # the written character whose attention is drawn
WRITTEN_CHART = "chart_predict_written"


def pick_character() -> None:
    """A click on a written character: draw the attention that wrote it."""
    event = st.session_state.get(WRITTEN_CHART)
    points = event["selection"]["points"] if event else []
    for point in reversed(points):
        data = point.get("customdata")
        if isinstance(data, dict):  # a typed array arrives as {"0": t, "1": bits}
            data = [data.get("0")]
        if data and data[0] is not None:
            st.session_state[CHARACTER_KEY] = int(data[0])
            return
