"""A scheme added through the catalogue alone appears everywhere a scheme does: KERPLE's
logarithmic bias (Chi et al. 2022), defined here and registered for each test's duration, is
drawn by Position schemes and Compare schemes, bound in the URL, listed by the lab's registry,
and refused with trained weights (no model of it was trained). No other file is edited."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from explorer.frame.params import ViewParams
from explorer.stories.family.text import number_word
from explorer.weights.example import example_inputs
from relpos_core.schemes import PositionScheme, make_scheme
from relpos_core.schemes.catalogue import (
    SchemeEntry,
    Setting,
    registered,
    scheme_entry,
    scheme_names,
)
from relpos_lab.family.model import build_model
from relpos_lab.family.registry import model_config, model_names, specs, untrained_schemes
from tests.app.conftest import assert_clean, chart_keys, open_page
from tests.app.panels import panel_z

CLOSE = {"rtol": 1e-4, "atol": 1e-5}


class KerpleLog(PositionScheme):
    """KERPLE's logarithmic variant: bias_ij = -r1_h · log(1 + r2_h · |j - i|), r1, r2 > 0
    learned per head (Chi et al. 2022, eq. 8), added to the logit as it is."""

    name = "kerple_log"
    TERMS = ("content", "bias")
    POSITION_TERMS = ("bias",)

    def __init__(self, heads: int, head_dim: int, r1: int = 1, r2: int = 1) -> None:
        super().__init__(heads, head_dim)
        self.r1 = nn.Parameter(torch.full((heads,), float(r1)))
        self.r2 = nn.Parameter(torch.full((heads,), float(r2)))

    def position_terms(self, q, k, causal, query_offset):
        i = torch.arange(query_offset, query_offset + q.shape[2], device=q.device)
        r = (torch.arange(k.shape[2], device=q.device)[None, :] - i[:, None]).abs().to(q.dtype)
        r1, r2 = (p.to(q.dtype)[:, None, None] for p in (self.r1, self.r2))  # (h,1,1)
        return {"bias": (-r1 * torch.log1p(r2 * r))[None]}  # (1,h,i,j)

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        return n_q * n_k * (8 + itemsize)  # the distances and their logarithm


KERPLE = SchemeEntry(
    name="kerple_log",
    label="KERPLE",
    title="KERPLE (Chi et al. 2022)",
    paper='Chi et al. 2022, "KERPLE: Kernelized Relative Positional Embedding for Length '
    'Extrapolation"',
    description="a learned logarithmic penalty -r1 log(1 + r2 |j - i|) per head",
    logit_formula=r"e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} - r_1 \log(1 + r_2 |j - i|)",
    position_formula=r"-r_1 \log\bigl(1 + r_2\,|j - i|\bigr)",
    terms=("bias",),
    scheme_class=KerpleLog,
    parameters_text="r1, r2: (h,), two positive scalars per head",
    memory_text="bias: h·n·n (shared by the batch)",
    extrapolation="keeps falling, ever more slowly: a logarithm of the distance",
    settings=(
        Setting(
            "r1",
            "r1",
            1,
            url_key="kerple_log_r1",
            label="KERPLE: r1",
            choices=(1, 2, 4),
            words="r1 = {}",
        ),
        Setting(
            "r2",
            "r2",
            1,
            url_key="kerple_log_r2",
            label="KERPLE: r2",
            choices=(1, 2, 4),
            words="r2 = {}",
        ),
    ),  # fmt: skip
    scaled=False,
)


@pytest.fixture
def kerple():
    with registered(KERPLE) as entry:
        yield entry
    with pytest.raises(ValueError, match="scheme must be one of shaw, .*; got 'kerple_log'"):
        scheme_entry("kerple_log")  # gone again after the test


def definition(params: ViewParams, r1: float, r2: float) -> np.ndarray:
    """The bias written out cell by cell: -r1 log(1 + r2 |j - i|), (n, n)."""
    n = params.length
    return np.array([[-r1 * math.log(1 + r2 * abs(j - i)) for j in range(n)] for i in range(n)])


def softmax_rows(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    shifted = np.where(allowed, logits - logits.max(-1, keepdims=True), -np.inf)
    weights = np.exp(shifted)
    return weights / weights.sum(-1, keepdims=True)


def warnings_of(at) -> str:
    return " ".join(w.value for w in at.warning).replace("\\", "")


def captions_of(at) -> str:
    return " ".join(c.value for c in at.caption).replace("\\", "")


def test_position_schemes_draws_it_from_the_url_with_its_settings(kerple) -> None:
    at = open_page("family", scheme="kerple_log", kerple_log_r1="2", kerple_log_r2="4")
    assert_clean(at)
    assert not at.warning, warnings_of(at)
    assert at.query_params["scheme"] == "kerple_log"  # bound: kept in the URL as given
    assert at.button_group(key="kerple_log_r1").value == 2
    assert any("KERPLE (Chi et al. 2022)" in h.value for h in at.header)
    expected = definition(ViewParams(), 2.0, 4.0)
    for h in range(ViewParams().heads):
        np.testing.assert_allclose(panel_z(at, "family_heads", h), expected, **CLOSE)
    text = " ".join(m.value for m in at.markdown)
    assert "| KERPLE |" in text.replace("**", "")  # a row of each table
    count = number_word(len(scheme_names())).capitalize()  # the family and this one
    assert f"{count} published ways" in text and "KERPLE added as they are" in text
    assert "r1 = 2, r2 = 4" in captions_of(at)
    assert "family_terms" not in chart_keys(at)  # one term: no breakdown


def test_its_controls_move_and_refuse_a_value_outside_their_choices(kerple) -> None:
    at = open_page("family", scheme="kerple_log", kerple_log_r2="3")
    assert_clean(at)
    assert "kerple_log_r2: must be one of 1, 2, 4, got '3'; using 1" in warnings_of(at)
    at.button_group(key="kerple_log_r1").set_value(4).run()
    assert_clean(at)
    np.testing.assert_allclose(
        panel_z(at, "family_heads", 0), definition(ViewParams(), 4.0, 1.0), **CLOSE
    )
    assert at.button_group(key="kerple_log_r1").value == 4


def test_compare_draws_its_weights_beside_another_scheme(kerple) -> None:
    at = open_page("compare", compare_a="kerple_log", compare_b="alibi", mask="causal")
    assert_clean(at)
    params = ViewParams(mask="causal")
    inputs = example_inputs(params)
    content = (inputs.q @ inputs.k.transpose(-2, -1))[0, 0].numpy() / math.sqrt(params.head_dim)
    allowed = np.tril(np.ones((params.length, params.length), bool))
    expected = softmax_rows(content + definition(params, 1.0, 1.0), allowed)
    drawn = panel_z(at, "compare_weights", 0)
    np.testing.assert_allclose(np.where(allowed, drawn, 0), expected, **CLOSE)
    assert "A: KERPLE (Chi et al. 2022)" in " ".join(m.value for m in at.markdown)


def test_the_lab_lists_it_as_a_model_to_train_not_a_shipped_one(kerple) -> None:
    assert specs()["kerple_log"] == {"position": "kerple_log"}
    assert "kerple_log" in untrained_schemes() and "kerple_log" not in model_names()
    model = build_model(model_config("kerple_log", vocab=10, context=8))
    assert isinstance(model.blocks[0].attention.scheme, KerpleLog)
    logits = model(torch.zeros(1, 8, dtype=torch.long))
    assert logits.shape == (1, 8, 10)
    assert make_scheme("kerple_log", 2, 4, r1=2).r1.tolist() == [2.0, 2.0]


def test_trained_weights_say_it_was_never_trained_and_draw_the_others(kerple) -> None:
    at = open_page("family", weights="trained", scheme="kerple_log", n="16")
    assert_clean(at)
    warnings = warnings_of(at)
    assert "KERPLE has no trained model in the family" in warnings
    assert "family_heads" not in chart_keys(at)  # nothing drawn as if it had learned
    assert "family_learned" in chart_keys(at)  # the trained schemes still are
    assert "Never trained, so not drawn here: KERPLE" in captions_of(at)
    compare = open_page("compare", weights="trained", compare_a="kerple_log", n="16")
    assert_clean(compare)
    assert "KERPLE has no trained model" in warnings_of(compare)
