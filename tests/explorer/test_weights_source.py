"""The one weights source: trained or random decided in one place, from the sidebar."""

from __future__ import annotations

from explorer.frame.params import ViewParams
from explorer.weights.reading import held_out_passage
from explorer.weights.source import source_of


def test_random_weights_name_their_seed_and_no_model():
    source = source_of(ViewParams(weights="random", seed=7, k=2))
    assert not source.trained
    assert source.unit == "position" and source.seed == 7
    assert source.model() is None and source.text() is None and source.provenance() == {}
    assert "seed 7" in source.caption() and "random" in source.caption()


def test_trained_weights_name_the_model_each_scheme_reads():
    params = ViewParams(weights="trained", d_model=128, heads=4, mask="causal", k=2)
    source = source_of(params)
    assert source.trained and source.unit == "character" and source.seed == 0
    assert source.model() == "shaw-k2" and source.model("rope") == "rope"
    assert source.provenance() == {"_model": "shaw-k2"}
    assert source.provenance("shaw", "alibi") == {"_model": {"shaw": "shaw-k2", "alibi": "alibi"}}
    assert source.text() == held_out_passage()[: params.length]
    # in words, never by file name: Shaw's model at the view's k, the ALiBi model
    assert "Shaw's model, k = 2 of the family" in source.caption()
    assert "the ALiBi model of the family" in source.caption("alibi")
    assert "`" not in source.caption() + source.caption("alibi")
