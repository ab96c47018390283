"""One picked pair in a real Chromium: a click on any (i, j) cell picks it, the sidebar and the
URL follow, every figure outlines it, and the pick survives a change of page."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.charts import settled_box

TIMEOUT_MS = 30_000
OUTLINE = "rgb(242, 183, 1)"  # explorer.pair.marks.INK


def outline(page: Page, chart: str):
    """The pair's outline (its inner stroke) on the chart with key ``chart_<chart>``."""
    figure = page.locator(f".st-key-chart_{chart}")
    return figure.locator(f'.shapelayer path[style*="{OUTLINE}"]')


def test_a_click_on_a_cell_picks_the_pair_everywhere(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/lookup?weights=random&n=8&i=5&j=3")
    wait_for_app_run(page)
    box = settled_box(outline(page, "index"))
    # one cell to the left is key j = 2, one cell down query i = 6
    page.mouse.click(box["x"] - box["width"] / 2, box["y"] + box["height"] * 1.5)
    page.wait_for_url(re.compile(r"[?&]j=2"), timeout=TIMEOUT_MS)
    page.wait_for_url(re.compile(r"[?&]i=6"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_role("spinbutton", name="query i")).to_have_value("6", timeout=TIMEOUT_MS)
    expect(sidebar.get_by_role("spinbutton", name="key j")).to_have_value("2")
    # every pair figure of the page outlines the new pair, the tables their row clip(-4, 2) + 2
    for chart in ("distance", "index", "tables"):
        expect(outline(page, chart).first).to_be_visible(timeout=TIMEOUT_MS)
    expect(sidebar.get_by_text("j - i = -4, table row clip(-4, 2) + 2 = 0.")).to_be_visible()
    # the pick survives a change of page: the Attention page opens on it
    page.get_by_role("link", name="Attention", exact=True).click()
    page.wait_for_url(re.compile(r"/attention\?.*i=6"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    expect(outline(page, "attention_heads").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text(re.compile(r"Picked pair: query i = 6"))).to_be_visible()
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_every_cell_answers_with_one_marker_drawn(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    """The click layer draws one of its 256 markers, and a cell far from it still shows its
    own hover label and is picked by a click (plotly.js finds the point in the data)."""
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/lookup?weights=random&n=16&k=3")
    wait_for_app_run(page)
    chart = page.locator(".st-key-chart_index")
    settled_box(chart.locator(".nsewdrag").first)
    expect(chart.locator(".scatterlayer .point")).to_have_count(1)
    # the centre of cell (i = 11, j = 3) in page pixels, from the chart's own axes
    x, y = chart.locator(".js-plotly-plot").evaluate(
        """gd => { const L = gd._fullLayout, r = gd.getBoundingClientRect();
          return [r.left + L.xaxis._offset + L.xaxis.l2p(3),
                  r.top + L.yaxis._offset + L.yaxis.l2p(11)]; }"""
    )
    page.mouse.move(x, y)
    label = chart.locator(".hovertext")
    expect(label).to_contain_text(re.compile(r"i = 11\b.*j = 3\b"), timeout=TIMEOUT_MS)
    page.mouse.click(x, y)
    page.wait_for_url(re.compile(r"[?&]i=11(&|$)"), timeout=TIMEOUT_MS)
    page.wait_for_url(re.compile(r"[?&]j=3(&|$)"), timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    expect(outline(page, "index").first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
