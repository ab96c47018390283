"""In Chromium: a clamped URL is rewritten to the value shown, so the copied address reopens the
same view; the page's one download button saves one zip named by the view's parameters."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import Page, expect

TIMEOUT_MS = 60_000


def slider(page: Page, name: str):
    return page.get_by_role("slider", name=name)


def current_view(page: Page):
    return page.get_by_text(re.compile(r"^Current view: n = \d+, k = \d+"))


@pytest.mark.parametrize(
    ("query", "name", "shown", "kept"),
    [
        ("n=4097", "n (sequence length)", "4096", "n=4096"),
        ("k=99", "k (clip distance)", "64", "k=64"),
        ("n=0", "n (sequence length)", "1", "n=1"),
        ("n=3&n=5", "n (sequence length)", "5", "n=5"),
    ],
)
def test_a_corrected_url_is_rewritten_and_the_copy_reopens_the_view(
    app_server: str, page: Page, wait_for_app_run, query: str, name: str, shown: str, kept: str
) -> None:
    page.goto(f"{app_server}/?{query}&weights=random")
    wait_for_app_run(page, TIMEOUT_MS)
    expect(slider(page, name)).to_have_value(shown, timeout=TIMEOUT_MS)
    expect(page).to_have_url(re.compile(rf"\?(.*&)?{kept}(&|$)"), timeout=TIMEOUT_MS)
    assert page.url.count(kept.split("=")[0] + "=") == 1  # one value, no repeated key
    expect(page.locator('[data-testid="stAlertContentWarning"]').first).to_be_visible()
    view = current_view(page).inner_text()

    copy = page.context.new_page()  # what a person gets who opens the copied link
    copy.goto(page.url)
    wait_for_app_run(copy, TIMEOUT_MS)
    expect(slider(copy, name)).to_have_value(shown, timeout=TIMEOUT_MS)
    expect(current_view(copy)).to_have_text(view)
    expect(copy.locator('[data-testid="stAlertContentWarning"]')).to_have_count(0)
    expect(copy.locator('[data-testid="stException"]')).to_have_count(0)
    copy.close()


def test_a_slider_moved_after_a_clamp_keeps_the_url_in_step(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/?k=99&weights=random")
    wait_for_app_run(page, TIMEOUT_MS)
    k = slider(page, "k (clip distance)")
    expect(k).to_have_value("64", timeout=TIMEOUT_MS)
    k.focus()
    page.keyboard.press("ArrowLeft")
    expect(k).to_have_value("63", timeout=TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"\?(.*&)?k=63(&|$)"), timeout=TIMEOUT_MS)


def test_one_download_button_saves_the_view_as_one_named_zip(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/?n=5&k=1&text=the+cat+sat+on+mats&weights=random")
    wait_for_app_run(page, TIMEOUT_MS)
    buttons = page.locator('[data-testid="stDownloadButton"]')
    expect(buttons).to_have_count(1, timeout=TIMEOUT_MS)
    with page.expect_download(timeout=TIMEOUT_MS) as info:
        buttons.get_by_role("button").click()
    download = info.value
    name = download.suggested_filename
    assert name == "relpos_overview_n5_k1_d16_h2_seed0_mask-none_text-the-cat-sat-on.zip"
    with zipfile.ZipFile(download.path()) as archive:
        files = {n: archive.read(n).decode() for n in archive.namelist()}
    assert {"index.csv", "tokens.csv", "params.json", "README.txt"} <= set(files)
    index = list(csv.reader(io.StringIO(files["index.csv"])))
    labels = ["0 the", "1 cat", "2 sat", "3 on", "4 mats"]
    assert index[0] == ["query i \\ key j", *labels]
    assert [row[0] for row in index[1:]] == labels
    assert [row[1:] for row in index[1:3]] == [["1", "2", "2", "2", "2"], ["0", "1", "2", "2", "2"]]
    params = json.loads(files["params.json"])
    assert params["length"] == 5 and params["k"] == 1 and params["text"] == "the cat sat on mats"
    link = urlsplit(params["link"])
    assert link.path == "/overview"
    assert sorted(parse_qsl(link.query)) == sorted(parse_qsl(urlsplit(page.url).query))
