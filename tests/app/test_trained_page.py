"""The "Length generalization" page through AppTest: its charts show the numbers of
relpos_lab.generalization.encoders."""

from __future__ import annotations

import numpy as np

from explorer.stories.generalization.controls import TYPED_EXAMPLE
from relpos_lab.generalization.encoders import (
    distance_cosine,
    example_tokens,
    generalization_table,
    load_encoder,
    predict_with_traces,
    relative_tables,
)
from tests.app.conftest import assert_clean, chart_keys, chart_spec, chart_z, open_page
from tests.app.panels import array_of, panel_z, trace_z

CLOSE = {"rtol": 1e-5, "atol": 1e-6}
CHARTS = {
    "trained_generalization",
    "trained_loss",
    "trained_w_k",
    "trained_w_v",
    "trained_cos_k",
    "trained_cos_v",
    "trained_prediction",
    *(f"trained_attention_{layer}" for layer in range(2)),
}


def test_page_renders_every_chart() -> None:
    at = open_page("trained")
    assert_clean(at)
    assert CHARTS <= chart_keys(at)


def test_generalization_curves_are_the_shipped_table() -> None:
    at = open_page("trained")
    models = generalization_table()["models"]
    lines = {
        line["name"]: array_of(line["y"])
        for line in chart_spec(at, "trained_generalization")["data"]
    }
    for model, result in models.items():
        token = [r["token_acc"] for r in result["eval"].values()]
        np.testing.assert_allclose(lines[f"{model}, token accuracy"], token, **CLOSE)


def test_tables_and_cosines_switch_between_trained_and_random() -> None:
    at = open_page("trained")
    for kind in ("relative", "random"):
        at.button_group(key="trained_tables_kind").set_value(kind).run()
        at.button_group(key="trained_tables_layer").set_value(1).run()
        assert_clean(at)
        w_k, w_v = relative_tables(load_encoder(kind))[1]
        np.testing.assert_allclose(chart_z(at, "trained_w_k"), w_k.numpy(), **CLOSE)
        np.testing.assert_allclose(chart_z(at, "trained_w_v"), w_v.numpy(), **CLOSE)
        np.testing.assert_allclose(chart_z(at, "trained_cos_k"), distance_cosine(w_k), **CLOSE)


def test_attention_maps_on_a_generated_input() -> None:
    at = open_page("trained")
    at.slider(key="trained_length").set_value(40).run()
    at.number_input(key="trained_seed").set_value(3).run()
    at.button_group(key="trained_model").set_value("absolute").run()
    assert_clean(at)
    result = predict_with_traces(load_encoder("absolute"), example_tokens(40, 3))
    weights = result.traces[1].weights[0, 2]
    np.testing.assert_allclose(panel_z(at, "trained_attention_1", 2), weights.numpy(), **CLOSE)
    edge = generalization_table()["train"]["train_max_len"] - 0.5  # the longest training input
    shapes = chart_spec(at, "trained_attention_1")["layout"]["shapes"]
    assert {(s["xref"], s["x0"]) for s in shapes if s["x0"] == s["x1"]} == {
        (f"x{a}", edge) for a in ("", "2", "3", "4")
    }
    correct = (result.prediction == result.target).float().numpy()
    strip = [t for t in chart_spec(at, "trained_prediction")["data"] if t["type"] == "heatmap"]
    drawn = np.concatenate([trace_z(t)[2] for t in strip])  # a long strip wraps: line by line
    np.testing.assert_array_equal(drawn, correct)
    assert any(f"**{result.accuracy:.0%}** of 40 positions" in m.value for m in at.markdown)


def test_typed_input_and_its_errors() -> None:
    at = open_page("trained")
    at.radio(key="trained_source").set_value("typed").run()
    at.text_input(key="trained_tokens").set_value("5, 6 7 8").run()
    assert_clean(at)
    assert any("**100%** of 4 positions" in m.value for m in at.markdown)
    text = array_of(chart_spec(at, "trained_prediction")["data"][0]["z"])
    assert text.shape == (12,)
    at.text_input(key="trained_tokens").set_value("5 99").run()
    assert_clean(at)  # a warning and the example, as Basics and Multi-head fall back
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert any(
        "trained_tokens (token ids): must be integers in [1, 15]" in w
        and "'5 99'" in w
        and f"showing {TYPED_EXAMPLE} instead" in w
        for w in warned
    ), warned
    text = array_of(chart_spec(at, "trained_prediction")["data"][0]["z"])
    assert text.shape == (3 * len(TYPED_EXAMPLE.split()),)  # the example's ids are drawn
    assert "trained_w_k" in chart_keys(at)  # the rest of the page is still drawn
