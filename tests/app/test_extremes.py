"""A sweep of control extremes over the heavier pages: no exception, no error box, sane charts."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.compute import DISPLAY_ROWS
from explorer.params import DISPLAY_MAX, N_MAX
from tests.app.conftest import assert_clean, chart_keys, chart_z, open_page

EXTREMES = {
    "n=1": {"n": "1"},
    "k=0": {"k": "0"},
    "k>n": {"n": "4", "k": "10"},
    "one head": {"heads": "1", "d_model": "8"},
    "causal with padding": {"mask": "causal-padding", "pad": "3"},
    "pad = n": {"n": "5", "mask": "padding", "pad": "5"},
    "text of one token": {"text": "solo"},
}
PAGES = ("lookup", "logits", "skew", "attention", "absolute")


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("name", EXTREMES)
def test_extreme_views_render(page: str, name: str) -> None:
    at = open_page(page, **EXTREMES[name])
    assert_clean(at)
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
            np.testing.assert_array_equal(chart_z(at, "attention_output"), 0.0)


@pytest.mark.parametrize("page", ("overview", *PAGES))
def test_largest_n_renders_a_window(page: str) -> None:
    at = open_page(page, n=str(N_MAX), d_model="128", heads="8", mask="causal")
    assert_clean(at)
    for key in chart_keys(at):  # the skew's steps are up to (W+1, W) or (W, 2W-1); t2t's taller
        rows, cols = chart_z(at, key).shape
        assert rows * cols <= DISPLAY_ROWS * DISPLAY_MAX and max(rows, cols) <= DISPLAY_ROWS, key
    assert any(f"n = {N_MAX} is above {DISPLAY_MAX}" in c.value for c in at.caption)
