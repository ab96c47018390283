"""The explorer in a real Chromium: pages open cleanly, a keyboard slider move redraws the chart
and rewrites the URL, and that URL reproduces the view in a fresh page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.navigation import url_path

PAGES = tuple(url_path(page).lstrip("/") for page in NAVIGATION)  # "": the default page
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


def clip_title(page: Page, k: int):
    """The lookup page's clipped-distance panel title for clip distance ``k`` (a subplot title
    of the distances figure, drawn as an annotation)."""
    return page.locator(
        '[data-testid="stPlotlyChart"] .annotation-text', has_text=f"clipped to ±{k}"
    )


def test_keyboard_slider_move_redraws_rewrites_url_and_reproduces(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/lookup?weights=random")
    wait_for_app_run(page)
    expect(clip_title(page, 2)).to_have_count(1, timeout=TIMEOUT_MS)

    slider = page.get_by_role("slider", name="k (clip distance)")
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(slider).to_have_value("3", timeout=TIMEOUT_MS)
    page.wait_for_url(re.compile(r"/lookup\?(.*&)?k=3(&|$)"), timeout=TIMEOUT_MS)
    # the redrawn chart replaces the old one (both exist for a moment during the rerun)
    expect(clip_title(page, 3)).to_have_count(1, timeout=TIMEOUT_MS)
    expect(clip_title(page, 2)).to_have_count(0, timeout=TIMEOUT_MS)
    link = page.url

    fresh = page.context.new_page()
    fresh.goto(link)
    wait_for_app_run(fresh)
    expect(fresh.get_by_role("slider", name="k (clip distance)")).to_have_value("3")
    expect(clip_title(fresh, 3)).to_have_count(1, timeout=TIMEOUT_MS)
    expect(fresh.locator('[data-testid="stException"]')).to_have_count(0)
    fresh.close()


def test_bad_url_shows_a_warning_not_an_error(app_server: str, page: Page, wait_for_app_run):
    page.goto(f"{app_server}/attention?n=abc&text=%3Cscript%3Ealert(1)%3C/script%3E")
    wait_for_app_run(page)
    expect(page.locator('[data-testid="stAlertContentWarning"]').first).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.get_by_text("<script>alert(1)</script>").first).to_be_visible()


def test_deep_link_on_a_fresh_server_runs_through_the_app(
    fresh_app_server: str, page: Page, wait_for_app_run
) -> None:
    """A shared link is often the first request a (re)started server sees: it must still get
    the shared sidebar, the page it names and the values in its query string."""
    page.goto(f"{fresh_app_server}/lookup?n=12&k=3&weights=random")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"/lookup\?(.*&)?k=3(&|$)"), timeout=TIMEOUT_MS)
    expect(page.get_by_role("slider", name="n (sequence length)")).to_have_value("12")
    expect(page.get_by_role("slider", name="k (clip distance)")).to_have_value("3")
    expect(clip_title(page, 3)).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
