"""The Streamlit Community Cloud entry point, deploy/streamlit_app.py, served from the repository
root as Cloud serves it: the landing page, the sidebar's page URLs and a shared deep link that is
the first request to a fresh server all work as under ``streamlit run app.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from explorer.frame.navigation import PAGES, url_path
from scripts.local_app import served_app

DEPLOY_ENTRY = "deploy/streamlit_app.py"  # the main file path a deployer gives Cloud
TIMEOUT_MS = 30_000


@pytest.fixture
def deploy_server(tmp_path: Path) -> Iterator[str]:
    """A fresh server for the deploy entry point: the first request it sees is the test's.

    ``python -m streamlit`` would put the working directory (the repository root) on sys.path;
    the ``streamlit`` command that launches an app on Cloud does not. PYTHONSAFEPATH leaves it
    off here too, so the entry point has to make the root importable itself.
    """
    try:
        with served_app(
            tmp_path / "streamlit.log", entry=DEPLOY_ENTRY, env={"PYTHONSAFEPATH": "1"}
        ) as (base_url, _):
            yield base_url
    except RuntimeError as error:
        pytest.fail(str(error))


def expect_clean_page_with_a_chart(page: Page) -> None:
    expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    expect(page.locator('[data-testid="stAlertContentError"]')).to_have_count(0)


def sidebar_links(page: Page):
    """The sidebar navigation's page links, unfolded when it shows only the first ten."""
    more = page.locator('[data-testid="stSidebarNavViewButton"]')
    if more.count() and re.search(r"more", more.inner_text(), re.IGNORECASE):
        more.click()
    return page.locator('[data-testid="stSidebarNav"] a')


def test_landing_page_and_sidebar_navigation(
    deploy_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(deploy_server)
    wait_for_app_run(page)
    expect_clean_page_with_a_chart(page)

    links = sidebar_links(page)
    expect(links).to_have_count(len(PAGES), timeout=TIMEOUT_MS)
    # the URL of every page is the one `streamlit run app.py` gives it
    hrefs = links.evaluate_all("links => links.map(link => link.getAttribute('href'))")
    assert hrefs == [deploy_server + url_path(p) for p in PAGES]

    target = next(p for p in PAGES if p.stem == "logits")
    links.get_by_text(target.title, exact=True).click()
    expect(page).to_have_url(re.compile(re.escape(url_path(target)) + r"(\?|$)"))
    wait_for_app_run(page)
    expect_clean_page_with_a_chart(page)


def test_deep_link_as_the_first_request_runs_through_the_app(
    deploy_server: str, page: Page, wait_for_app_run
) -> None:
    """A shared link that wakes the app: the page it names, with the shared sidebar controls
    holding the values of its query string."""
    page.goto(f"{deploy_server}/logits?n=16&k=3&weights=random")
    wait_for_app_run(page)
    expect(page).to_have_url(re.compile(r"/logits\?(.*&)?k=3(&|$)"), timeout=TIMEOUT_MS)
    expect(page.get_by_role("slider", name="n (sequence length)")).to_have_value("16")
    expect(page.get_by_role("slider", name="k (clip distance)")).to_have_value("3")
    expect_clean_page_with_a_chart(page)
    expect(sidebar_links(page)).to_have_count(len(PAGES), timeout=TIMEOUT_MS)
