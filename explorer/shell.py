"""The frame every page is drawn in: the page's settings, the shared sidebar (controls, picked
pair, glossary, the story's navigation), the view's notes and download, the story's links.

``app.py`` runs it with the files in ``pages/``; ``scripts/frame_app.py`` runs it with the floor
page's one chart as every page, so a page's open can be read against the frame's own cost.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from explorer.figures.glossary import glossary
from explorer.frame.controls import (
    PARAMS_STATE_KEY,
    report_other_keys,
    show_warnings,
    sidebar_controls,
)
from explorer.frame.download_parts import start_parts
from explorer.frame.failures import shown_failures
from explorer.frame.host import collect_soon, configure_process
from explorer.frame.memory import LEDGER, one_view_at_a_time
from explorer.frame.navigation import DEFAULT, PAGES, SECTIONS, Page, neighbours
from explorer.frame.offline_view import start_recording
from explorer.frame.route_bar import route_picker, where_on_route
from explorer.frame.routes import EVERY_PAGE, Route
from explorer.frame.warm import computed_so_far, note_run_ended, start_warming
from explorer.pair.controls import pair_caption, pair_inputs

REPO = Path(__file__).resolve().parents[1]
PAGES_DIR = REPO / "pages"  # absolute paths: see tests/app/harness/entry.py
ASSETS = REPO / "explorer" / "assets"

PageFor = Callable[[Page], st.Page]


def page_file(page: Page) -> st.Page:
    """The story's page as Streamlit's page of its file in ``pages/``."""
    return st.Page(PAGES_DIR / page.file, title=page.title, icon=page.icon, default=page == DEFAULT)


def run_app(page_for: PageFor = page_file) -> None:
    """Set the page up and draw the frame around the page the URL names."""
    st.set_page_config(
        page_title="Relative position attention explorer",
        # shipped, not a font icon fetched from a font host: it shows offline too (the index
        # table clip(j - i, 2) + 2 of six positions, in Viridis)
        page_icon=str(ASSETS / "favicon.png"),
        layout="wide",
    )
    configure_process()  # torch threads and heaps for a small shared host (once per process)
    start_warming()  # every page's default and n = 1024 views, once, in the background
    computed = computed_so_far()
    try:
        with shown_failures():  # a limit a user reached, or a bug: never a traceback on the page
            frame(page_for)
    finally:
        note_run_ended(computed)  # a visitor's run delays the next warm run
        collect_soon()  # the run's garbage and freed heap, once its last messages are sent


def frame(page_for: PageFor) -> None:
    st.html(ASSETS / "layout.css")  # narrow screens: formulas, controls and tables fit
    route_slot = st.sidebar.container()  # above the controls, drawn once the view's URL is begun
    params, parsed = sidebar_controls()
    st.session_state[PARAMS_STATE_KEY] = params
    with route_slot:
        route = route_picker()
    pair = pair_inputs(params)
    with st.sidebar:
        pair_note = st.container()  # filled after the page ran: only then is its scheme known
        glossary()  # one meaning per symbol, the same on every page
    pages = {page.stem: page_for(page) for page in PAGES}
    # one labelled section per part of the story, every page shown: folded, the sidebar would
    # hide the last pages behind "View more"
    sections = {s.label: [pages[p.stem] for p in s.pages] for s in SECTIONS}
    page = st.navigation(sections, expanded=True)
    stem = next(stem for stem, p in pages.items() if p == page)
    show_warnings(parsed.warnings)
    where_on_route(route, stem, pages)
    notes = st.container()  # filled after the page ran: only then are its controls known
    start_recording()  # the charts this run draws, for the view's download
    start_parts()  # and the arrays its fragments draw
    with one_view_at_a_time():  # what a rerun holds is never held by two visitors at once
        LEDGER.start_run()  # this view's cached values go last from the caches
        page.run()
    report_other_keys(parsed.other_keys, notes)
    if pair is not None:
        with pair_note:
            pair_caption(pair, params)
    story_links(route, stem, pages)


def story_links(route: Route, stem: str, pages: dict[str, st.Page]) -> None:
    """The previous and the next page of the route (of every page, off the route); the shared
    controls keep their values."""
    before, after = route.neighbours(stem)
    if route.step(stem) is None:
        before, after = neighbours(stem)
    st.divider()
    row = st.container(horizontal=True, horizontal_alignment="distribute")
    if before is not None:
        row.page_link(
            pages[before.stem], label=f"Previous: {before.title}", icon=":material/arrow_back:"
        )
    if after is not None:
        row.page_link(
            pages[after.stem], label=f"Next: {after.title}", icon=":material/arrow_forward:",
            icon_position="right",
        )  # fmt: skip
    elif route != EVERY_PAGE:
        row.caption(f"The end of the route {route.label!r}: every page stays in the navigation.")
