"""Streamlit Community Cloud entry point: runs the repository's app.py, unchanged.

Cloud installs the dependency file it finds in the entry point's folder before the one at the
repository root. This folder exists for that: its requirements.txt is the root one with torch
taken as PyTorch's CPU build, while ``./dev.sh`` and CI keep installing the root
requirements.txt. Everything else is the root app, executed afresh on every rerun as
``streamlit run app.py`` would: the same widgets, pages and page URLs (app.py registers its pages
by absolute path, so they do not depend on where the entry script lives).

This folder has no ``pages/`` of its own, so Streamlit never switches to its legacy ``pages/``
multipage layout for this entry point (see ``explorer.frame.controls.ensure_app_ran``): a deep link
that is the first request to a fresh server already runs through app.py.

Run it from the repository root, as Cloud does (Streamlit reads ``.streamlit/config.toml`` from
the working directory): ``streamlit run deploy/streamlit_app.py``.
"""

import os
import runpy
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# Streamlit puts the entry script's folder (deploy/) on sys.path, not the repository root that
# app.py and the pages import explorer, relpos_core and relpos_lab from.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
# A fresh deploy runs every page's default and n = 1024 views once, in the background, from the
# first script run (Cloud's script health check): its first visitor waits as the second does
# (explorer/frame/warm.py). RELPOS_WARM_AT_START=0 in the app's environment turns it off.
os.environ.setdefault("RELPOS_WARM_AT_START", "1")
runpy.run_path(str(REPO_ROOT / "app.py"), run_name="__main__")
