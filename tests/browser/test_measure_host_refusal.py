"""scripts/measure_host.py counts a view refused for memory as the explorer shows it: the error
box of ``explorer.frame.failures`` with ``explorer.frame.memory.admit``'s words."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser

from scripts.local_app import REPO, served_app
from scripts.measure_browser import open_tab
from scripts.measure_host import ServerWatch, open_view

APP = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import streamlit as st
from explorer.frame.failures import shown_failures

st.title("a view over the memory limit")
with shown_failures():
    raise ValueError(
        "window profile needs about 53.5 MiB of memory, and this server has 21.1 MiB free "
        "of the 690.0 MiB it may use right now"
    )
"""


def test_a_refused_view_is_counted(browser: Browser, tmp_path: Path) -> None:
    entry = tmp_path / "refused.py"
    entry.write_text(APP)
    with served_app(tmp_path / "server.log", entry=str(entry)) as (base_url, process):
        with open_tab(browser) as tab:
            row = open_view(tab, base_url + "/", ServerWatch(base_url, process), 60.0)
    assert row["drew"] and row["server_alive"], row
    assert row["error_boxes"] == 1, row
    assert len(row["refusals"]) == 1 and "needs about 53.5 MiB" in row["refusals"][0], row
