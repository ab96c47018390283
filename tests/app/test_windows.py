"""Above DISPLAY_MAX positions the heatmaps show a window: exact values, labelled positions."""

from __future__ import annotations

import numpy as np
import torch

import relpos_core as rc
from explorer.frame.params import DISPLAY_MAX, ViewParams
from explorer.weights.example import example_inputs
from tests.app.conftest import assert_clean, chart_spec, chart_z, open_page
from tests.app.panels import array_of, panel_z

N, WIN = 1200, 600
CLOSE = {"rtol": 1e-4, "atol": 1e-5}
BLOCK = slice(WIN, WIN + DISPLAY_MAX)


def axis_positions(at, key: str, panel: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) positions of a heatmap panel: where the drawn block sits in the (n, n) matrix."""
    trace = chart_spec(at, key)["data"][panel]
    return tuple(array_of(trace[a]) for a in ("x", "y"))  # type: ignore[return-value]


def test_attention_window_equals_the_rows_of_the_full_trace() -> None:
    at = open_page("attention", n=str(N), win=str(WIN), mask="causal-padding", pad="50")
    assert_clean(at)
    params = ViewParams(n=N, win=WIN, mask="causal-padding", pad=50)
    inputs = example_inputs(params)
    full = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v,
        mask=inputs.mask, causal=True, trace=True,
    )  # fmt: skip
    heads = chart_spec(at, "attention_heads")["data"]
    assert [t["type"] for t in heads[:2]] == ["image", "image"]  # large: PNGs, not 2 MB of z
    assert heads[0]["source"].startswith("data:image/png;base64,")
    assert chart_spec(at, "attention_weights")["data"][0]["type"] == "image"
    # exact values: the zoom under the image, a 32 x 32 block from the window's first query
    zoom = panel_z(at, "attention_zoom_zoom")
    block = slice(WIN, WIN + 32)
    expected = full.weights[0, 0, block, block].numpy()
    allowed = full.allowed[0, 0, block, block].numpy()
    np.testing.assert_allclose(zoom[allowed], expected[allowed], **CLOSE)
    assert np.isnan(zoom[~allowed]).all()
    x, y = axis_positions(at, "attention_zoom_zoom")
    assert x[0] == WIN and y[0] == WIN
    at.slider(key="attention_zoom").set_value(WIN + 300).run()
    assert_clean(at)
    x, y = axis_positions(at, "attention_zoom_zoom")
    lo = WIN + 300 - 16
    assert y[0] == lo and x[0] == lo
    block = slice(lo, lo + 32)
    expected, allowed = full.weights[0, 0, block, block].numpy(), full.allowed[0, 0, block, block]
    zoom = panel_z(at, "attention_zoom_zoom")
    np.testing.assert_allclose(zoom[allowed.numpy()], expected[allowed.numpy()], **CLOSE)
    output = chart_spec(at, "attention_output")["data"]
    assert output[2]["type"] == "image" and output[2]["y0"] == WIN


def test_logits_window_is_the_block_of_the_full_logits() -> None:
    at = open_page("logits", n=str(N), win=str(WIN), heads="4")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=N, win=WIN, heads=4))
    q = inputs.q / (16 / 4) ** 0.5  # the terms as they enter the softmax
    content = (q @ inputs.k.transpose(-2, -1))[0, 0, BLOCK, BLOCK]
    rel = rc.relative_logits(q, inputs.table_k, method="bucket")[0, :, BLOCK, BLOCK]
    assert [t["type"] for t in chart_spec(at, "logits_heads")["data"][:4]] == ["image"] * 4
    zoom = slice(0, 32)
    np.testing.assert_allclose(
        panel_z(at, "logits_zoom_zoom", 0), content[zoom, zoom].numpy(), **CLOSE
    )
    np.testing.assert_allclose(
        panel_z(at, "logits_zoom_zoom", 1), rel[0, zoom, zoom].numpy(), **CLOSE
    )
    badges = [m.value for m in at.markdown if "max |difference|" in m.value]
    assert len(badges) == len(rc.METHOD_NAMES), badges  # the loop too, on its corner
    assert all("green" in badge for badge in badges), badges
    side = DISPLAY_MAX  # every method on the whole window; the loop on its corner of 2048 pairs
    whole = [b for b in badges if f"all {side} x {side} cells of the window" in b]
    assert len(whole) == len(badges) - 1 and "loop" not in " ".join(whole), badges


def test_skew_window() -> None:
    at = open_page("skew", n=str(N), win=str(WIN), mask="causal", skew_step="4 sliced")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=N, win=WIN))
    rel = rc.relative_logits(inputs.scaled_q, inputs.table_k, method="bucket")[0, 0, BLOCK, BLOCK]
    inset = chart_spec(at, "skew_inset")["data"][0]  # exact values around the picked cell
    x, y = (array_of(inset[a]) for a in ("x", "y"))
    assert x[0] >= WIN and y[-1] < WIN + DISPLAY_MAX  # positions of the full sequence
    z = chart_z(at, "skew_inset")
    lower = x[None, :] <= y[:, None]
    np.testing.assert_allclose(z[lower], rel.numpy()[np.ix_(y - WIN, x - WIN)][lower], **CLOSE)


def test_lookup_window() -> None:
    at = open_page("lookup", n=str(N), win=str(WIN))
    assert_clean(at)
    index = chart_spec(at, "index")["data"][0]
    assert index["type"] == "image" and index["x0"] == WIN and index["y0"] == WIN
    distance = rc.relative_distances(N, N)[WIN : WIN + 32, WIN : WIN + 32]
    np.testing.assert_array_equal(panel_z(at, "lookup_zoom_zoom", 0), distance.numpy())
    np.testing.assert_array_equal(panel_z(at, "lookup_zoom_zoom", 1), distance.clamp(-2, 2))


def test_window_slider_only_above_the_display_limit_and_clamped() -> None:
    at = open_page("lookup", n=str(DISPLAY_MAX))
    assert_clean(at)
    assert not [s for s in at.slider if s.key == "win"]
    at = open_page("lookup", n="1000", win="3000")  # valid URL value, past this n's end
    assert_clean(at)
    assert at.slider(key="win").value == 1000 - DISPLAY_MAX
    assert chart_spec(at, "index")["data"][0]["x0"] == 1000 - DISPLAY_MAX
    at.slider(key="win").set_value(10).run()
    assert_clean(at)
    assert chart_spec(at, "index")["data"][0]["x0"] == 10
    x, _ = axis_positions(at, "lookup_zoom_zoom")
    assert x[0] == 10


def test_absolute_window() -> None:
    at = open_page("absolute", n=str(N), win=str(WIN), d_model="32")
    assert_clean(at)
    pe = rc.sinusoidal_encoding(N, 32, dtype=torch.float64)
    encoding = chart_spec(at, "sinusoidal_encoding")["data"][0]
    assert encoding["type"] == "image" and encoding["y0"] == WIN
    sim = rc.encoding_similarity(pe)[WIN : WIN + 32, WIN : WIN + 32].numpy()
    np.testing.assert_allclose(panel_z(at, "absolute_zoom_zoom"), sim, rtol=1e-4, atol=1e-4)
