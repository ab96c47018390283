"""The head grid in a real Chromium: one panel per head, and a picked head redraws the detail."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

TIMEOUT_MS = 30_000


def panel_titles(page: Page):
    """The panel titles of the head grid (the first chart): 'head 0', 'head 1', ..."""
    return page.locator('[data-testid="stPlotlyChart"]').first.locator(".annotation-text")


@pytest.mark.parametrize("path", ["attention", "logits"])
def test_one_panel_per_head_and_the_count_follows_the_sidebar(
    app_server: str, page: Page, wait_for_app_run, path: str
) -> None:
    page.goto(f"{app_server}/{path}?weights=random")
    wait_for_app_run(page)
    expect(panel_titles(page)).to_have_count(2, timeout=TIMEOUT_MS)  # default: 2 heads
    heads = page.get_by_role("combobox", name="heads")  # the sidebar's heads select
    heads.click()
    heads.fill("8")
    heads.press("Enter")
    expect(panel_titles(page)).to_have_count(8, timeout=TIMEOUT_MS)
    expect(panel_titles(page).nth(7)).to_have_text("head 7")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_picking_a_head_updates_the_detail_chart(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/attention?heads=4&weights=random")
    wait_for_app_run(page)

    def detail(head: int):
        return page.locator(".annotation-text", has_text=f"weights α, head {head}")

    expect(detail(0)).to_have_count(1, timeout=TIMEOUT_MS)
    main = page.get_by_test_id("stMain")  # the sidebar has segmented controls too
    main.get_by_test_id("stButtonGroup").first.get_by_text("3", exact=True).click()
    # the redrawn chart replaces the old one (both exist for a moment during the rerun)
    expect(detail(3)).to_have_count(1, timeout=TIMEOUT_MS)
    expect(detail(0)).to_have_count(0, timeout=TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"attention_head=3"), timeout=TIMEOUT_MS)
    expect(page.get_by_role("heading", name="Head 3")).to_be_visible()
