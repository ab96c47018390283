"""Above DISPLAY_MAX positions the heatmaps show a window: exact values, labelled positions."""

from __future__ import annotations

import numpy as np
import torch

import relpos_core as rc
from explorer.example import example_inputs
from explorer.params import DISPLAY_MAX, ViewParams
from tests.app.conftest import assert_clean, chart_spec, chart_z, open_page

N, WIN = 1200, 600
CLOSE = {"rtol": 1e-4, "atol": 1e-5}
BLOCK = slice(WIN, WIN + DISPLAY_MAX)


def test_attention_window_equals_the_rows_of_the_full_trace() -> None:
    at = open_page("attention", n=str(N), win=str(WIN), mask="causal-padding", pad="50")
    assert_clean(at)
    params = ViewParams(n=N, win=WIN, mask="causal-padding", pad=50)
    inputs = example_inputs(params)
    full = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v,
        mask=inputs.mask, causal=True, trace=True,
    )  # fmt: skip
    weights = chart_z(at, "attention_weights")
    expected = full.weights[0, 0, BLOCK, BLOCK].numpy()
    allowed = full.allowed[0, 0, BLOCK, BLOCK].numpy()
    assert weights.shape == (DISPLAY_MAX, DISPLAY_MAX)
    np.testing.assert_allclose(weights[allowed], expected[allowed], **CLOSE)
    assert np.isnan(weights[~allowed]).all()
    output = chart_z(at, "attention_output")
    np.testing.assert_allclose(output, full.output[0, 0, BLOCK].numpy(), **CLOSE)
    spec = chart_spec(at, "attention_weights")["data"][0]
    x, y = (np.frombuffer(__import__("base64").b64decode(spec[a]["bdata"]), spec[a]["dtype"])
            for a in ("x", "y"))  # fmt: skip
    assert x[0] == WIN and y[0] == WIN and x[-1] == WIN + DISPLAY_MAX - 1


def test_logits_window_is_the_block_of_the_full_logits() -> None:
    at = open_page("logits", n=str(N), win=str(WIN), heads="4")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=N, win=WIN, heads=4))
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 0, BLOCK, BLOCK]
    np.testing.assert_allclose(chart_z(at, "content_logits"), content.numpy(), **CLOSE)
    rel = rc.relative_logits(inputs.q, inputs.table_k, method="bucket")[0, 0, BLOCK, BLOCK]
    definition = chart_z(at, "relative_definition")
    np.testing.assert_allclose(definition, rel[: definition.shape[0]].numpy(), **CLOSE)
    einsum = chart_z(at, "relative_einsum")
    np.testing.assert_allclose(einsum, rel[: einsum.shape[0]].numpy(), **CLOSE)
    badges = [m.value for m in at.markdown if "max |difference|" in m.value]
    assert len(badges) == 4 and all("green" in badge for badge in badges), badges


def test_skew_and_lookup_windows() -> None:
    at = open_page("skew", n=str(N), win=str(WIN))
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=N, win=WIN))
    rel = rc.relative_logits(inputs.q, inputs.table_k, method="bucket")[0, 0, BLOCK, BLOCK]
    causal = chart_z(at, "skew_causal_result")
    lower = np.tril(np.ones((DISPLAY_MAX, DISPLAY_MAX), dtype=bool))
    np.testing.assert_allclose(causal[lower], rel.numpy()[lower], **CLOSE)
    at = open_page("lookup", n=str(N), win=str(WIN))
    assert_clean(at)
    index = rc.relative_index(N, N, 2)[BLOCK, BLOCK]
    np.testing.assert_array_equal(chart_z(at, "index"), index.numpy())


def test_window_slider_only_above_the_display_limit_and_clamped() -> None:
    at = open_page("lookup", n=str(DISPLAY_MAX))
    assert_clean(at)
    assert not [s for s in at.slider if s.key == "win"]
    at = open_page("lookup", n="1000", win="3000")  # valid URL value, past this n's end
    assert_clean(at)
    assert at.slider(key="win").value == 1000 - DISPLAY_MAX
    index = rc.relative_index(1000, 1000, 2)[1000 - DISPLAY_MAX :, 1000 - DISPLAY_MAX :]
    np.testing.assert_array_equal(chart_z(at, "index"), index.numpy())
    at.slider(key="win").set_value(10).run()
    assert_clean(at)
    np.testing.assert_array_equal(
        chart_z(at, "index"), rc.relative_index(1000, 1000, 2)[10:522, 10:522].numpy()
    )


def test_absolute_window() -> None:
    at = open_page("absolute", n=str(N), win=str(WIN), d_model="32")
    assert_clean(at)
    pe = rc.sinusoidal_encoding(N, 32, dtype=torch.float64)
    np.testing.assert_allclose(chart_z(at, "sinusoidal_encoding"), pe[BLOCK].numpy(), **CLOSE)
    sim = rc.encoding_similarity(pe)[BLOCK, BLOCK].numpy()
    np.testing.assert_allclose(chart_z(at, "encoding_similarity"), sim, rtol=1e-4, atol=1e-4)
