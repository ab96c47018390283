"""A sweep of control extremes over the heavier pages: no exception, no error box, sane charts."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.frame.params import DISPLAY_MAX, N_MAX
from tests.app.conftest import assert_clean, chart_keys, chart_spec, chart_z, open_page
from tests.app.panels import (
    PANEL_TYPES,
    panel_count,
    panel_positions,
    panel_z,
    trace_pixels,
    trace_z,
)

DISPLAY_ROWS = 2048  # the tallest matrix a chart may carry (the skew input is (W, 2W - 1))

EXTREMES = {
    "n=1": {"n": "1"},
    "k=0": {"k": "0"},
    "k>n": {"n": "4", "k": "10"},
    "one head": {"heads": "1", "d_model": "8"},
    "causal with padding": {"mask": "causal-padding", "pad": "3"},
    "pad = n": {"n": "5", "mask": "padding", "pad": "5"},
    "text of one token": {"text": "solo"},
}
PAGES = ("lookup", "logits", "skew", "attention", "absolute", "family", "compare", "flex")


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("name", EXTREMES)
def test_extreme_views_render(page: str, name: str) -> None:
    at = open_page(page, **EXTREMES[name])
    assert_clean(at)
    if page == "flex" and name == "pad = n":  # a padding mask over every key: said, not drawn
        assert "valid" in " ".join(w.value for w in at.warning).replace("\\", "")
        return
    assert not at.warning or name == "pad = n"
    assert chart_keys(at)
    if page == "attention":
        weights = chart_z(at, "attention_weights")
        allowed = np.isfinite(weights)
        sums = np.nansum(weights, axis=1)
        rows_with_keys = allowed.any(axis=1)
        np.testing.assert_allclose(sums[rows_with_keys], 1.0, atol=1e-5)
        if name == "pad = n":
            assert not allowed.any()  # every key is padding: every cell blank
            for panel in range(panel_count(at, "attention_output")):  # content, relative, z
                np.testing.assert_array_equal(panel_z(at, "attention_output", panel), 0.0)


@pytest.mark.parametrize("page", ("overview", *PAGES))
def test_largest_n_renders_a_window(page: str) -> None:
    at = open_page(page, n=str(N_MAX), d_model="128", heads="8", mask="causal")
    assert_clean(at)
    for key in chart_keys(at):  # the skew's steps are up to (W+1, W) or (W, 2W-1); t2t's taller
        for panel, trace in enumerate(chart_spec(at, key)["data"]):
            if trace["type"] not in PANEL_TYPES:  # the colour bar, an overlay
                continue
            # what travels: a heatmap's z, or a PNG of at most DISPLAY_MAX pixels a side
            if trace["type"] == "image":
                carried = trace_pixels(trace).shape[:2]
                assert max(carried) <= DISPLAY_MAX, (key, panel, carried)
            else:
                carried = trace_z(trace).shape
            # what it shows: a window of the (N_MAX, N_MAX) matrix, never all of it
            for rows, cols in (carried, panel_positions(at, key, panel)):
                assert rows * cols <= DISPLAY_ROWS * DISPLAY_MAX, (key, panel, rows, cols)
                assert max(rows, cols) <= DISPLAY_ROWS, (key, panel, rows, cols)
    captions = [c.value.replace("\\", "") for c in at.caption]  # drop the markdown escapes
    if page == "overview":  # draws the first corner of the table and says so
        assert any(f"of the ({N_MAX}, {N_MAX}) table" in c for c in captions), captions
    else:
        assert any(f"n = {N_MAX} is above {DISPLAY_MAX}" in c for c in captions), captions
