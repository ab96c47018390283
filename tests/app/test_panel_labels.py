"""Short panels as a learner reads them: every row drawn at least 10 px tall and labelled
(plotly's automatic ticks had shown "T e e a" for "The exam", and tensor2tensor's (8, 32)
query slices and the (8, 128) sinusoid had rows 3-5 px tall)."""

from __future__ import annotations

import re

import pytest

from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of

ROW_LEAST_PX = 10  # a line of the smallest label type (8 px) and a gap: a row a learner can see


def panel_axes(layout: dict) -> list[tuple[dict, dict]]:
    """(x axis, y axis) of every panel of a panel-grid figure."""
    names = sorted(n for n in layout if re.fullmatch(r"yaxis\d*", n))
    return [(layout["x" + n[1:]], layout[n]) for n in names]


def row_px(layout: dict, y_axis: dict) -> float:
    """Drawn height of one row of a panel, from the figure's size, margins and the axis."""
    plot_h = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    rows = abs(y_axis["range"][0] - y_axis["range"][1])
    return plot_h * (y_axis["domain"][1] - y_axis["domain"][0]) / rows


@pytest.mark.parametrize(
    ("page", "query", "key"),
    [
        ("attention", {}, "attention_output"),  # the output split: (8, 32) on the trained model
        ("multihead", {}, "multihead_qkv"),  # x and Q: (8, 128)
        ("multihead", {}, "multihead_split"),
        ("logits", {}, "t2t_q"),  # tensor2tensor's "1 queries": four (8, 32) slices
        ("absolute", {"n": "8"}, "sinusoidal_encoding"),  # (8, 128)
    ],
)
def test_every_row_of_a_short_panel_is_drawn_and_labelled(page, query, key) -> None:
    at = open_page(page, weights="trained", **query)
    assert_clean(at)
    layout = chart_spec(at, key)["layout"]
    for _, y_axis in panel_axes(layout):
        low, high = sorted(y_axis["range"])
        rows = list(range(round(low + 0.5), round(high + 0.5)))
        assert len(rows) <= 40
        assert row_px(layout, y_axis) >= ROW_LEAST_PX, (key, row_px(layout, y_axis))
        # explicit ticks on every row: plotly's automatic ones thin a short axis
        assert y_axis["tickmode"] == "array", key
        assert list(array_of(y_axis["tickvals"]).astype(int)) == rows, key
