"""Smoke test: the server comes up and the first page renders without an error box."""

import urllib.request

from playwright.sync_api import Page, expect


def test_health_endpoint_says_ok(app_server: str) -> None:
    with urllib.request.urlopen(f"{app_server}/_stcore/health", timeout=10) as response:
        assert response.read().decode() == "ok"


def test_first_page_load_shows_no_exception(app_server: str, page: Page, wait_for_app_run) -> None:
    page.goto(app_server)
    wait_for_app_run(page)
    expect(page.locator('[data-testid="stMain"]')).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
