"""Figures of the trained models: the data they are given, drawn as documented."""

import numpy as np
import pytest

from explorer.frame import screen
from explorer.stories.generalization import plots
from explorer.stories.generalization.plots import (
    generalization_figure,
    loss_figure,
    prediction_figure,
)


def test_generalization_figure_draws_one_line_per_model_and_metric():
    lengths = np.array([8, 16, 32])
    curves = {
        "relative": {"token_acc": np.ones(3), "seq_acc": np.ones(3)},
        "absolute": {"token_acc": np.array([1.0, 1.0, 0.5])},
    }
    fig = generalization_figure(lengths, curves, train_max_len=16, train_min_len=4)
    names = [trace.name for trace in fig.data]
    assert names == [
        "relative, token accuracy",
        "relative, sequence accuracy",
        "absolute, token accuracy",
    ]
    np.testing.assert_array_equal(fig.data[2].y, [1.0, 1.0, 0.5])
    assert fig.data[1].line.dash == "dot"
    assert (fig.layout.shapes[0].x0, fig.layout.shapes[0].x1) == (4, 16)  # training lengths


def test_loss_figure_is_on_a_log_scale():
    fig = loss_figure({"relative": (np.array([1, 2]), np.array([2.0, 0.5]))})
    assert fig.layout.yaxis.type == "log"
    np.testing.assert_array_equal(fig.data[0].y, [2.0, 0.5])


def test_prediction_figure_marks_right_and_wrong_positions():
    fig = prediction_figure(np.array([5, 6, 7]), np.array([0, 5, 6]), np.array([0, 5, 9]))
    z = np.asarray(fig.data[0].z)
    np.testing.assert_array_equal(z[2], [1.0, 1.0, 0.0])
    assert np.isnan(z[:2]).all()  # input and target rows carry text only
    assert [list(row) for row in fig.data[0].text] == [
        ["5", "6", "7"],
        ["·", "5", "6"],
        ["·✓", "5✓", "9✗"],  # right and wrong by a mark as well as by colour
    ]


@pytest.mark.parametrize(("phone", "n"), [(False, 32), (False, 128), (True, 32), (True, 16)])
def test_prediction_strip_gives_every_id_room_and_wraps(monkeypatch, phone, n):
    """Each cell is wide enough for its id in 10 px type and a gap, on a laptop and on a
    phone's 350 px (ids had run together there: "15109 114108148"); a long strip takes several
    lines, each position drawn once, the figure no wider than the screen."""
    monkeypatch.setattr(screen, "is_phone", lambda: phone)
    ids = np.arange(n) % 15 + 1  # one and two digits, as the trained models' ids
    fig = plots.prediction_figure(ids, ids, ids)
    assert fig.layout.width is not None, "a strip as wide as the container squeezes its cells"
    assert fig.layout.width <= (screen.PHONE_WIDTH if phone else 980)
    drawn = np.concatenate([np.asarray(t.x) for t in fig.data])
    np.testing.assert_array_equal(drawn, np.arange(n))
    plot_w = fig.layout.width - fig.layout.margin.l - fig.layout.margin.r
    for t, trace in enumerate(fig.data):
        axis = fig.layout["xaxis" if t == 0 else f"xaxis{t + 1}"]
        cell_px = plot_w / (axis.range[1] - axis.range[0])
        widest = max(len(v) for row in trace.text for v in row)
        assert cell_px >= 0.6 * 10 * widest + 4, (t, cell_px)
