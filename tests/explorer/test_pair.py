"""The picked pair: its numbers against the core's attention, its window, its outlines."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

import relpos_core as rc
from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.scales import make_scale
from explorer.figures.token_view import token_view
from explorer.frame.params import DISPLAY_MAX, ViewParams
from explorer.pair.definition import Pair, window_for
from explorer.pair.facts import pair_facts
from explorer.pair.marks import (
    CLICK_CELLS_MAX,
    PAIR_AXES,
    clicked_pair,
    distance_shapes,
    pair_shapes,
)
from explorer.weights.example import example_inputs
from tests.app.panels import array_of

VIEWS = [
    ViewParams(n=7, k=2, d_model=16, heads=2, weights="random"),
    ViewParams(n=9, k=1, d_model=16, heads=2, mask="causal-padding", pad=2, weights="random"),
    ViewParams(n=6, k=3, d_model=32, heads=4, mask="padding", pad=2, seed=5, weights="random"),
]


@pytest.mark.parametrize("params", VIEWS, ids=lambda p: p.mask)
def test_every_number_of_every_pair_equals_the_cores_attention(params: ViewParams) -> None:
    inputs = example_inputs(params)
    trace = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v,
        mask=inputs.mask, causal=inputs.causal, method="loop", trace=True,
    )  # fmt: skip
    n, d, k = params.length, params.head_dim, params.k
    for head in range(params.heads):
        outputs = trace.output[0, head].double()  # (n, d): z_i of every query
        for i, j in itertools.product(range(n), repeat=2):
            facts = pair_facts(params, head, i, j)
            row = min(max(j - i, -k), k) + k
            assert facts.pair.table_row == row
            np.testing.assert_array_equal(facts.a_k, inputs.table_k[row].numpy())
            np.testing.assert_array_equal(facts.a_v, inputs.table_v[row].numpy())
            # the core's traced logits are unscaled; the explorer writes them as they enter
            assert facts.content == pytest.approx(
                float(trace.content_logits[0, head, i, j]) / math.sqrt(d), abs=1e-5
            )
            assert facts.relative == pytest.approx(
                float(trace.relative_logits[0, head, i, j]) / math.sqrt(d), abs=1e-5
            )
            assert facts.allowed == bool(trace.allowed[0, head, i, j])
            assert facts.weight == pytest.approx(float(trace.weights[0, head, i, j]), abs=1e-6)
            term = facts.weight * (inputs.v[0, head, j].double() + inputs.table_v[row].double())
            z = outputs[i]
            expected = float(term @ z / (z @ z)) if float(z @ z) > 0 else 0.0
            assert facts.share == pytest.approx(expected, abs=1e-5)
        for i in range(n):  # a row's shares are the parts of z_i along z_i: they sum to 1
            shares = sum(pair_facts(params, head, i, j).share for j in range(n))
            weights = pair_facts(params, head, i, 0).row_weight_sum
            assert shares == pytest.approx(1.0 if weights > 0 else 0.0, abs=1e-5)


def test_a_hidden_pair_says_which_mask_hides_it() -> None:
    params = VIEWS[1]  # causal, last 2 keys padding, n = 9
    assert "causal mask" in pair_facts(params, 0, 2, 5).why_hidden
    assert "padding" in pair_facts(params, 0, 8, 7).why_hidden
    facts = pair_facts(params, 1, 5, 2)
    assert facts.allowed and facts.why_hidden == "" and facts.weight > 0


def test_a_pair_outside_the_sequence_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"pair \(i, j\) must lie in \[0, 6\], got \(7, 0\)"):
        pair_facts(VIEWS[0], 0, 7, 0)


@pytest.mark.parametrize("n,win", [(600, 0), (600, 88), (1500, 400), (4096, 3000)])
def test_the_window_moves_to_centre_a_pair_it_does_not_show(n: int, win: int) -> None:
    params = ViewParams(n=n, win=win, weights="random")
    last = n - DISPLAY_MAX
    rng = np.random.default_rng(n + win)
    for i, j in rng.integers(0, n, size=(200, 2)):
        pair = Pair(int(i), int(j), 2)
        starts = [s for s in range(last + 1) if s <= min(i, j) and max(i, j) < s + DISPLAY_MAX]
        got = window_for(pair, params)
        if not starts:
            assert got is None
        elif params.window[0] in starts:  # already shown: the window stays
            assert got == params.window[0]
        else:  # of every start that shows both, the one whose centre is nearest the pair's
            centre = (min(i, j) + max(i, j)) / 2
            assert got in starts
            assert (
                abs(got + DISPLAY_MAX / 2 - centre)
                <= min(abs(s + DISPLAY_MAX / 2 - centre) for s in starts) + 0.5
            )


def box_centres(shapes: list[dict], ref: str) -> list[tuple[float, float]]:
    """(x, y) centres of the pair's outlines (drawn twice: halo and ink) on axes ``ref``."""
    return sorted(
        {
            ((s["x0"] + s["x1"]) / 2, (s["y0"] + s["y1"]) / 2)
            for s in shapes
            if s["type"] == "rect" and s["xref"] == ref
        }
    )


