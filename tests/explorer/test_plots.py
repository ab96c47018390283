"""explorer.figures.plots: conventions every chart follows."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.plots import (
    TICK_LABELS_MAX,
    escape_label,
    heatmap,
    pair_customdata,
)


def test_returns_a_figure_with_float32_typed_z_and_queries_top_down() -> None:
    z = np.arange(6, dtype=np.float64).reshape(2, 3)
    fig = heatmap(z)
    assert isinstance(fig, go.Figure)
    assert fig.data[0].z.dtype == np.float32
    assert fig.layout.yaxis.range == (1.5, -0.5)  # row 0 at the top
    assert fig.layout.xaxis.side == "top"
    spec = json.loads(fig.to_json())
    assert isinstance(spec["data"][0]["z"], dict) and "bdata" in spec["data"][0]["z"]
    np.testing.assert_array_equal(np.asarray(fig.data[0].z), z.astype(np.float32))


def test_logits_diverge_around_zero_and_weights_take_the_log_weights_scale() -> None:
    logits = heatmap(np.array([[-1.0, 3.0]]))
    assert logits.data[0].zmid == 0 and logits.data[0].zmin == -3 and logits.data[0].zmax == 3
    weights = heatmap(np.array([[0.2, 0.8]]), scale="weights")
    assert weights.data[0].zmin == 0 and weights.data[0].zmid is None
    assert weights.data[0].colorscale != logits.data[0].colorscale
    assert weights.data[0].showscale is False  # its bar is the log one, a trace of its own
    bar = weights.data[-1].marker
    assert bar.showscale and bar.cmax == pytest.approx(np.log10(0.8))


def test_masked_cells_stay_nan_so_they_are_blank() -> None:
    z = np.array([[1.0, np.nan], [0.5, 0.5]])
    fig = heatmap(z, scale="weights")
    assert np.isnan(fig.data[0].z[0, 1]) and fig.data[0].hoverongaps is False


def test_tick_labels_only_when_few_and_always_escaped() -> None:
    labels = ["<b>x</b>", "a&b", "averyveryverylongtoken"]
    fig = heatmap(np.zeros((3, 3)), x_labels=labels, y_labels=labels)
    assert fig.layout.xaxis.ticktext == ("&lt;b&gt;x&lt;/b&gt;", "a&amp;b", "averyveryve…")
    many = [f"t{i}" for i in range(TICK_LABELS_MAX + 1)]
    crowded = heatmap(np.zeros((len(many), len(many))), x_labels=many, y_labels=many)
    assert crowded.layout.xaxis.ticktext is None and crowded.layout.xaxis.tickmode == "auto"
    assert escape_label("<script>") == "&lt;script&gt;"


def test_pair_hover_carries_distance_and_index() -> None:
    index = np.array([[1, 2], [0, 1]])
    custom = pair_customdata(index, row_offset=3)
    assert custom.shape == (2, 2, 2) and custom.dtype == np.float32
    assert custom[1, 0].tolist() == [-4.0, 0.0]  # query 4, key 0: j - i = -4, index 0
    fig = heatmap(np.zeros((2, 2)), customdata=custom, row_offset=3)
    template = fig.data[0].hovertemplate
    for part in ("i=", "j=", "j - i=", "index=", "value="):
        assert part in template
    assert tuple(fig.data[0].y) == (3, 4)


def test_cell_text_only_for_small_matrices_and_escaped() -> None:
    small = heatmap(np.zeros((2, 2)), cell_text=np.array([["<i>", "1"], ["2", "3"]]))
    assert small.data[0].text[0][0] == "&lt;i&gt;"
    big = heatmap(np.zeros((40, 40)), cell_text=np.full((40, 40), "1"))
    assert big.data[0].text is None


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match="2-D"):
        heatmap(np.zeros(3))
    with pytest.raises(ValueError, match="scale"):
        heatmap(np.zeros((2, 2)), scale="rainbow")


def test_labels_are_indexed_by_position_in_a_window() -> None:
    labels = [f"k{j}" for j in range(20)]
    fig = heatmap(np.zeros((3, 3)), x_labels=labels, y_labels=labels, row_offset=5, col_offset=5)
    assert list(fig.layout.xaxis.ticktext) == ["k5", "k6", "k7"]
    assert list(fig.layout.yaxis.tickvals) == [5, 6, 7]
    with pytest.raises(ValueError, match="3 labels cannot name positions 5-7"):
        heatmap(np.zeros((3, 3)), x_labels=labels[5:8], col_offset=5)  # sliced: off by 5
