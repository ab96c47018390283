"""Every page on a phone (an iPhone's screen, user agent and pixel ratio, as Playwright describes
it): nothing runs past the screen's right edge but inside a box of its own that scrolls, panel
grids are laid out at the phone's width, and the favicon is the shipped file."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.navigation import url_path
from explorer.frame.screen import PHONE_WIDTH

PAGES = tuple(url_path(page).lstrip("/") for page in NAVIGATION)
TIMEOUT_MS = 30_000
# Elements that may be wider than the screen because their own box scrolls: display formulas,
# markdown tables and charts (layout.css). Anything else past the right edge is a layout bug.
OVERFLOW = """() => {
  const width = window.innerWidth;
  const scrolls = (el) => {
    const box = el.closest('.katex-display, table, [data-testid="stPlotlyChart"]');
    return box !== null && box.getBoundingClientRect().right <= width + 1
      && ["auto", "scroll"].includes(getComputedStyle(box).overflowX);
  };
  // KaTeX's MathML copy for screen readers is clipped out of sight, and a slider's native
  // range input is a transparent box centred on its thumb: neither is drawn past the edge
  const drawn = (el) => !el.closest(".katex-mathml") && !el.matches('input[type="range"]')
    && el.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const main = document.querySelector('[data-testid="stMain"]');
  return [...main.querySelectorAll("*")]
    .filter((el) => el.getBoundingClientRect().right > width + 1 && drawn(el) && !scrolls(el))
    .map((el) => el.outerHTML.slice(0, 160));
}"""


@pytest.fixture
def phone(browser: Browser, playwright):
    context = browser.new_context(**playwright.devices["iPhone 13"])
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("path", PAGES, ids=[p or "overview" for p in PAGES])
def test_no_page_runs_past_a_phone_screen(app_server: str, phone, wait_for_app_run, path) -> None:
    phone.goto(f"{app_server}/{path}")
    wait_for_app_run(phone)
    expect(phone.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    phone.wait_for_timeout(500)  # KaTeX typesets after the run
    assert phone.evaluate(OVERFLOW) == []
    expect(phone.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_head_grid_is_laid_out_at_the_phone_width(app_server: str, phone, wait_for_app_run):
    phone.goto(f"{app_server}/attention?heads=8&d_model=64")
    wait_for_app_run(phone)
    chart = phone.locator('[data-testid="stPlotlyChart"] .main-svg').first
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    assert chart.bounding_box()["width"] <= PHONE_WIDTH + 1


def test_the_favicon_is_the_shipped_file(app_server: str, phone, wait_for_app_run) -> None:
    phone.goto(app_server)
    wait_for_app_run(phone)
    href = phone.locator('link[rel="icon"], link[rel="shortcut icon"]').first.get_attribute("href")
    assert href and href.startswith(app_server), href  # served by the app, no font host
    response = phone.request.get(href)
    assert response.ok and response.headers["content-type"].startswith("image/png")
