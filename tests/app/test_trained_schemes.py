"""Trained weights on the scheme pages: Position schemes, Compare schemes and Transformer-XL
shift draw each scheme's own trained model, checked against that model's own forward pass (what
its attention was given and what it returned)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.stories.family.learned_terms import LENGTH
from explorer.weights.reading import held_out_passage
from relpos_core.schemes import content_free
from relpos_lab.family import load, results
from relpos_lab.family.registry import BASELINES, scheme_models
from tests.app.conftest import assert_clean, chart_spec, chart_z, open_page
from tests.app.panels import array_of, panel_z
from tests.app.test_trained_views import model_forward
from tests.explorer.beyond_check import check_beyond_note

CLOSE = {"rtol": 1e-4, "atol": 1e-5}
TEXT = "def area(r):\n    return 3.14 * r * r"
TRAINED = {"weights": "trained", "text": TEXT}


def output_of(term: np.ndarray, layer: dict, head: int) -> np.ndarray:
    """softmax(content + term) v for one head: what attention returns from this logit."""
    q, k, v = (layer[t][0, head] for t in "qkv")
    logits = torch.from_numpy(term).double() + (q @ k.T).double() / math.sqrt(q.shape[-1])
    logits = logits.masked_fill(torch.ones_like(logits, dtype=torch.bool).triu(1), -torch.inf)
    return (logits.softmax(-1) @ v.double()).numpy()


@pytest.mark.parametrize(
    ("scheme", "label"),
    [("rope", "RoPE"), ("alibi", "ALiBi"), ("t5", "T5"), ("music", "Music Transformer")],
)
def test_each_schemes_term_is_the_one_its_trained_model_attends_with(scheme, label) -> None:
    at = open_page("family", **TRAINED, layer="1", scheme=label)
    assert_clean(at)
    layer = model_forward(scheme, TEXT)[1]  # the model's own run: layer 1's q, k, v and z
    for head in range(4):
        term = panel_z(at, "family_heads", head)
        assert np.isnan(term[np.triu_indices(len(TEXT), 1)]).all()  # causal: no j > i
        drawn = np.nan_to_num(term, nan=0.0)
        np.testing.assert_allclose(
            output_of(drawn, layer, head), layer["z"][0, head].numpy(), rtol=1e-4, atol=1e-4
        )
    caption = " ".join(c.value for c in at.caption)
    assert "Weights: trained" in caption and "each scheme's own model of the family" in caption


def test_compare_draws_two_trained_models_weights_on_the_same_characters() -> None:
    at = open_page("compare", **TRAINED, layer="2", compare_a="ALiBi", compare_b="RoPE")
    assert_clean(at)
    for panel, name in enumerate(("alibi", "rope")):
        layer = model_forward(name, TEXT)[2]
        head = 0
        weights = np.nan_to_num(panel_z(at, "compare_weights", panel), nan=0.0)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        z = weights.astype(np.float64) @ layer["v"][0, head].double().numpy()
        np.testing.assert_allclose(z, layer["z"][0, head].numpy(), rtol=1e-4, atol=1e-4)


def test_the_shift_page_runs_the_trained_transformer_xl() -> None:
    at = open_page("rel_shift", **TRAINED, layer="1")
    assert_clean(at)
    relative = chart_z(at, "xl_input")  # (Q, K): row i, column c holds j - (M + i) = c - (K-1)
    q_len, k_len = relative.shape
    memory = k_len - q_len
    scheme = load("xl").blocks[1].attention.scheme
    q = model_forward("xl", TEXT)[1]["q"][:, :, :q_len]
    keys = torch.zeros(1, 4, k_len, q.shape[-1])  # (b) and (d) read no key
    with torch.no_grad():
        term = scheme.position_term(q, keys, causal=True, query_offset=memory)[0, 0].numpy()
    for i in range(q_len):
        for j in range(memory + i + 1):  # every key the query may see
            c = j - (memory + i) + k_len - 1
            assert relative[i, c] == pytest.approx(term[i, j], rel=1e-4, abs=1e-5)


def test_the_learned_terms_are_each_models_own_position_preference() -> None:
    at = open_page("family", weights="trained", k="2", learned_part="position only")
    assert_clean(at)
    traces = chart_spec(at, "family_learned")["data"]
    models = [
        "shaw-k2" if name == "shaw" else name  # the sidebar's k = 2 picks Shaw's model
        for name in scheme_models()
        if name not in BASELINES
    ]  # one model per scheme, in registry order
    assert len(traces) == len(models) * 4  # four heads each
    text = held_out_passage()[:LENGTH]
    context = results()["training"]["context"]
    for t, name in enumerate(models):
        layer = model_forward(name, text)[0]
        q, k = layer["q"], layer["k"]
        scheme = load(name).blocks[0].attention.scheme
        with torch.no_grad():
            last = scheme.position_term(
                content_free(q)[:, :, -1:], content_free(k), causal=True, query_offset=LENGTH - 1
            )[0, :, 0]
        for head in range(4):
            trace = traces[4 * t + head]
            np.testing.assert_array_equal(array_of(trace["x"]), np.arange(-(LENGTH - 1), 1))
            np.testing.assert_allclose(array_of(trace["y"]), last[head].numpy(), **CLOSE)
    shapes = chart_spec(at, "family_learned")["layout"]["shapes"]
    assert {s["x1"] for s in shapes if s["type"] == "rect"} == {-(context - 1)}


@pytest.mark.parametrize("layer", ["0", "1", "2"])
@pytest.mark.parametrize("part", ["position only", "on the text"])
def test_the_beyond_note_says_what_each_learned_curve_drawn_does(part: str, layer: str) -> None:
    """Section 4's note, every claim checked on the curves the chart draws: past |j - i| = 63
    Shaw's clipped table holds its edge value, Music Transformer's drops to 0, T5's buckets
    step then hold, ALiBi falls by its slope per position, RoPE and Transformer-XL vary."""
    at = open_page("family", weights="trained", k="2", learned_part=part, layer=layer)
    assert_clean(at)
    spec = chart_spec(at, "family_learned")
    schemes = len(scheme_models()) - len(BASELINES)
    titles = [a["text"] for a in spec["layout"]["annotations"]][:schemes]  # one per small chart
    traces = spec["data"]
    distance = array_of(traces[0]["x"]).astype(np.int64)
    curves = {
        title.replace("&amp;", "&"): np.stack([array_of(t["y"]) for t in traces[4 * s : 4 * s + 4]])
        for s, title in enumerate(titles)
    }
    context = results()["training"]["context"]
    note = next(i.value for i in at.info if i.value.replace("\\", "").startswith("Past"))
    said = check_beyond_note(note, distance, curves, context)
    assert said["Music Transformer"] == f"drops to 0 at j - i = {-context} and stays flat"
    assert said["T5"].startswith("steps at ") and said["ALiBi"].startswith("keeps falling by ")
    assert said["RoPE"].startswith("keeps varying")
    assert said["Transformer-XL"].startswith("keeps varying")
    if part == "position only":  # q_i · w_-k: one vector for every farther pair
        assert said["Shaw, k = 2"] == f"holds its edge value out to j - i = {-(LENGTH - 1)}"
