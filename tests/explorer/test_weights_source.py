"""The one weights source: trained or random decided in one place, from the sidebar."""

from __future__ import annotations

from explorer.frame.params import ViewParams
from explorer.weights.reading import held_out_passage
from explorer.weights.source import weights_of


def test_random_weights_name_their_seed_and_no_model():
    weights = weights_of(ViewParams(weights="random", seed=7, k=2))
    assert not weights.trained
    assert weights.unit == "position" and weights.seed == 7
    assert weights.model() is None and weights.text() is None and weights.provenance() == {}
    assert "seed 7" in weights.caption() and "random" in weights.caption()


def test_trained_weights_name_the_model_each_scheme_reads():
    params = ViewParams(weights="trained", d_model=128, heads=4, mask="causal", k=2)
    weights = weights_of(params)
    assert weights.trained and weights.unit == "character" and weights.seed == 0
    assert weights.model() == "shaw-k2" and weights.model("rope") == "rope"
    assert weights.provenance() == {"_model": "shaw-k2"}
    assert weights.provenance("shaw", "alibi") == {"_model": {"shaw": "shaw-k2", "alibi": "alibi"}}
    assert weights.text() == held_out_passage()[: params.length]
    assert "`shaw-k2`" in weights.caption() and "`alibi`" in weights.caption("alibi")