def test_the_pair_is_outlined_where_each_panel_holds_it() -> None:
    pair = Pair(i=13, j=10, k=2)
    square = np.zeros((8, 8), np.float32)
    panels = [
        Panel(square, row_offset=9, col_offset=9),  # positions 9..16: holds (13, 10)
        Panel(square, row_offset=0, col_offset=0),  # positions 0..7: does not
        Panel(np.zeros((5, 4), np.float32), y_symbol="row", x_symbol="channel"),  # a table
        Panel(np.zeros((8, 4), np.float32), row_offset=9, y_symbol="j", x_symbol="channel"),
    ]
    fig = panel_grid(panels, make_scale("diverging", [p.z for p in panels]))
    shapes = pair_shapes([t.to_plotly_json() for t in fig.data], pair.marks())
    assert box_centres(shapes, "x") == [(10.0, 13.0)]  # x = j, y = i
    assert box_centres(shapes, "x2") == []
    # the table: its whole row clip(j - i, k) + k = clip(-3, 2) + 2 = 0
    (table_row,) = {(s["y0"], s["y1"]) for s in shapes if s["xref"] == "x3"}
    assert table_row == (pair.table_row - 0.5, pair.table_row + 0.5) == (-0.5, 0.5)
    (key_row,) = {(s["y0"], s["y1"], s["x0"], s["x1"]) for s in shapes if s["xref"] == "x4"}
    assert key_row == (9.5, 10.5, -0.5, 3.5)  # key j = 10's row of a^K_i, every channel
    # the diagonal j - i = -3 through every cell of the first panel that has it
    (line,) = [s for s in shapes if s["type"] == "line" and s["xref"] == "x"]
    assert line["x0"] - line["y0"] == line["x1"] - line["y1"] == pair.distance
    assert (line["y0"], line["y1"]) == (12 - 0.5, 16 + 0.5)  # rows 12..16 have j = i - 3 >= 9


def test_every_cell_of_a_small_pair_panel_can_be_clicked_with_its_hover() -> None:
    z = np.arange(12, dtype=np.float32).reshape(3, 4)
    z[0, 3] = np.nan  # a masked cell
    panel = Panel(
        z, row_offset=2, col_offset=5, x_labels=list("abcdefghi"), y_labels=list("abcdefghi")
    )
    fig = panel_grid([panel], make_scale("diverging", [z])).to_plotly_json()
    (heat,) = [t for t in fig["data"] if t["type"] == "heatmap"]
    (cells,) = [t for t in fig["data"] if t.get("name") == "cells"]
    assert heat["meta"]["axes"] == PAIR_AXES and heat["hoverinfo"] == "skip"
    rows, cols = np.indices(z.shape)
    np.testing.assert_array_equal(array_of(cells["x"]), (cols + 5).ravel())
    np.testing.assert_array_equal(array_of(cells["y"]), (rows + 2).ravel())
    assert cells["text"][1 * 4 + 2] == 'i = 3 "d"<br>j = 7 "h"<br>value = 6'
    assert cells["text"][3].endswith("hidden by the mask")


def test_a_figure_with_too_many_cells_gets_no_click_markers() -> None:
    side = math.isqrt(CLICK_CELLS_MAX // 2) + 1  # two heatmaps, together over the limit
    z = np.zeros((side, side), np.float32)
    fig = panel_grid([Panel(z), Panel(z)], make_scale("diverging", [z]))
    assert [t.type for t in fig.data[:2]] == ["heatmap", "heatmap"]
    assert not [t for t in fig.data if t.name == "cells"]
    fig = panel_grid([Panel(z)], make_scale("diverging", [z]))  # one alone is within it
    assert [t for t in fig.data if t.name == "cells"]


def test_a_click_event_gives_the_cell_it_landed_on() -> None:
    event = {"selection": {"points": [{"x": 4, "y": 1, "curve_number": 3}, {"x": 7, "y": 2}]}}
    assert clicked_pair(event) == (2, 7)  # (i, j) = (y, x), the last point
    assert clicked_pair({"selection": {"points": []}}) is None
    assert clicked_pair(None) is None


def test_the_picked_distance_is_a_line_on_every_subplot() -> None:
    layout = {"xaxis": {}, "xaxis2": {}, "xaxis3": {}, "yaxis": {}}
    shapes = distance_shapes(layout, -5)
    assert [(s["xref"], s["yref"], s["x0"], s["x1"]) for s in shapes] == [
        ("x", "y domain", -5, -5), ("x2", "y2 domain", -5, -5), ("x3", "y3 domain", -5, -5)
    ]  # fmt: skip


def test_the_token_view_draws_the_picked_pair_whatever_its_weight() -> None:
    weights = torch.softmax(torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(1)), -1)
    weights[:, 3, 1] = 0.0  # too light for a line of its own
    view = token_view(weights.numpy(), list("abcde"), pair=(3, 1))
    (line,) = [t for t in view.figure.data if t.name == "picked pair (3, 1)"]
    assert list(line.x) == [0.0, 1.0] and list(line.y) == [3.0, 1.0]
    assert "head 0: α = 0" in line.hovertemplate and "head 1: α = 0" in line.hovertemplate
    assert not [t for t in token_view(weights.numpy(), list("abcde"), pair=(3, 9)).figure.data
                if str(t.name).startswith("picked")]  # fmt: skip
