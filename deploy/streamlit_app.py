"""Streamlit Community Cloud entry point: serves the repository's app.py, unchanged.

Cloud installs the dependency file it finds in the entry point's folder before the one at the
repository root. This folder exists for that: its requirements.txt is the root one with torch
taken as PyTorch's CPU build, while ``./dev.sh`` and CI keep installing the root
requirements.txt.

The app is ``st.App(app.py)``, which ``streamlit run`` serves as it serves app.py itself: the
same widgets, pages and page URLs (app.py registers its pages by absolute path). Its lifespan
hook starts, when the server starts, a thread that imports what the first script run needs
(torch alone takes over a second), so a visitor who wakes the app waits for the browser to load
Streamlit's JavaScript and for those imports side by side instead of one after the other. A run
that needs a module meanwhile waits on Python's import lock for the thread to finish it.

This folder has no ``pages/`` of its own, so Streamlit never switches to its legacy ``pages/``
multipage layout for it (see ``explorer.frame.controls.ensure_app_ran``).

Run it from the repository root, as Cloud does (Streamlit reads ``.streamlit/config.toml`` from
the working directory): ``streamlit run deploy/streamlit_app.py``.
"""

import importlib
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

REPO_ROOT = Path(__file__).resolve().parent.parent
# Streamlit puts the entry script's folder (deploy/) on sys.path, not the repository root that
# app.py and the pages import explorer, relpos_core and relpos_lab from.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# What app.py and the landing page import, the slowest first.
FIRST_RUN_MODULES = ("torch", "plotly.graph_objects", "relpos_core", "explorer.frame.controls")


def import_first_run_modules() -> None:
    for name in FIRST_RUN_MODULES:
        importlib.import_module(name)


@asynccontextmanager
async def lifespan(_app):
    threading.Thread(target=import_first_run_modules, name="warm-imports", daemon=True).start()
    yield


app = st.App(REPO_ROOT / "app.py", lifespan=lifespan)
