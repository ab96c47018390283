"""explorer.figures.heatmaps and explorer.figures.token_view: shared scale, square cells,
images, hover."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from explorer.figures.heatmaps import IMAGE_SIDE, Panel, panel_grid
from explorer.figures.panel_traces import pool
from explorer.figures.scales import make_scale
from explorer.figures.ticks import CHAR_EM, LABELS_ALL_MAX, ROW_MIN_PX
from explorer.figures.token_view import token_view


def test_panels_share_one_scale_and_have_square_cells() -> None:
    a, b = np.array([[1.0, -2.0], [0.5, 0.0]]), np.array([[4.0, 0.0], [0.0, -1.0]])
    scale = make_scale("diverging", [a, b])
    assert (scale.zmin, scale.zmax) == (-4.0, 4.0)  # centred at 0, the largest |value|
    fig = panel_grid([Panel(a, title="head 0"), Panel(b, title="head 1")], scale)
    # two panels, the colour bar, and each panel's click markers
    assert [t.type for t in fig.data] == ["heatmap", "heatmap", "scatter", "scatter", "scatter"]
    assert [t.name for t in fig.data[2:]] == ["colour bar", "cells", "cells"]
    assert fig.data[0].zmin == fig.data[1].zmin == -4.0
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis2.scaleanchor == "x2"
    assert fig.layout.yaxis.range == (1.5, -0.5)  # row 0 at the top
    np.testing.assert_array_equal(fig.data[1].z, b.astype(np.float32))


def test_hover_names_position_and_token() -> None:
    z = np.zeros((2, 2))
    fig = panel_grid([Panel(z, x_labels=["the", "<b>"], y_labels=["the", "<b>"])],
                     make_scale("diverging", [z]))  # fmt: skip
    cells = fig.data[-1]  # the click markers carry the hover of a pair panel, row by row
    assert cells.name == "cells" and fig.data[0].hoverinfo == "skip"
    assert cells.text[1 * 2 + 0] == 'i = 1 "&lt;b&gt;"<br>j = 0 "the"<br>value = 0'


def test_weights_scale_is_logarithmic_from_a_floor() -> None:
    w = np.array([[0.5, 0.5], [0.9, 0.1]])
    scale = make_scale("weights", [w], n_keys=2)
    floor = scale.zmin_display
    assert np.isclose(floor, 0.05) and scale.zmax == np.float32(0.9)
    p = scale.position(np.array([floor, np.sqrt(floor * 0.9), 0.9, 0.001, np.nan]))
    np.testing.assert_allclose(p[:4], [0.0, 0.5, 1.0, 0.0], atol=1e-6)
    assert np.isnan(p[4])


def test_large_panels_travel_as_png_images_with_masked_cells_grey() -> None:
    n = IMAGE_SIDE + 72
    z = np.random.default_rng(0).normal(size=(n, n)).astype(np.float32)
    z[0, 0] = np.nan
    fig = panel_grid([Panel(z, row_offset=600, col_offset=600)], make_scale("diverging", [z]))
    image = fig.data[0]
    assert image.type == "image" and image.x0 == 600 and image.y0 == 600
    png = base64.b64decode(image.source.split(",", 1)[1])
    pixels = np.asarray(Image.open(io.BytesIO(png)))
    assert pixels.shape == (n, n, 3) and tuple(pixels[0, 0]) == (217, 217, 217)


def test_pool_averages_blocks_and_keeps_fully_masked_blocks_blank() -> None:
    z = np.array([[1.0, 3.0, np.nan, np.nan], [5.0, 7.0, np.nan, np.nan]])
    pooled, block = pool(z, 2)
    assert block == 2 and pooled[0, 0] == 4.0 and np.isnan(pooled[0, 1])


def test_token_view_draws_tokens_and_one_colour_per_head() -> None:
    w = np.full((2, 3, 3), 1 / 3, dtype=np.float32)
    view = token_view(w, ["a", "b", "c"])
    lines = [t for t in view.figure.data if t.mode == "lines"]
    assert {t.line.color for t in lines} == {"#1f77b4", "#ff7f0e"}
    assert view.lines_shown == view.lines_total == 18
    assert [list(t.text) for t in view.figure.data if t.mode == "markers+text"] == [
        ["a", "b", "c"]
    ] * 2


def tick_px(axis, length_px: float) -> float:
    """Pixels between two shown tick labels of a panel axis, from the figure's own settings."""
    assert axis.tickmode == "array", "ticks are explicit: plotly's automatic ticks thin labels"
    span = abs(axis.range[1] - axis.range[0])
    step = float(np.min(np.diff(axis.tickvals))) if len(axis.tickvals) > 1 else span
    return length_px * min(step, span) / span


@pytest.mark.parametrize("width", [980, 350])  # a laptop's figure and a phone's
@pytest.mark.parametrize(
    "shape", [(8, 128), (128, 8), (8, 64), (8, 32), (1, 15), (12, 12), (24, 4), (30, 30), (40, 40)]
)
@pytest.mark.parametrize("tokens", [False, True])
def test_tick_labels_have_room_on_every_panel(shape, tokens, width) -> None:
    """A shown tick label has a line of its type along its axis to itself (a horizontal label
    its width); a short axis with tokens labels every position, and every row of a short panel
    is at least ROW_MIN_PX tall (the (8, 128) sinusoid was 40 px tall, 5 px a row)."""
    rows, cols = shape
    z = np.random.default_rng(0).normal(size=shape)
    labels = ["abcdefgh"[t % 8] for t in range(max(shape))] if tokens else None
    panels = [Panel(z, x_labels=labels, y_labels=labels)] * 3
    fig = panel_grid(panels, make_scale("diverging", [z]), max_width=width)
    layout = fig.layout
    plot_w = layout.width - layout.margin.l - layout.margin.r
    plot_h = layout.height - layout.margin.t - layout.margin.b
    y_px = plot_h * (layout.yaxis.domain[1] - layout.yaxis.domain[0])
    x_px = plot_w * (layout.xaxis.domain[1] - layout.xaxis.domain[0])
    if rows <= LABELS_ALL_MAX:
        assert y_px / rows >= ROW_MIN_PX - 1e-6
    font = layout.yaxis.tickfont.size or 12
    assert tick_px(layout.yaxis, y_px) >= font + 2 - 1e-6
    if tokens and rows <= LABELS_ALL_MAX:
        assert list(layout.yaxis.tickvals) == list(range(rows))
        assert list(layout.yaxis.ticktext) == labels[:rows]
    x_font = layout.xaxis.tickfont.size or 12
    widest = 1 if tokens and cols <= LABELS_ALL_MAX else len(str(cols - 1))
    assert tick_px(layout.xaxis, x_px) >= CHAR_EM * x_font * widest + 3 - 1e-6
    values = layout.xaxis.tickvals
    if tokens and cols <= LABELS_ALL_MAX and len(values) < cols:  # a subset, the title says so
        assert f"(every {values[1] - values[0]}" in layout.xaxis.title.text
