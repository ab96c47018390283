"""The explorer in a real Chromium: pages open cleanly, a keyboard slider move redraws the chart
and rewrites the URL, and that URL reproduces the view in a fresh page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

PAGES = ("", "lookup", "logits", "skew", "attention", "absolute")
TIMEOUT_MS = 30_000


def drawn_charts(page: Page):
    return page.locator('[data-testid="stPlotlyChart"] .main-svg')


@pytest.mark.parametrize("path", PAGES, ids=[p or "overview" for p in PAGES])
def test_page_opens_with_a_chart_and_no_error(
    app_server: str, page: Page, wait_for_app_run, path: str
) -> None:
    page.goto(f"{app_server}/{path}")
    wait_for_app_run(page)
    expect(drawn_charts(page).first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)


def test_keyboard_slider_move_redraws_rewrites_url_and_reproduces(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/lookup")
    wait_for_app_run(page)
    title = page.locator('[data-testid="stPlotlyChart"] .gtitle', has_text="clipped to")
    expect(title).to_have_text("clipped to ±2", timeout=TIMEOUT_MS)

    slider = page.get_by_role("slider", name="k (clip distance)")
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(slider).to_have_value("3", timeout=TIMEOUT_MS)
    page.wait_for_url(re.compile(r"/lookup\?(.*&)?k=3(&|$)"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    expect(title).to_have_text("clipped to ±3", timeout=TIMEOUT_MS)
    link = page.url

    fresh = page.context.new_page()
    fresh.goto(link)
    wait_for_app_run(fresh)
    expect(fresh.get_by_role("slider", name="k (clip distance)")).to_have_value("3")
    expect(
        fresh.locator('[data-testid="stPlotlyChart"] .gtitle', has_text="clipped to")
    ).to_have_text("clipped to ±3", timeout=TIMEOUT_MS)
    expect(fresh.locator('[data-testid="stException"]')).to_have_count(0)
    fresh.close()


def test_bad_url_shows_a_warning_not_an_error(app_server: str, page: Page, wait_for_app_run):
    page.goto(f"{app_server}/attention?n=abc&text=%3Cscript%3Ealert(1)%3C/script%3E")
    wait_for_app_run(page)
    expect(page.locator('[data-testid="stAlertContentWarning"]').first).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.get_by_text("<script>alert(1)</script>").first).to_be_visible()
