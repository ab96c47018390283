"""The Attention basics page: the copy model's alignment from the model's own forward pass, the
dot product on the same states, and the worked example against the attention introduction's
printed numbers and a plain softmax."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from explorer.frame.widgets import md_escape
from explorer.stories.basics.scaling import D_KS, SATURATION_SAMPLES, SPREAD_SAMPLES
from relpos_core.multihead import score_spread, softmax_saturation
from relpos_lab.copy_task import CopyConfig, build_copy_model, copy_with_attention, load_copy_model
from tests.app.conftest import assert_clean, chart_spec, chart_z, open_page
from tests.app.panels import array_of

SELF = "the keys themselves (self-attention)"


def softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize("weights", ["trained", "random"])
def test_the_alignment_and_both_scores_are_the_models_own(weights: str) -> None:
    items = [7, 30, 2, 45, 11, 9]
    at = open_page("basics", weights=weights, seed="3", items=" ".join(map(str, items)))
    assert_clean(at)
    model = load_copy_model() if weights == "trained" else build_copy_model(CopyConfig(), 3)
    with torch.no_grad():
        trace = copy_with_attention(model, items)
    np.testing.assert_allclose(chart_z(at, "basics_alignment"), trace.weights[0], atol=1e-6)
    np.testing.assert_allclose(chart_z(at, "basics_additive_scores_e"), trace.scores[0], atol=1e-5)
    s, h = trace.decoder_states[0].numpy(), trace.encoder_states[0].numpy()
    dot = s @ h.T / math.sqrt(s.shape[1])
    np.testing.assert_allclose(chart_z(at, "basics_dot-product_scores_e"), dot, atol=1e-5)
    np.testing.assert_allclose(
        chart_z(at, "basics_dot-product_weights_alpha"), softmax_rows(dot), atol=1e-6
    )
    note = at.info[0].value.replace("\\", "")
    predicted = trace.predicted[0].tolist()
    assert f"predicts {predicted[0]}" in note and f"predicts {predicted[1]}" in note
    if weights == "trained":  # the shipped model copies: output i reads input i
        assert predicted == items[:2] and trace.weights[0].argmax(1).tolist() == [0, 1]


def test_the_worked_example_gives_the_notebooks_numbers() -> None:
    at = open_page("basics")
    assert_clean(at)
    np.testing.assert_allclose(
        chart_z(at, "example_weights"),
        [[0, 0, 0.5, 0.5], [0, 1, 0, 0], [0.5, 0.5, 0, 0]],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        chart_z(at, "example_output"), [[550, 5.5], [10, 0], [5.5, 0]], rtol=1e-5, atol=1e-4
    )


def test_an_edited_example_and_self_attention_follow_the_definition() -> None:
    k = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    v = np.array([[1.0], [2.0], [4.0]])
    q = np.array([[1.0, 1.0]])
    at = open_page("basics", example_q="1 1", example_k="1 2; 0.5 -1; 3 0", example_v="1; 2; 4")
    assert_clean(at)
    weights = softmax_rows(q @ k.T / math.sqrt(2))
    np.testing.assert_allclose(chart_z(at, "example_weights"), weights, atol=1e-6)
    np.testing.assert_allclose(chart_z(at, "example_output"), weights @ v, atol=1e-5)
    at.button_group(key="example_source").set_value(SELF).run()
    assert_clean(at)
    logits = chart_z(at, "example_logits")
    np.testing.assert_allclose(logits, k @ k.T / math.sqrt(2), atol=1e-5)  # Q = K: symmetric
    assert any("self-attention, Q = K" in i.value.replace("\\", "") for i in at.info)


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"items": "1 2 <b>x</b>"}, "items must be whole numbers in [1, 49]"),
        ({"items": "1 99"}, "items must each be in [1, 49]"),
        ({"items": "4"}, "items must hold 2 to 12 numbers, got 1"),
        ({"example_q": "1 2"}, "Q and K must have the same number of columns (d)"),
        ({"example_v": "1 0; 2 0"}, "K and V must have the same number of rows"),
        ({"example_k": "1 x 3"}, "K must be numbers"),
    ],
)
def test_bad_input_is_named_and_the_page_still_draws(query: dict, words: str) -> None:
    at = open_page("basics", **query)
    assert not at.exception and not at.error
    assert any(words in w.value.replace("\\", "") for w in at.warning), [
        w.value for w in at.warning
    ]
    assert chart_z(at, "example_weights").shape[1] >= 1


def test_sqrt_d_k_curves_are_the_cores_numbers() -> None:
    at = open_page("basics", seed="5", scale_keys="8")
    assert_clean(at)
    spread = score_spread(D_KS, SPREAD_SAMPLES, torch.Generator().manual_seed(5))  # the seed's
    saturation = softmax_saturation(D_KS, 8, SATURATION_SAMPLES, torch.Generator().manual_seed(5))
    shown = chart_spec(at, "scale_spread")["data"]
    np.testing.assert_array_equal(array_of(shown[0]["x"]), D_KS)
    np.testing.assert_allclose(array_of(shown[0]["y"]), spread.unscaled_std, rtol=1e-6)
    np.testing.assert_allclose(array_of(shown[1]["y"]), spread.scaled_std, rtol=1e-6)
    assert json.dumps(chart_spec(at, "scale_spread")["layout"]["yaxis"]["type"]) == '"log"'
    shown = chart_spec(at, "scale_saturation")["data"]
    np.testing.assert_allclose(array_of(shown[0]["y"]), saturation.unscaled_max_weight, rtol=1e-6)
    np.testing.assert_allclose(array_of(shown[1]["y"]), saturation.scaled_max_weight, rtol=1e-6)
    at256 = D_KS.index(256)
    ratio = float(spread.unscaled_std[at256] / spread.scaled_std[at256])
    note = next(info.value for info in at.info if info.value.startswith(md_escape("At d = 256")))
    assert md_escape(f"spread {ratio:.0f}x wider") in note
    assert md_escape(f"averages {float(saturation.unscaled_max_weight[at256]):.2f}") in note
