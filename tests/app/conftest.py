"""AppTest helpers: run the app through the proxy entry script and decode plotly charts."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from explorer.frame.navigation import PAGES as NAVIGATION

ENTRY = Path(__file__).resolve().parent / "harness" / "entry.py"
# The pages the shared page tests open; Length generalization, Speed & memory and Predict have their
# own tests (their views do not follow the sidebar's n, k and mask).
PAGES = tuple(page.stem for page in NAVIGATION if page.stem not in ("trained", "speed", "predict"))


def open_page(page: str = "overview", **query: str) -> AppTest:
    """Run app.py with ``query`` in the URL, then switch to ``page`` (a file stem in pages/).

    Random weights unless ``weights`` is given: most tests check a view against its seeded
    definition (tests/app/test_trained_views.py checks trained views against the model).
    """
    query.setdefault("weights", "random")
    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    if page != "overview":  # the first run is already on the page, like opening its link
        at.switch_page(f"../../../pages/{page}.py")
    return at.run()


def chart_z(at: AppTest, key: str) -> np.ndarray:
    """The z matrix of the chart with key ``chart_<key>``, decoded from the plotly spec."""
    trace = chart_spec(at, key)["data"][0]
    assert "z" in trace, f"chart_{key} starts with a {trace['type']}: see tests/app/panels.py"
    z = trace["z"]
    assert isinstance(z, dict), "z must travel as a typed array, not a list"
    raw = base64.b64decode(z["bdata"])
    shape = [int(s) for s in str(z["shape"]).split(",")]
    return np.frombuffer(raw, dtype=np.dtype(z["dtype"])).reshape(shape)


def chart_spec(at: AppTest, key: str) -> dict:
    """The plotly JSON of the chart created with ``key="chart_<key>"``."""
    charts = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-chart_{key}")]
    assert charts, f"no chart with key chart_{key}; have {sorted(chart_keys(at))}"
    return json.loads(charts[0].proto.spec)


def chart_keys(at: AppTest) -> set[str]:
    return {c.proto.id.rsplit("chart_", 1)[-1] for c in at.get("plotly_chart")}


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
