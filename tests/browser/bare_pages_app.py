"""A bare Streamlit multipage app beside the explorer in the accessibility test: two pages in
two labelled sections of the navigation (as the explorer's), each a caption and the floor
page's chart (scripts/floor_app.py), one sidebar slider, the repository's theme. What axe-core
finds here is Streamlit's own, not the explorer's."""

import streamlit as st

from scripts.floor_app import index_chart


def page() -> None:
    st.title("A bare page")
    st.caption("A caption in the theme's colours.")
    index_chart(st.session_state.get("k", 8))


if __name__ == "__main__":
    st.sidebar.slider("k (clip distance)", min_value=1, max_value=16, value=8, key="k")
    st.navigation({
        "Start": [st.Page(page, title="One", default=True)],
        "Then": [st.Page(page, title="Two", url_path="two")],
    }, expanded=True).run()  # fmt: skip
