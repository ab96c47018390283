"""In Chromium: on a server that has just started, the browser asks for the chart code while
the server still computes the first view, at the address Streamlit itself loads it from (also
under a page's own path), and the element that asks takes no room on the page; and every map
keeps its left margin: plotly's automargin never widens it (which draws the chart again)."""

from __future__ import annotations

from playwright.sync_api import Page

# when an element container of a chart (Streamlit classes it st-key-<key>) first appears
FIRST_CHART_JS = r"""
(() => {
  window.__firstChart = null;
  new MutationObserver(() => {
    if (window.__firstChart === null && document.querySelector('[class*="st-key-chart_"]')) {
      window.__firstChart = performance.now();
    }
  }).observe(document, {childList: true, subtree: true});
})();
"""


def test_the_chart_code_is_fetched_before_the_first_chart(
    fresh_app_server: str, page: Page, wait_for_app_run
) -> None:
    page.add_init_script(FIRST_CHART_JS)
    # the landing page: a deep link into a server that has just started runs its page file
    # alone once (Streamlit's pages/ folder), torch imported before app.py asks for the code
    page.goto(fresh_app_server)
    wait_for_app_run(page)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=30_000)
    fetched = page.evaluate(
        "performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/PlotlyChart.')).map(e => [e.name, e.startTime])"
    )
    assert len(fetched) == 1, f"the chart code was fetched from {len(fetched)} addresses"
    name, started = fetched[0]
    assert name.startswith(f"{fresh_app_server}/static/js/PlotlyChart.")
    first_chart = page.evaluate("window.__firstChart")
    # the server imports torch (over a second) between the two; drawn lazily, as Streamlit
    # does without the early import, the code is asked for a few ms before the first chart
    print(f"chart code asked for {first_chart - started:.0f} ms before the first chart")
    assert first_chart - started > 300, (started, first_chart)
    box = page.locator('[data-testid="stElementContainer"]:has(#chart-code)')
    assert box.count() == 1 and not box.is_visible()


def test_a_page_under_a_path_fetches_the_chart_code_once(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/attention")
    wait_for_app_run(page)
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=30_000)
    fetched = page.evaluate(
        "performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('/PlotlyChart.')).map(e => e.name)"
    )
    assert len(fetched) == 1, fetched  # Streamlit's own import found the module loaded
    assert fetched[0].startswith(f"{app_server}/static/js/PlotlyChart."), fetched
    assert page.locator("#chart-code").count() == 1


def test_no_map_margin_is_widened(app_server: str, page: Page, wait_for_app_run) -> None:
    # a margin plotly's automargin widens is a second draw of the whole chart (2-5x the time):
    # the maps' own left margin holds their y axis (explorer/figures/ticks.py, y_axis_margin)
    for path in ("/", "/lookup", "/logits?n=1024", "/attention"):
        page.goto(f"{app_server}{path}")
        wait_for_app_run(page)
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=30_000)
        page.wait_for_timeout(500)
        margins = page.evaluate(
            "Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".filter(gd => gd.data.length && gd.data[0].type === 'heatmap')"
            ".map(gd => [gd.layout.margin.l, gd._fullLayout._size.l])"
        )
        assert margins, f"{path} draws no map"
        for given, drawn in margins:
            assert drawn == given, f"{path}: left margin {given} px widened to {drawn} px"
