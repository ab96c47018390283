"""Every page through AppTest: no exception, the expected charts, values equal to relpos_core's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import relpos_core as rc
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from tests.app.conftest import PAGES, assert_clean, chart_keys, chart_spec, chart_z, open_page
from tests.app.panels import panel_count, panel_z

EXPECTED_CHARTS = {
    "overview": {"overview_index"},
    "multihead": {
        "multihead_weights",
        "multihead_output",
        "multihead_mask_weights",
        "multihead_masks",
    },
    "basics": {
        "basics_alignment",
        "basics_additive_scores_e",
        "example_weights",
        "example_output",
        "scale_spread",
    },
    "lookup": {"distance", "index", "tables", "a_k_channel"},
    "logits": {"logits_heads", "logits_head", "relative_method", "t2t_q"},
    "skew": {"skew_unmasked_input"},  # one step at a time: tests/app/test_skew_page.py
    "rel_shift": {"xl_input"},  # one step at a time: tests/app/test_rel_shift_page.py
    "attention": {"attention_heads", "attention_weights", "attention_logits", "attention_output"},
    "absolute": {"sinusoidal_encoding", "encoding_similarity", "relative_index"},
    "family": {"family_heads", "family_head", "family_profile"},
    "compare": {"compare_weights", "compare_diff"},
    "check": {"check_reference"},  # the comparison needs an upload: tests/app/test_check_page.py
    "long_context": {"lc_wavelengths", "lc_decay", "lc_scaled", "lc_zero_shot", "lc_sinks"},
    "flex": {"flex_view", "flex_blocks"},
    # the family's T5 and Shaw with nothing uploaded: tests/app/test_your_model_page.py
    "your_model": {
        "your_model_t5",
        "your_model_matrix",
        "your_model_shaw_tables",
        "your_model_shaw_norms",
    },
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
    distance = rc.relative_distances(6, 6)
    np.testing.assert_array_equal(panel_z(at, "distance", 0), distance.numpy())
    np.testing.assert_array_equal(panel_z(at, "distance", 1), distance.clamp(-2, 2).numpy())
    inputs = example_inputs(params)
    table = inputs.table_k
    np.testing.assert_allclose(panel_z(at, "tables", 0), table.numpy(), **CLOSE)
    np.testing.assert_allclose(panel_z(at, "tables", 1), inputs.table_v.numpy(), **CLOSE)
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
    q = inputs.q / math.sqrt(16 / 4)  # every term as it enters the softmax: q_i / sqrt(d)
    content = (q @ inputs.k.transpose(-2, -1))[0]
    rel = rc.relative_logits(q, inputs.table_k, method="loop")[0]
    assert panel_count(at, "logits_heads") == 4  # every head, side by side
    for head in range(4):
        np.testing.assert_allclose(panel_z(at, "logits_heads", head), rel[head].numpy(), **CLOSE)
    np.testing.assert_allclose(panel_z(at, "logits_head", 0), content[0].numpy(), **CLOSE)
    np.testing.assert_allclose(panel_z(at, "logits_head", 1), rel[0].numpy(), **CLOSE)
    for method in ("definition", "einsum", "matmul"):
        at.button_group(key="logits_method").set_value(method).run()
        np.testing.assert_allclose(chart_z(at, "relative_method"), rel[0].numpy(), **CLOSE)
    # the six steps as tensors: q (b, h, i, d) is one (i, d) slice per (b, h)
    for head in range(4):
        np.testing.assert_allclose(panel_z(at, "t2t_q", head), q[0, head].numpy(), **CLOSE)
    at.button_group(key="t2t_step").set_value("a_k").run()
    a_k = rc.gather_relative(inputs.table_k, rc.relative_index(7, 7, 3))  # (i, j, d)
    np.testing.assert_allclose(panel_z(at, "t2t_a_k", 2), a_k[2].numpy(), **CLOSE)
    at.button_group(key="t2t_step").set_value("result").run()
    np.testing.assert_allclose(panel_z(at, "t2t_result", 3), rel[3].numpy(), **CLOSE)
    badges = [m.value for m in at.markdown if "max |difference|" in m.value]
    assert len(badges) == len(rc.METHOD_NAMES)  # each method, the loop too, on all 49 cells
    assert all("green" in b and "all 7 x 7 cells" in b for b in badges), badges


def test_logits_head_switch_changes_the_chart() -> None:
    at = open_page("logits", n="5", heads="2")
    at.button_group(key="logits_head").set_value(1).run()
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=5, heads=2))
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 1] / math.sqrt(16 / 2)
    np.testing.assert_allclose(panel_z(at, "logits_head", 0), content.numpy(), **CLOSE)


@pytest.mark.parametrize("kind", ["masked (causal)", "unmasked (two-sided)"])
def test_skew_values_match_core(kind: str) -> None:
    at = open_page("skew", n="6", k="2")
    at.button_group(key="skew_kind").set_value(kind).run()
    assert_clean(at)
    masked = kind.startswith("masked")
    inputs = example_inputs(ViewParams(n=6, k=2))
    e_r = rc.skew_embeddings(inputs.table_k, 6)
    e_r = e_r[:6] if masked else e_r
    x = (inputs.scaled_q @ e_r.T)[0, 0]  # the relative term as on every page: 1/sqrt(d)
    name = "masked" if masked else "unmasked"
    np.testing.assert_allclose(chart_z(at, f"skew_{name}_input"), x.numpy(), **CLOSE)
    at.button_group(key="skew_step").set_value(4).run()
    result = chart_z(at, f"skew_{name}_result")
    definition = rc.relative_logits(inputs.scaled_q, inputs.table_k, method="loop")[0, 0].numpy()
    valid = np.tril(np.ones((6, 6), dtype=bool)) if masked else np.ones((6, 6), dtype=bool)
    np.testing.assert_allclose(result[valid], definition[valid], **CLOSE)
    if masked:
        assert not np.allclose(result[~valid], definition[~valid])  # the invalid region
        spec = chart_spec(at, f"skew_{name}_result")
        veil = next(t for t in spec["data"] if t.get("name") == "greyed")  # over the invalid
        greyed = np.isfinite(np.frombuffer(__import__("base64").b64decode(veil["z"]["bdata"]),
                                           veil["z"]["dtype"]).reshape(6, 6))  # fmt: skip
        np.testing.assert_array_equal(greyed, ~valid)


def test_attention_values_match_core_with_causal_and_padding() -> None:
    at = open_page("attention", n="6", k="2", mask="causal-padding", pad="2", heads="4")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=6, k=2, mask="causal-padding", pad=2, heads=4))
    trace = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v,
        mask=rc.trailing_padding_mask(6, 2), causal=True, trace=True,
    )  # fmt: skip
    allowed = (torch.tril(torch.ones(6, 6)) * torch.tensor([1, 1, 1, 1, 0, 0.0])).bool().numpy()
    assert panel_count(at, "attention_heads") == 4
    for head in range(4):
        weights = panel_z(at, "attention_heads", head)
        assert np.isnan(weights[~allowed]).all()  # masked cells blank, not -1e9
        expected = trace.weights[0, head].numpy()
        np.testing.assert_allclose(weights[allowed], expected[allowed], **CLOSE)
    np.testing.assert_allclose(
        chart_z(at, "attention_logits"),
        np.where(allowed, trace.scaled_logits[0, 0].numpy(), np.nan),
        **CLOSE,
    )
    for part, name in enumerate(("content_output", "relative_output", "output")):
        expected = getattr(trace, name)[0, 0].numpy()
        np.testing.assert_allclose(panel_z(at, "attention_output", part), expected, **CLOSE)
    at.button_group(key="attention_head").set_value(2).run()
    np.testing.assert_allclose(
        chart_z(at, "attention_weights")[allowed], trace.weights[0, 2][allowed].numpy(), **CLOSE
    )
    at.button_group(key="attention_more").set_value("the logits").run()
    assert_clean(at)
    np.testing.assert_allclose(
        panel_z(at, "attention_terms", 1),
        trace.relative_logits[0, 2].numpy() * trace.scale,
        **CLOSE,
    )
    assert math.isclose(trace.scale, 1 / math.sqrt(4))  # d = 16 / 4


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
    # the hover is carried by the cell markers a click picks, row by row: position + token
    (cells,) = [t for t in spec["data"] if t.get("name") == "cells"]
    assert cells["text"][4 * 6 + 0].startswith('i = 4 "the"<br>j = 0 "the"<br>value = ')
    tokens = chart_spec(at, "attention_tokens")  # query tokens left, keys right, a colour a head
    lines = [t for t in tokens["data"] if t["mode"] == "lines"]
    assert {t["legendgroup"] for t in lines} == {"head 0", "head 1"}
    labels = [t for t in tokens["data"] if t["mode"] == "markers+text"]
    assert [t["text"] for t in labels] == [["the", "cat", "sat", "on", "the", "mat"]] * 2
    said = [info.value.replace("\\", "") for info in at.info]  # markdown escapes removed
    assert any("identical queries, keys and values here" in note for note in said), said
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
