"""The Predict page's clicks in a real Chromium: a map of the every-head grid opens that layer
and head on the page that draws it further (the address it settles on holds them), and a written
character draws the attention that wrote it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

TIMEOUT_MS = 30_000


def click_map(page: Page, index: int) -> None:
    """Click inside map ``index`` of the grid (row-major: layer, then head)."""
    target = page.locator(".st-key-chart_predict_heads .nsewdrag").nth(index)
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.7)


@pytest.mark.parametrize(
    ("query", "index", "path", "expected"),
    [  # 200 characters: each map is an image; 48: a heatmap with a marker per cell
        ("n=200&predict_model=shaw", 6, "attention", ("attention_head=2", "layer=1", "k=8")),
        ("n=48&predict_model=rope", 11, "family", ("scheme=rope", "family_head=3", "layer=2")),
    ],
)
def test_a_click_on_a_map_opens_that_head(
    app_server: str, page: Page, wait_for_app_run, query, index, path, expected
) -> None:
    page.goto(f"{app_server}/predict?{query}&predict_count=0")
    wait_for_app_run(page)
    click_map(page, index)
    expect(page).to_have_url(re.compile(rf"/{path}\?"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    for part in expected:
        expect(page).to_have_url(re.compile(re.escape(part)), timeout=TIMEOUT_MS)
    n = query.split("&")[0]
    expect(page).to_have_url(re.compile(re.escape(n)), timeout=TIMEOUT_MS)  # the same text
    head = index % 4
    if path == "attention":
        expect(page.get_by_role("heading", name=f"Head {head}")).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_click_on_a_written_character_draws_the_attention_that_wrote_it(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/predict?text=The%20example%20above%20shows&predict_model=xl")
    wait_for_app_run(page)
    target = page.locator(".st-key-chart_predict_written .nsewdrag").first
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * 9.5 / 64, box["y"] + 5)  # character 9, line 0
    expect(page).to_have_url(re.compile(r"predict_char=9\b"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    expect(page.get_by_text("Character 9 of the generation")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
