"""A page's download as AppTest sees it: the zip its button would deliver, built by the same
callable the button hands Streamlit, and the arrays its charts draw."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable
from unittest import mock

import numpy as np
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from tests.app.conftest import open_page
from tests.app.panels import array_of, trace_z


def open_with_download(page: str, **query: str) -> tuple[AppTest, dict[str, bytes]]:
    """Open ``page`` at ``query`` and return the run and the files of its one download."""
    built: list[Callable[[], bytes]] = []
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):  # the button's own callable, for a click
        built.append(data_callable)
        return real(self, data_callable, *args, **kwargs)

    with mock.patch.object(MediaFileManager, "add_deferred", keep):
        at = open_page(page, **query)
    assert built, f"{page}: no download button"
    with zipfile.ZipFile(io.BytesIO(built[-1]())) as archive:
        return at, {name: archive.read(name) for name in archive.namelist()}


def csv_arrays(files: dict[str, bytes]) -> dict[str, np.ndarray]:
    """Each CSV's numbers (its header row and row labels left out; a blank cell is NaN)."""
    arrays = {}
    for name, data in files.items():
        if not name.endswith(".csv"):
            continue
        rows = list(csv.reader(io.StringIO(data.decode())))[1:]
        try:
            arrays[name] = np.array(
                [[float(cell) if cell else np.nan for cell in row[1:]] for row in rows]
            )
        except ValueError:  # a table of words (tokens.csv)
            continue
    return arrays


def params_json(files: dict[str, bytes]) -> dict:
    return json.loads(files["params.json"])


def drawn_arrays(at: AppTest) -> list[tuple[str, np.ndarray]]:
    """(chart key and trace, its numbers) for every trace that carries data a reader reads off
    the chart: a heatmap's z, a line's or a bar's values. Click layers (the "cells" markers,
    any trace of transparent markers: they draw nothing) and images (exact values travel in
    the heatmap inset) are left out."""
    drawn = []
    for chart in at.get("plotly_chart"):
        key = chart.proto.id.rsplit("-", 1)[-1]
        for number, trace in enumerate(json.loads(chart.proto.spec)["data"]):
            name = f"{key}[{number}] {trace.get('name', '')}".strip()
            if trace.get("name") == "cells" or trace["type"] == "image" or _clicks_only(trace):
                continue
            if trace["type"] == "heatmap" and isinstance(trace.get("z"), dict):
                drawn.append((name, trace_z(trace).astype(np.float64)))
            elif trace["type"] in ("scatter", "bar") and "y" in trace:
                horizontal = trace.get("orientation") == "h"
                values = array_of(trace["x"] if horizontal else trace["y"])
                if values.dtype.kind in "fiu" and values.size > 1:
                    drawn.append((name, values.astype(np.float64)))
    return drawn


def _clicks_only(trace: dict) -> bool:
    """A click layer: markers and no line, every marker transparent (pair.marks.click_marker)."""
    marker = trace.get("marker") or {}
    return trace.get("mode") == "markers" and marker.get("color") == "rgba(0,0,0,0)"


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    # the CSVs write 7 significant digits; NaN (a masked cell) is blank in both
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True))


def found_in(values: np.ndarray, tables: dict[str, np.ndarray]) -> str | None:
    """The CSV (and where in it) that holds ``values``: a whole table (or its transpose), or
    for a line, one of its rows or columns; None when no CSV does.

    A matrix no table holds whole may be a strip of one value per character or position,
    wrapped onto lines of cells (the last line's tail blank) or beside blank rows that carry
    text only: its drawn cells, read row by row, are then one row or column of a CSV.
    """
    if values.ndim == 1:
        return _line_in(values, tables)
    for name, table in tables.items():
        if _close(values, table) or _close(values, table.T):
            return name
    cells = values[~np.isnan(values)]  # row-major: the strip's reading order
    where = _line_in(cells, tables) if cells.size > 1 else None
    return None if where is None else f"{where}, read row by row"


def _line_in(values: np.ndarray, tables: dict[str, np.ndarray]) -> str | None:
    for name, table in tables.items():
        for axis, lines in (("row", table), ("column", table.T)):
            for index, line in enumerate(lines):
                if _close(values, line):
                    return f"{name} {axis} {index}"
    return None
