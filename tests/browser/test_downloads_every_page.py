"""In Chromium: every page's "Download this view (.zip)" delivers its zip within a bounded time;
the zip holds the page's parameters, and its view.html, opened from disk with the network
blocked, draws as many plotly charts as the page shows, without an error."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from explorer.frame.navigation import PAGES, url_path
from scripts.local_app import APP_IDLE

TIMEOUT_MS = 30_000
DOWNLOAD_TIMEOUT_MS = 45_000  # the slowest page builds its zip in a few seconds
VIEWS = (
    *(url_path(page) for page in PAGES),
    "/basics?weights=random",
    "/trained?weights=random",
    # each page's own controls away from their defaults
    "/skew?weights=random&n=6&skew_step=3+reshaped&skew_distance=false",
    "/attention?weights=random&n=6&attention_more=the+mask",
    "/lookup?weights=random&n=6&ak_view=by+query+row&ak_row=4",
    "/family?weights=random&n=6&profile_head=head+1&profile_part=position+only",
)
# what params.json must name, beyond the page and its link (the shared controls by default)
PAGE_PARAMETERS = {
    "speed": {"heads", "k"},  # the sizes its memory curves are drawn at
    "trained": {"weights", "attention_weights", "tables_weights", "trained_model"},
}
SHARED_PARAMETERS = {"n", "k", "d_model", "heads", "mask", "seed", "weights", "window"}
WEIGHTS_DEFAULT = "trained"  # what the app opens on


def stem_of(path: str) -> str:
    return urlsplit(path).path.strip("/") or PAGES[0].stem


def live_chart_count(page: Page) -> int:
    """How many plotly charts the page shows, once its runs are over and the count holds for
    a second (a shared link first runs the page alone, then again through app.py)."""
    charts = page.locator('[data-testid="stPlotlyChart"]')
    expect(charts.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
    idle = page.locator(APP_IDLE)
    counts: list[int] = []
    for _ in range(60):
        expect(idle).to_have_count(1, timeout=TIMEOUT_MS)
        counts.append(charts.count())
        if len(counts) >= 3 and counts[-1] == counts[-2] == counts[-3]:
            return counts[-1]
        page.wait_for_timeout(500)
    raise AssertionError(f"the page's chart count kept changing: {counts}")


def download_zip(page: Page) -> tuple[dict[str, bytes], str]:
    with page.expect_download(timeout=DOWNLOAD_TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download this view (.zip)").click()
    download = info.value
    assert download.failure() is None
    with zipfile.ZipFile(download.path()) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    return files, download.suggested_filename


def check_parameters(meta: dict, view: str, live_url: str, app_server: str) -> None:
    stem = stem_of(view)
    assert meta["page"] == stem
    assert PAGE_PARAMETERS.get(stem, SHARED_PARAMETERS) <= set(meta)
    asked = dict(parse_qsl(urlsplit(view).query))
    if "weights" in PAGE_PARAMETERS.get(stem, SHARED_PARAMETERS):
        assert meta["weights"] == asked.get("weights", WEIGHTS_DEFAULT)
    if stem == "trained":  # the page's own models, whatever the sidebar says
        assert meta["attention_weights"] == meta["tables_weights"] == "trained"
    link = urlsplit(meta["link"])
    assert link.path == f"/{stem}"
    assert meta["url"] == app_server + meta["link"]
    # the link opens exactly the view the address bar opens: the same query, no more, no less
    shown = sorted(parse_qsl(urlsplit(live_url).query, keep_blank_values=True))
    assert sorted(parse_qsl(link.query, keep_blank_values=True)) == shown, (live_url, meta["link"])


def open_offline(browser: Browser, html_path: Path) -> tuple[Page, list[str], list[str]]:
    """``html_path`` in a context with the network off and every non-file request aborted;
    returns the page, the requests it tried to send out and its errors."""
    context = browser.new_context(offline=True)
    sent_out: list[str] = []
    errors: list[str] = []

    def only_files(route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            sent_out.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    offline = context.new_page()
    offline.on("pageerror", lambda error: errors.append(str(error)))
    offline.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    offline.goto(html_path.as_uri())
    return offline, sent_out, errors


@pytest.mark.parametrize("view", VIEWS, ids=[v.strip("/") or "overview" for v in VIEWS])
def test_the_download_arrives_and_its_page_draws_offline(
    app_server: str, page: Page, browser: Browser, wait_for_app_run, tmp_path: Path, view: str
) -> None:
    page.goto(f"{app_server}{view}")
    wait_for_app_run(page)
    charts = live_chart_count(page)
    files, name = download_zip(page)

    assert name.startswith(f"relpos_{stem_of(view).replace('_', '-')}_") and name.endswith(".zip")
    assert {"params.json", "README.txt", "view.html"} <= set(files)
    assert any(file.endswith(".csv") for file in files)
    meta = json.loads(files["params.json"])
    check_parameters(meta, view, page.url, app_server)

    html_path = tmp_path / "view.html"
    html_path.write_bytes(files["view.html"])
    offline, sent_out, errors = open_offline(browser, html_path)
    try:
        plots = offline.locator(".js-plotly-plot")
        expect(plots).to_have_count(charts, timeout=TIMEOUT_MS)
        drawn = offline.locator(".js-plotly-plot", has=offline.locator(".main-svg"))
        expect(drawn).to_have_count(charts, timeout=TIMEOUT_MS)
        assert json.loads(offline.locator("#parameters").inner_text()) == meta
        expect(offline.get_by_role("link", name=meta["url"])).to_have_attribute("href", meta["url"])
        assert sent_out == [] and errors == []
    finally:
        offline.context.close()
