"""Ask the browser for its chart code at the start of a run, not when the first chart arrives.

Streamlit's frontend loads the code of an element kind the first time an element of that kind
is drawn: plotly's is one 4.7 MB module, which a visitor's browser then fetches, compiles and
runs before it can draw anything. On a first visit that started after the server's run had
computed the page (about 3 s on a server that has just started: torch alone takes 1.5 s to
import), and the first chart came 2.5 s after the last message of the run on this project's test
machine. Sent as a run's first element, a one-line script imports the same module, so the browser
compiles it while the server computes; Streamlit's own lazy import then finds it loaded. The
module's file name carries a hash of the Streamlit build: it is read from the installed package.

This module imports Streamlit only, so ``app.py`` can call it before anything imports torch.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

CHART_CODE = "PlotlyChart.*.js"  # the frontend module behind st.plotly_chart
STATIC = Path(st.__file__).resolve().parent / "static" / "static" / "js"


@functools.cache
def chart_module() -> str | None:
    """File name of the installed Streamlit's plotly module; None if this build has none."""
    found = sorted(STATIC.glob(CHART_CODE))
    return found[0].name if len(found) == 1 else None


def import_script(module: str) -> str:
    """A script that imports ``module`` from the folder of Streamlit's own entry module, so
    the address is the one the frontend itself imports, whatever path the app is served under.

    >>> import_script("PlotlyChart.abc.js")  # doctest: +ELLIPSIS
    '<style>...</style><script id="chart-code">...new URL("PlotlyChart.abc.js", entry ? ...'
    """
    return (
        # the element draws nothing, and its box takes no room in the page (no flex gap)
        '<style>[data-testid="stElementContainer"]:has(> [data-testid="stHtml"] > #chart-code)'
        "{display: none}</style>"
        '<script id="chart-code">'
        "const entry = document.querySelector('script[src*=\"/static/js/index.\"]');"
        f"import(new URL({json.dumps(module)}, entry ? entry.src : document.baseURI).href)"
        ".catch(() => {});"  # a miss costs nothing: Streamlit loads it when a chart arrives
        "</script>"
    )


def fetch_chart_code() -> None:
    """The run's first element: a script importing the chart code (nothing is drawn)."""
    module = chart_module()
    if module is not None:
        st.html(import_script(module), unsafe_allow_javascript=True)
