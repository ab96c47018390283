"""Trained weights: every page draws the trained Shaw model's own tensors, taken from the
model's own forward pass (the inputs and the output of its attention), not derived again."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
import torch

from explorer.frame.downloads import zip_bytes
from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.params import ViewParams, trained_model_name
from explorer.weights.reading import sequence
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import held_out_text
from tests.app.conftest import assert_clean, open_page
from tests.app.panels import panel_z

CLOSE = {"rtol": 1e-4, "atol": 1e-5}


def model_forward(name: str, text: str) -> list[dict]:
    """Run the shipped model on ``text`` as it runs (``model(ids)``), recording what every
    layer's attention was given and what it returned."""
    model, vocabulary = load_with_vocabulary(name)
    seen = []
    for block in model.blocks:
        attention = block.attention

        def record(q, k, v, _attend=attention.attend):
            z = _attend(q, k, v)
            seen.append({"q": q, "k": k, "v": v, "z": z})
            return z

        attention.attend = record
    with torch.no_grad():
        model(vocabulary.encode(text)[None])
    return seen


@pytest.mark.parametrize("page", [page.stem for page in NAVIGATION])
def test_every_page_renders_with_trained_weights(page: str) -> None:
    at = open_page(page, weights="trained")
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]


def test_attention_draws_the_models_own_output() -> None:
    at = open_page("attention", weights="trained", n="40", k="4", layer="1")
    at.button_group(key="attention_head").set_value(3).run()
    at.button_group(key="attention_more").set_value("the output, split").run()
    assert_clean(at)
    text = sequence(ViewParams(n=40, k=4, d_model=128, heads=4, mask="causal", weights="trained"))
    assert len(text) == 40 and text in held_out_text()  # held-out characters the model never saw
    layers = model_forward(trained_model_name(4), text)
    z = layers[1]["z"][0, 3].numpy()  # (n, d): what layer 1's attention returned, head 3
    np.testing.assert_allclose(panel_z(at, "attention_output", 2), z, **CLOSE)
    weights = panel_z(at, "attention_weights", 0)
    assert np.isnan(weights[np.triu_indices(40, 1)]).all()  # causal: keys after i are masked


def test_lookup_and_logits_draw_the_layers_tables_and_queries() -> None:
    text = "def f(x):\n    return x + 1"
    at = open_page("lookup", weights="trained", k="16", layer="2", text=text)
    assert_clean(at)
    model, _ = load_with_vocabulary("shaw-k16")
    scheme = model.blocks[2].attention.scheme
    ahead = np.arange(33) > 16  # w_+1..w_+16: a causal model never reads them, nor trains them
    for panel, table in enumerate((scheme.table_k, scheme.table_v)):
        drawn = panel_z(at, "tables", panel)
        np.testing.assert_allclose(drawn[~ahead], table.detach().numpy()[~ahead], **CLOSE)
        assert np.isnan(drawn[ahead]).all()  # drawn blank: see tests/app/test_learner_shaw.py
    at = open_page("logits", weights="trained", k="16", layer="2", text=text)
    assert_clean(at)
    q = model_forward("shaw-k16", text)[2]["q"][0, 0]  # layer 2's queries, head 0
    np.testing.assert_allclose(panel_z(at, "t2t_q", 0), q.numpy() / np.sqrt(32), **CLOSE)


def test_url_values_the_model_fixes_are_replaced_with_a_warning() -> None:
    at = open_page("lookup", weights="trained", heads="2", k="3")
    assert_clean(at)
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "URL parameter heads: with trained weights heads is the model's 4, got '2'" in text
    assert "k is one of 0, 1, 2, 4, 8, 16, 64, got '3'; using 2" in text
    assert (at.selectbox(key="heads").value, at.slider(key="k").value) == (4, 2)
    assert at.selectbox(key="heads").disabled and at.radio(key="mask").value == "causal"


def test_k_steps_to_the_next_trained_clip_distance_in_the_direction_it_moves() -> None:
    at = open_page("lookup", weights="trained", k="4")
    at.slider(key="k").set_value(5).run()
    assert at.slider(key="k").value == 8
    at.slider(key="k").set_value(7).run()
    assert at.slider(key="k").value == 4
    assert_clean(at)


def test_the_download_names_the_weights_the_model_and_the_layer() -> None:
    params = ViewParams(weights="trained", d_model=128, heads=4, mask="causal", k=16, layer=2)
    with zipfile.ZipFile(io.BytesIO(zip_bytes("lookup", params, {}))) as archive:
        meta = json.loads(archive.read("params.json"))
    assert (meta["weights"], meta["model"], meta["layer"]) == ("trained", "shaw-k16", 2)
    assert "layer=2" in meta["link"] and "weights" not in meta["link"]  # trained: the default
