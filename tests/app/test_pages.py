"""Every page through AppTest: no exception, the expected charts, values equal to relpos_core's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import relpos_core as rc
from explorer.example import example_inputs
from explorer.params import ViewParams
from tests.app.conftest import PAGES, assert_clean, chart_keys, chart_spec, chart_z, open_page

EXPECTED_CHARTS = {
    "overview": {"overview_index"},
    "lookup": {"distance", "clipped", "index", "table_k", "table_v", "a_k_channel"},
    "logits": {
        "content_logits",
        "relative_definition",
        "relative_einsum",
        "relative_matmul",
        *(f"t2t_{name}" for name in ("q", "a_k", "q_t", "q_t_r", "product", "product_r")),
        "t2t_result",
    },
    "skew": {
        *(f"skew_masked_{name}" for name in ("input", "padded", "reshaped", "result")),
        "skew_causal_result",
        "skew_definition",
    },
    "attention": {
        "attention_logits",
        "attention_masked_logits",
        "attention_weights",
        "attention_content_output",
        "attention_relative_output",
        "attention_output",
    },
    "absolute": {"sinusoidal_encoding", "encoding_similarity", "relative_index"},
}
CLOSE = {"rtol": 1e-5, "atol": 1e-5}


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_its_charts(page: str) -> None:
    at = open_page(page)
    assert_clean(at)
    assert EXPECTED_CHARTS[page] <= chart_keys(at)
    assert at.slider(key="n").value == 8  # the shared sidebar is there on every page


def test_lookup_values_match_core() -> None:
    at = open_page("lookup", n="6", k="2", seed="3")
    assert_clean(at)
    params = ViewParams(n=6, k=2, seed=3)
    index = rc.relative_index(6, 6, 2)
    np.testing.assert_array_equal(chart_z(at, "index"), index.numpy())
    np.testing.assert_array_equal(chart_z(at, "distance"), rc.relative_distances(6, 6).numpy())
    table = example_inputs(params).table_k
    np.testing.assert_allclose(chart_z(at, "table_k"), table.numpy(), **CLOSE)
    a_k = rc.gather_relative(table, index)  # (6, 6, d)
    np.testing.assert_allclose(chart_z(at, "a_k_channel"), a_k[:, :, 0].numpy(), **CLOSE)


def test_lookup_a_k_by_query_row() -> None:
    at = open_page("lookup", n="5", k="1")
    at.radio(key="ak_view").set_value("by query row").run()
    at.slider(key="ak_row").set_value(3).run()
    assert_clean(at)
    table = example_inputs(ViewParams(n=5, k=1)).table_k
    expected = rc.gather_relative(table, rc.relative_index(5, 5, 1))[3]  # (n_k, d)
    np.testing.assert_allclose(chart_z(at, "a_k_row"), expected.numpy(), **CLOSE)


def test_logits_values_match_core() -> None:
    at = open_page("logits", n="7", k="3", heads="4")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=7, k=3, heads=4))
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 0]
    rel = rc.relative_logits(inputs.q, inputs.table_k, method="loop")[0, 0]
    np.testing.assert_allclose(chart_z(at, "content_logits"), content.numpy(), **CLOSE)
    for key in ("relative_definition", "relative_einsum", "relative_matmul"):
        np.testing.assert_allclose(chart_z(at, key), rel.numpy(), **CLOSE)
    # the six steps: q drawn as (b*h*i, d), the result as (b*h*i, j)
    np.testing.assert_allclose(chart_z(at, "t2t_q"), inputs.q.reshape(-1, 4).numpy(), **CLOSE)
    full = rc.relative_logits(inputs.q, inputs.table_k, method="loop")
    np.testing.assert_allclose(chart_z(at, "t2t_result"), full.reshape(-1, 7).numpy(), **CLOSE)
    badges = [m.value for m in at.markdown if "max |difference|" in m.value]
    assert len(badges) == 4 and all("green" in badge for badge in badges), badges


def test_logits_head_switch_changes_the_chart() -> None:
    at = open_page("logits", n="5", heads="2")
    at.button_group(key="logits_head").set_value(1).run()
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=5, heads=2))
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 1]
    np.testing.assert_allclose(chart_z(at, "content_logits"), content.numpy(), **CLOSE)


@pytest.mark.parametrize("kind", ["masked (causal)", "unmasked (two-sided)"])
def test_skew_values_match_core(kind: str) -> None:
    at = open_page("skew", n="6", k="2")
    at.button_group(key="skew_kind").set_value(kind).run()
    assert_clean(at)
    masked = kind.startswith("masked")
    inputs = example_inputs(ViewParams(n=6, k=2))
    e_r = rc.skew_embeddings(inputs.table_k, 6)
    e_r = e_r[:6] if masked else e_r
    x = (inputs.q @ e_r.T)[0, 0]
    name = "masked" if masked else "unmasked"
    np.testing.assert_allclose(chart_z(at, f"skew_{name}_input"), x.numpy(), **CLOSE)
    result = chart_z(at, f"skew_{name}_result")
    definition = rc.relative_logits(inputs.q, inputs.table_k, method="loop")[0, 0].numpy()
    valid = np.tril(np.ones((6, 6), dtype=bool)) if masked else np.ones((6, 6), dtype=bool)
    np.testing.assert_allclose(result[valid], definition[valid], **CLOSE)
    if masked:
        assert not np.allclose(result[~valid], definition[~valid])  # the invalid region
        causal = chart_z(at, "skew_causal_result")
        assert np.isnan(causal[~valid]).all() and np.isfinite(causal[valid]).all()
        spec = chart_spec(at, f"skew_{name}_result")
        assert len(spec["data"]) == 2  # the shaded invalid region is drawn over the result


def test_attention_values_match_core_with_causal_and_padding() -> None:
    at = open_page("attention", n="6", k="2", mask="causal-padding", pad="2")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=6, k=2, mask="causal-padding", pad=2))
    trace = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v,
        mask=rc.trailing_padding_mask(6, 2), causal=True, trace=True,
    )  # fmt: skip
    allowed = (torch.tril(torch.ones(6, 6)) * torch.tensor([1, 1, 1, 1, 0, 0.0])).bool()
    weights = chart_z(at, "attention_weights")
    assert np.isnan(weights[~allowed.numpy()]).all()  # masked cells blank, not -1e9
    np.testing.assert_allclose(
        weights[allowed.numpy()], trace.weights[0, 0][allowed].numpy(), **CLOSE
    )
    np.testing.assert_allclose(chart_z(at, "attention_output"), trace.output[0, 0].numpy(), **CLOSE)
    np.testing.assert_allclose(
        chart_z(at, "attention_relative_output"), trace.relative_output[0, 0].numpy(), **CLOSE
    )
    logits = chart_z(at, "attention_logits")
    np.testing.assert_allclose(logits, trace.scaled_logits[0, 0].numpy(), **CLOSE)
    assert math.isclose(trace.scale, 1 / math.sqrt(8))


def test_absolute_values_match_core() -> None:
    at = open_page("absolute", n="9", d_model="32")
    assert_clean(at)
    pe = rc.sinusoidal_encoding(9, 32)
    np.testing.assert_allclose(chart_z(at, "sinusoidal_encoding"), pe.numpy(), **CLOSE)
    np.testing.assert_allclose(
        chart_z(at, "encoding_similarity"), rc.encoding_similarity(pe).numpy(), rtol=1e-4, atol=1e-4
    )


def test_typed_text_labels_the_axes_and_sets_n() -> None:
    at = open_page("attention", text="the cat sat on the mat")
    assert_clean(at)
    assert chart_z(at, "attention_weights").shape == (6, 6)
    spec = chart_spec(at, "attention_weights")
    assert spec["layout"]["xaxis"]["ticktext"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert any("identical content" in info.value for info in at.info)
    # identical tokens, identical content: rows 0 and 4 of QK^T are equal
    inputs = example_inputs(ViewParams(text="the cat sat on the mat"))
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 0]
    torch.testing.assert_close(content[0], content[4])


def test_shared_controls_survive_a_page_switch() -> None:
    at = open_page("lookup")
    at.slider(key="n").set_value(5).run()
    at.slider(key="k").set_value(1).run()
    at.switch_page("../../../pages/attention.py").run()
    assert_clean(at)
    assert at.slider(key="n").value == 5
    assert chart_z(at, "attention_weights").shape == (5, 5)


def test_a_slider_move_redraws() -> None:
    at = open_page("lookup")
    at.slider(key="k").set_value(4).run()
    assert_clean(at)
    np.testing.assert_array_equal(chart_z(at, "index"), rc.relative_index(8, 8, 4).numpy())
