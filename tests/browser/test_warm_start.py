"""A fresh deploy warms itself: the first visitor of Predict at n = 1024 (and of the landing page)
finds every value its run needs already computed, as the second visitor does.

The server is started as a deploy starts it (``RELPOS_WARM_AT_START=1``, the script health check
on and asked once, as Streamlit Community Cloud and ``deploy/replicas.sh`` ask it); its log says
what the warm-up ran and what each visitor's run computed (``explorer/frame/warm.py``).
"""

from __future__ import annotations

import re
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from explorer.frame.warm import views
from scripts.local_app import APP_IDLE, served_app

pytestmark = pytest.mark.browser

WARM_ENV = {
    "RELPOS_WARM_AT_START": "1",
    "STREAMLIT_SERVER_SCRIPT_HEALTH_CHECK_ENABLED": "true",
}
WARM_TIMEOUT_S = 300.0
VISITED = ("/predict?n=1024", "/")


def wait_for_line(log: Path, pattern: str, timeout_s: float, after: int = 0) -> re.Match:
    """The first line matching ``pattern`` written after the log's first ``after`` characters."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace")[after:])
        if found:
            return found
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:]
    raise AssertionError(f"no line matching {pattern!r} within {timeout_s:.0f} s:\n{tail}")


def test_first_visitor_finds_the_views_warmed(tmp_path: Path, browser: Browser) -> None:
    log = tmp_path / "streamlit.log"
    with served_app(log, env=WARM_ENV) as (base_url, _):
        with urllib.request.urlopen(f"{base_url}/_stcore/script-health-check", timeout=60) as r:
            assert r.status == 200
        finished = wait_for_line(log, r"warm-up finished: (\d+) views", WARM_TIMEOUT_S)
        text = log.read_text(errors="replace")
        expected = list(views())
        assert int(finished[1]) == len(expected), text[-3000:]
        for view in expected:  # each page at its default and at n = 1024, run to its end
            assert f"warmed {view.label}: ok" in text, view.label

        page = browser.new_page()
        for path in VISITED:
            before = len(log.read_text(errors="replace"))
            page.goto(base_url + path)
            page.wait_for_selector(APP_IDLE, timeout=120_000)
            # the page's first run; its URL then settles with the page's own defaults added
            run = rf"a visitor's run of {re.escape(path)}(?:[?&][^ ]*)? computed (\d+) values"
            line = wait_for_line(log, run, 60, after=before)
            assert int(line[1]) == 0, f"the first visitor of {path} computed {line[1]} values"
        page.close()
