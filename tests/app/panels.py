"""Decode one panel of a panel-grid figure (trace t is panel t) from an AppTest run.

A small panel is a heatmap whose z travels as a typed array; a large one is a colour-mapped PNG
(an image trace): :func:`panel_pixels` decodes it and :func:`panel_positions` says how many
positions of the matrix it covers.
"""

from __future__ import annotations

import base64
import io
import math

import numpy as np
from PIL import Image
from streamlit.testing.v1 import AppTest

from tests.app.conftest import chart_spec

PANEL_TYPES = ("heatmap", "image")


def panel_traces(at: AppTest, key: str) -> list[dict]:
    """Every panel trace of the chart ``chart_<key>`` (the colour bar left out), in order."""
    return [trace for trace in chart_spec(at, key)["data"] if trace["type"] in PANEL_TYPES]


def panel_z(at: AppTest, key: str, panel: int = 0) -> np.ndarray:
    """The z matrix of panel ``panel`` of the chart ``chart_<key>`` (a heatmap trace)."""
    trace = chart_spec(at, key)["data"][panel]
    assert trace["type"] == "heatmap", f"panel {panel} of {key} is a {trace['type']}"
    return trace_z(trace)


def array_of(value: dict | list) -> np.ndarray:
    """A trace's x or y as numpy: a plotly typed array (base64 and dtype) or a plain list."""
    if isinstance(value, list):  # integers stay integers; null (NaN in JSON) becomes NaN
        plain = np.asarray(value)
        return plain if plain.dtype.kind in "iu" else np.asarray(value, dtype=float)
    return np.frombuffer(base64.b64decode(value["bdata"]), np.dtype(value["dtype"]))


def trace_z(trace: dict) -> np.ndarray:
    """The z matrix of a heatmap trace."""
    z = trace["z"]
    assert isinstance(z, dict), "z must travel as a typed array, not a list"
    shape = [int(s) for s in str(z["shape"]).split(",")]
    return np.frombuffer(base64.b64decode(z["bdata"]), np.dtype(z["dtype"])).reshape(shape)


def trace_pixels(trace: dict) -> np.ndarray:
    """The (height, width, 3) uint8 pixels of an image trace's PNG data URI."""
    header, data = trace["source"].split(",", 1)
    assert header == "data:image/png;base64", header
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))


def panel_pixels(at: AppTest, key: str, panel: int = 0) -> np.ndarray:
    """The pixels of panel ``panel`` of the chart ``chart_<key>`` (an image trace)."""
    trace = chart_spec(at, key)["data"][panel]
    assert trace["type"] == "image", f"panel {panel} of {key} is a {trace['type']}"
    return trace_pixels(trace)


def trace_positions(trace: dict) -> tuple[int, int]:
    """(rows, cols) of matrix positions a panel trace covers: a heatmap's z, or an image's
    pixels times its block size (the last block of a pooled image may be partial)."""
    if trace["type"] == "heatmap":
        return trace_z(trace).shape  # type: ignore[return-value]
    height, width, _ = trace_pixels(trace).shape
    return height * int(trace.get("dy", 1)), width * int(trace.get("dx", 1))


def panel_positions(at: AppTest, key: str, panel: int = 0) -> tuple[int, int]:
    """(rows, cols) of the matrix that panel ``panel`` of ``chart_<key>`` shows, read from its
    axes' ranges; checked against what the trace carries (z, or pixels times block size)."""
    spec = chart_spec(at, key)
    trace = spec["data"][panel]
    assert trace["type"] in PANEL_TYPES, f"panel {panel} of {key} is a {trace['type']}"
    x_axis = spec["layout"]["xaxis" + trace.get("xaxis", "x")[1:]]
    y_axis = spec["layout"]["yaxis" + trace.get("yaxis", "y")[1:]]
    rows, cols = (round(abs(a["range"][1] - a["range"][0])) for a in (y_axis, x_axis))
    carried = trace_positions(trace)
    block = (int(trace.get("dy", 1)), int(trace.get("dx", 1)))
    for side, have, step in zip((rows, cols), carried, block, strict=True):
        assert math.ceil(side / step) * step == have, (key, panel, (rows, cols), carried)
    return rows, cols


def panel_count(at: AppTest, key: str) -> int:
    """Panels of a panel-grid figure (its traces less the colour bar)."""
    return len(panel_traces(at, key))
