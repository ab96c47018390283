"""The *colours* control: which palette every chart draws with (explorer/figures/palettes.py).

It is one of the shared sidebar controls (:func:`explorer.frame.controls.sidebar_controls` draws
it, URL-bound as ``?colours=``), but not a field of ``ViewParams``: colours change no number, so
no cached view is computed twice for them. Figures read it when they are built, through
:func:`setting`.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from explorer.frame.widgets import choice

KEY = "colours"
SETTINGS = ("standard", "colour-blind safe")  # the palettes' names (explorer.figures.palettes)
HELP = (
    "Colour-blind safe: every chart's scales and categories stay ordered and apart under "
    "protanopia, deuteranopia and tritanopia (Viridis, cividis, a blue-orange scale whose arms "
    "differ in lightness, Okabe-Ito's categories). Lines are told apart by dash or marker as "
    "well, in either setting."
)


def setting() -> str:
    """The setting of this run; "standard" outside a Streamlit run (tests, scripts)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return SETTINGS[0]
    value = st.session_state.get(KEY, SETTINGS[0])
    return value if value in SETTINGS else SETTINGS[0]


def control() -> str:
    """The sidebar's *colours* control (URL-bound, fitted like every control); its setting."""
    return str(choice("colours", SETTINGS, KEY, help=HELP))
