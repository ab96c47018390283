"""Every page's run starts by asking the browser for Streamlit's chart code
(explorer/frame/chart_code.py): the run's first element imports the plotly module that the
installed Streamlit serves, before anything of the page is drawn."""

from __future__ import annotations

import json
import re

import pytest

from explorer.frame.chart_code import STATIC, chart_module
from explorer.frame.navigation import PAGES as NAVIGATION
from tests.app.conftest import assert_clean, open_page


def test_the_installed_streamlit_has_one_plotly_module() -> None:
    # a Streamlit build that renames or splits it would silently lose the early import
    module = chart_module()
    assert module is not None, f"no single PlotlyChart.*.js in {STATIC}"
    assert (STATIC / module).stat().st_size > 1_000_000  # plotly.js itself, not a stub


@pytest.mark.parametrize("page", [page.stem for page in NAVIGATION])
def test_a_run_starts_with_the_chart_code(page: str) -> None:
    at = open_page(page, weights="trained")
    assert_clean(at)
    first = next(iter(at.main.children.values()))
    assert first.type == "html", f"{page}: the run starts with a {first.type}"
    assert first.proto.unsafe_allow_javascript
    imported = re.findall(r'import\(new URL\("([^"]+)"', first.proto.body)
    assert imported == [chart_module()]
    assert (STATIC / imported[0]).is_file()


@pytest.mark.parametrize("page", [page.stem for page in NAVIGATION])
def test_every_chart_draws_its_tick_labels_unmeasured(page: str) -> None:
    # plotly.js measures every label of an axis that may hide them (explorer/figures/template.py)
    at = open_page(page, weights="trained")
    assert_clean(at)
    charts = at.get("plotly_chart")
    assert charts, f"{page} draws no chart"
    for chart in charts:
        spec = json.loads(chart.proto.spec)
        template = spec["layout"]["template"]
        for axis in ("xaxis", "yaxis"):
            assert template["layout"][axis]["ticklabeloverflow"] == "allow", (page, chart.proto.id)
        for trace in spec["data"]:  # a colour bar has an axis of its own
            kind = trace.get("type", "scatter")
            on_marker = kind != "heatmap"
            holder = trace.get("marker", {}) if on_marker else trace
            path = ("marker",) if on_marker else ()
            if holder.get("showscale", kind == "heatmap"):
                default = template["data"][kind][0]
                for step in (*path, "colorbar"):
                    default = default.get(step, {})
                own = holder.get("colorbar", {}).get("ticklabeloverflow")
                assert (own or default.get("ticklabeloverflow")) == "allow", (page, kind)
