"""What a learner sees of the navigation, of the weights a page draws and of the picked pair, in
a real Chromium: every page one click away, headings true for the weights drawn, and the picked
pair outlined and its j - i written on every page that draws (i, j) figures."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from explorer.frame.navigation import PAGES, SECTIONS, url_path

TIMEOUT_MS = 30_000
CLAIMS_TRAINING = re.compile(r"\b(learn|learned|learnt|trained)\b", re.IGNORECASE)
NEGATED = re.compile(r"\b(not|untrained|random|instead|no)\b", re.IGNORECASE)


def main_text(page: Page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_every_page_is_visible_in_the_sidebar_without_unfolding(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_server}/?weights=random")
    wait_for_app_run(page)
    nav = page.locator('[data-testid="stSidebarNav"]')
    links = nav.locator("a")
    expect(links).to_have_count(len(PAGES), timeout=TIMEOUT_MS)
    hrefs = links.evaluate_all("links => links.map(link => link.getAttribute('href'))")
    assert hrefs == [app_server + url_path(p) for p in PAGES]  # the story's order
    for p in PAGES:
        expect(links.get_by_text(p.title, exact=True)).to_be_visible()
    expect(page.locator('[data-testid="stSidebarNavViewButton"]')).to_have_count(0)
    for section in SECTIONS:  # each section's label heads its pages
        expect(nav.get_by_text(section.label, exact=True)).to_be_visible()


def headings(page: Page) -> list[str]:
    main = page.locator('[data-testid="stMain"]')
    return [h.strip() for h in main.locator("h1, h2, h3").all_inner_texts() if h.strip()]


def test_headings_are_true_for_the_weights_drawn(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    """A heading claims a learned alignment only when the weights drawn were trained."""
    claims = {}
    for weights in ("random", "trained"):
        page.goto(f"{app_server}/basics?weights={weights}")
        wait_for_app_run(page)
        claims[weights] = [
            h for h in headings(page) if CLAIMS_TRAINING.search(h) and not NEGATED.search(h)
        ]
    assert not claims["random"], claims["random"]
    assert claims["trained"]  # the same heading says so when the model is the trained one


def test_the_trained_model_page_says_how_the_weights_switch_applies(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    """The switch does not change this page's models: the page says so, naming the switch's
    value; and the Overview says that it draws no model."""
    for weights in ("random", "trained"):
        page.goto(f"{app_server}/trained?weights={weights}")
        wait_for_app_run(page)
        said = [
            line
            for line in main_text(page).splitlines()
            if "weights switch" in line and weights in line
        ]
        assert said, f"nothing on the Length generalization page names the switch at {weights}"
    page.goto(f"{app_server}/?weights=random")
    wait_for_app_run(page)
    lines = [line for line in main_text(page).splitlines() if re.search(r"no model", line, re.I)]
    assert lines, "the Overview does not say what its figures are drawn from"


PICKED_PAIR = """() => {
  const out = [];
  for (const gd of document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')) {
    const meta = (gd.data && gd.data[0] && gd.data[0].meta) || {};
    const clip = meta.clip === undefined ? null : meta.clip;  // rows are table rows
    for (const s of (gd.layout && gd.layout.shapes) || []) {
      if (s.name === 'picked pair') out.push([(s.x0 + s.x1) / 2, (s.y0 + s.y1) / 2,
                                              s.x1 - s.x0, s.y1 - s.y0, clip]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("stem", ["basics", "multihead", "absolute", "trained"])
def test_the_picked_pair_is_outlined_and_its_distance_written(
    app_server: str, page: Page, wait_for_app_run, stem: str
) -> None:
    # Attention basics draws 2 outputs of the copy model and a worked example of 3 queries:
    # (1, 3) lies on both ((3, 1) on neither, so nothing there may outline it)
    i, j = (1, 3) if stem == "basics" else (3, 1)
    page.set_viewport_size({"width": 1440, "height": 1000})
    page.goto(f"{app_server}/{stem}?i={i}&j={j}")
    wait_for_app_run(page)
    expect(page.locator('[data-testid="stPlotlyChart"] .main-svg').first).to_be_visible(
        timeout=TIMEOUT_MS
    )
    page.wait_for_timeout(500)  # charts below the fold draw a moment later
    assert f"j - i = {j - i}" in main_text(page)  # the page's own words, not only the sidebar's
    outlines = page.evaluate(PICKED_PAIR)
    assert outlines, f"no figure of {stem} outlines the pair"
    cells = [(x, y) for x, y, w, h, clip in outlines if w == h == 1]
    rows = [(y, clip) for x, y, w, h, clip in outlines if h == 1 and w != 1]
    # every outline is the pair's cell, the row of position i or j where only one is drawn, or
    # in a table of clip distance k the pair's row clip(j - i, k) + k
    assert all(cell == (j, i) for cell in cells), cells
    for y, clip in rows:
        assert y == (max(-clip, min(clip, j - i)) + clip if clip is not None else y), rows
        assert clip is not None or y in (i, j), rows
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
