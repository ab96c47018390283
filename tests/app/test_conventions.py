"""One convention per idea on every page: the n in use, the distance j - i, the logit's scale."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

import relpos_core as rc
from explorer.frame.downloads import zip_bytes
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import panel_z


def test_a_typed_sentence_sets_the_n_slider_to_its_token_count() -> None:
    at = open_page("lookup", text="the cat sat on the mat")
    assert_clean(at)
    assert at.slider(key="n").value == 6  # the n in use, not the slider's old 8
    at.text_input(key="text").set_value("one two three").run()
    assert_clean(at)
    assert at.slider(key="n").value == 3
    stale = ViewParams(n=8, text="one two three")  # a slider value the sentence overrides
    with zipfile.ZipFile(io.BytesIO(zip_bytes("lookup", stale, {}))) as archive:
        meta = json.loads(archive.read("params.json"))
    assert meta["n"] == meta["length"] == 3


def test_transformer_xl_writes_distances_as_j_minus_i() -> None:
    at = open_page("rel_shift", n="5")
    assert_clean(at)
    spec = chart_spec(at, "xl_input")
    ticks = [int(t) for t in spec["layout"]["xaxis"]["ticktext"]]
    keys = len(ticks)  # K = Q + M keys, Q = 5 queries after M memory positions
    assert keys > 5
    assert ticks == list(range(-(keys - 1), 1))  # column c: j - i = c - (K - 1), as the skew's r


def test_the_logits_page_draws_the_terms_as_they_enter_the_softmax() -> None:
    at = open_page("logits", n="6", heads="2", d_model="16")
    assert_clean(at)
    inputs = example_inputs(ViewParams(n=6, heads=2))
    scale = 1 / np.sqrt(8)  # 1/sqrt(d), as on the Attention and Position schemes pages
    rel = rc.relative_logits(inputs.q, inputs.table_k, method="loop")[0] * scale
    np.testing.assert_allclose(panel_z(at, "logits_heads", 1), rel[1].numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    "page", ["lookup", "logits", "attention", "skew", "rel_shift", "family", "compare"]
)
def test_every_page_on_random_weights_says_so(page: str) -> None:
    at = open_page(page, seed="7")
    assert_clean(at)
    assert any("random, untrained** (seed 7)" in c.value for c in at.caption)


@pytest.mark.parametrize("page", ["rel_shift", "logits", "skew", "attention"])
def test_q_and_k_name_matrices_and_n_q_n_k_their_lengths(page: str) -> None:
    """Q and K are the query and key matrices on every page; their lengths are n_q and n_k."""
    import re

    at = open_page(page, n="40")
    assert_clean(at)
    texts = [e.value for e in (*at.markdown, *at.caption, *at.latex, *at.info)]
    step_labels = [o for s in at.get("button_group") for o in getattr(s.proto, "options", [])]
    for text in texts + [str(o) for o in step_labels]:
        plain = text.replace("\\", "")
        assert not re.search(
            r"\b[QK] = \d|[QK] = [QK] \+|rows of [QK]\b|mathbb\{R\}\^\{\(?[QK]", plain
        ), plain


def test_the_overview_sizes_the_gathered_tensor_by_the_model_width() -> None:
    """Huang et al.'s 8.6 GB example is n^2 times the model's width (every head), which the
    glossary calls d_model; d is one head's width on every page."""
    import re

    at = open_page("overview")
    assert_clean(at)
    text = next(m.value for m in at.markdown if "GB per layer" in m.value)
    n = int(re.search(r"\$n = (\d+)\$", text).group(1))
    width = re.search(r"d_\{\\text\{model\}\} = (\d+)", text)
    assert width, text
    assert f"{n * n * int(width.group(1)) * 4 / 1e9:.1f} GB per layer in float32" in text
