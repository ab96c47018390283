"""The explorer's frame with nothing of a page in it: every page of the story is the floor page's
one 64 x 64 heatmap (scripts/floor_app.py), following the sidebar's k.

The frame is what every page shares: the sidebar's controls, picked pair and glossary, the
story's navigation, the notes and the links to the previous and next page
(``explorer.shell``, the same code app.py runs). ``scripts/measure_browser.py --bare``
opens it beside the floor page and the pages, the same ways in the same run: the frame's time
over the floor's is what the frame costs, and a page's time over the frame's is what the page
itself draws.
"""

import sys
from pathlib import Path

import streamlit as st

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

from explorer.frame.chart_code import fetch_chart_code  # noqa: E402

fetch_chart_code()  # as app.py does, before torch loads

from floor_app import index_chart  # noqa: E402

from explorer.frame.controls import current_params  # noqa: E402
from explorer.frame.navigation import DEFAULT, Page  # noqa: E402
from explorer.shell import run_app  # noqa: E402


def floor_page() -> None:
    index_chart(current_params().k)


def floor_as(page: Page) -> st.Page:
    """The story's page, with the floor's chart in place of its own."""
    return st.Page(
        floor_page, title=page.title, icon=page.icon, url_path=page.stem, default=page == DEFAULT
    )


run_app(floor_as)
