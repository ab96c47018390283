"""Decode one panel of a panel-grid figure (trace t is panel t) from an AppTest run."""

from __future__ import annotations

import base64

import numpy as np
from streamlit.testing.v1 import AppTest

from tests.app.conftest import chart_spec


def panel_z(at: AppTest, key: str, panel: int = 0) -> np.ndarray:
    """The z matrix of panel ``panel`` of the chart ``chart_<key>`` (a heatmap trace)."""
    trace = chart_spec(at, key)["data"][panel]
    assert trace["type"] == "heatmap", f"panel {panel} of {key} is a {trace['type']}"
    z = trace["z"]
    assert isinstance(z, dict), "z must travel as a typed array, not a list"
    shape = [int(s) for s in str(z["shape"]).split(",")]
    return np.frombuffer(base64.b64decode(z["bdata"]), np.dtype(z["dtype"])).reshape(shape)


def panel_count(at: AppTest, key: str) -> int:
    """Panels of a panel-grid figure (its traces less the colour bar)."""
    data = chart_spec(at, key)["data"]
    return sum(1 for trace in data if trace["type"] in ("heatmap", "image"))
