"""Relative position attention explorer: shared sidebar controls, then the selected page.

Run with ``streamlit run app.py``. Pages live in ``pages/`` (one file each) and read the view
built here through ``explorer.controls.current_params``.
"""

import logging
from pathlib import Path

import streamlit as st

from explorer.controls import (
    PARAMS_STATE_KEY,
    md_escape,
    report_other_keys,
    show_warnings,
    sidebar_controls,
)

HERE = Path(__file__).resolve().parent
PAGES_DIR = HERE / "pages"  # absolute paths: see tests/app/harness/entry.py

st.set_page_config(
    page_title="Relative position attention explorer",
    page_icon=":material/grid_on:",
    layout="wide",
)


def main() -> None:
    params, parsed = sidebar_controls()
    st.session_state[PARAMS_STATE_KEY] = params
    pages = [
        st.Page(PAGES_DIR / "overview.py", title="Overview", icon=":material/home:", default=True),
        st.Page(PAGES_DIR / "lookup.py", title="Lookup table", icon=":material/table:"),
        st.Page(PAGES_DIR / "logits.py", title="Relative logits", icon=":material/functions:"),
        st.Page(PAGES_DIR / "skew.py", title="Skew", icon=":material/swap_horiz:"),
        st.Page(
            PAGES_DIR / "rel_shift.py", title="Transformer-XL shift", icon=":material/keyboard_tab:"
        ),
        st.Page(PAGES_DIR / "attention.py", title="Attention", icon=":material/visibility:"),
        st.Page(PAGES_DIR / "absolute.py", title="Absolute vs relative", icon=":material/compare:"),
        st.Page(PAGES_DIR / "family.py", title="Position schemes", icon=":material/category:"),
        st.Page(PAGES_DIR / "compare.py", title="Compare schemes", icon=":material/difference:"),
        st.Page(PAGES_DIR / "trained.py", title="Trained model", icon=":material/school:"),
        st.Page(PAGES_DIR / "speed.py", title="Speed & memory", icon=":material/speed:"),
    ]
    page = st.navigation(pages)
    show_warnings(parsed.warnings)
    notes = st.container()  # filled after the page ran: only then are its controls known
    page.run()
    report_other_keys(parsed.other_keys, notes)


try:
    main()
except ValueError as error:  # a limit a user can reach: say which, never a traceback
    st.error(md_escape(f"That view cannot be drawn: {error}"), icon=":material/error:")
except Exception:  # a bug: log it for the maintainer, show the user a friendly message
    logging.getLogger(__name__).exception("unexpected error while drawing the page")
    st.error(
        "Something went wrong while drawing this page. Try other settings or reload; "
        "the details are in the server log.",
        icon=":material/error:",
    )
