"""The Attention page's token view in a real Chromium: a click on a token keeps only its
lines: the focus control, the URL and the figure follow."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

TIMEOUT_MS = 30_000


def token_marker(page: Page, side: int, index: int):
    """The marker of token ``index`` on the query (0) or key (1) side of the token view."""
    chart = page.locator(".st-key-chart_attention_tokens")
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
    traces = chart.locator(".scatterlayer .trace")  # the line traces, then queries and keys
    return traces.nth(traces.count() - 2 + side).locator(".points path").nth(index)


def test_a_click_on_a_token_keeps_its_lines(app_server: str, page: Page, wait_for_app_run):
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/attention?weights=random&text=the+cat+sat+on+the+mat")
    wait_for_app_run(page)
    marker = token_marker(page, 0, 2)
    marker.scroll_into_view_if_needed()
    expect(marker).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)  # the chart settles its size
    marker.click(force=True)
    page.wait_for_url(re.compile(r"token_focus=query\+2"), timeout=TIMEOUT_MS)  # its label
    wait_for_app_run(page)
    focused = token_marker(page, 0, 2)  # redrawn: the focused token's marker is red
    expect(focused).to_have_attribute(
        "style", re.compile(r"rgb\(214, 39, 40\)"), timeout=TIMEOUT_MS
    )
    expect(token_marker(page, 0, 1)).not_to_have_attribute("style", re.compile(r"214, 39, 40"))
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
