"""The route picked, drawn: the sidebar's picker, the page's place on it, the Overview's cards."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from explorer.frame.routes import EVERY_PAGE, ROUTE_KEY, ROUTES, Route, route_named
from explorer.frame.widgets import choice

PAGES_DIR = Path(__file__).resolve().parents[2] / "pages"  # page_link by absolute path


def route_picker() -> Route:
    """The route the previous / next links follow (in the URL: a shared link keeps it)."""
    label = choice(
        "Route", [r.label for r in ROUTES], ROUTE_KEY, kind="select",
        default=EVERY_PAGE.label,
        help="A short way through the pages for one question; the Overview describes each. "
        "Every page stays in the navigation below.",
    )  # fmt: skip
    return route_named(label)


def where_on_route(route: Route, stem: str, pages: dict[str, st.Page]) -> None:
    """One line above the page: its step on the route, or that it is off the route."""
    if route == EVERY_PAGE:
        return
    step = route.step(stem)
    if step is not None:
        st.caption(f"Route: {route.title} · step {step} of {len(route.stems)}")
        return
    first = route.pages[1] if len(route.pages) > 1 else route.pages[0]
    row = st.container(horizontal=True, vertical_alignment="center")
    row.caption(f"Route: {route.title} · this page is not one of its steps")
    row.page_link(pages[first.stem], label=f"Back to step 2: {first.title}", icon=":material/undo:")


def current_route() -> Route:
    """The route the sidebar's picker holds in this run."""
    labels = [r.label for r in ROUTES]
    label = st.session_state.get(ROUTE_KEY, EVERY_PAGE.label)
    return route_named(label) if label in labels else EVERY_PAGE


def take_route(route: Route) -> None:
    """A button's callback: the route becomes the sidebar's (before its widget is drawn)."""
    st.session_state[ROUTE_KEY] = route.label


def route_cards() -> None:
    """Each route but every page: its question, its steps, and a button that takes it (the
    picked one links to its second step instead)."""
    current = current_route()
    for route in ROUTES:
        if route == EVERY_PAGE:
            continue
        with st.container(border=True):
            st.markdown(f"**{route.title}** ({len(route.stems)} pages)")
            st.caption(f"At its end you can say {route.question}.")
            st.markdown("Steps: " + " → ".join(page.title for page in route.pages))
            second = route.pages[1]
            if route == current:
                st.page_link(
                    PAGES_DIR / second.file, label=f"Taken: go to step 2, {second.title}",
                    icon=":material/arrow_forward:",
                )  # fmt: skip
            else:
                key = f"take_route_{ROUTES.index(route)}"
                st.button("Take this route", key=key, on_click=take_route, args=(route,),
                          icon=":material/route:")  # fmt: skip
