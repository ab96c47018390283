"""explorer.weights.example: deterministic inputs, identical tokens, and skew provenance."""

from __future__ import annotations

import torch

import relpos_core as rc
from explorer.frame.params import ViewParams
from explorer.weights.example import (
    decode_provenance,
    derived_seed,
    example_inputs,
    skew_provenance,
)
from explorer.weights.reading import axis_labels


def test_shapes_and_dtype() -> None:
    params = ViewParams(n=5, k=3, d_model=32, heads=4, mask="padding", pad=2)
    inputs = example_inputs(params)
    assert inputs.x.shape == (5, 32)
    assert inputs.q.shape == inputs.k.shape == inputs.v.shape == (1, 4, 5, 8)
    assert inputs.table_k.shape == inputs.table_v.shape == (7, 8)
    assert inputs.q.dtype == torch.float32
    assert inputs.mask.flatten().tolist() == [True, True, True, False, False]
    assert not inputs.causal


def test_same_seed_same_inputs_and_global_rng_untouched() -> None:
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a, b = example_inputs(ViewParams(seed=4)), example_inputs(ViewParams(seed=4))
    assert torch.equal(torch.get_rng_state(), before)
    assert torch.equal(a.q, b.q) and torch.equal(a.table_v, b.table_v)
    c = example_inputs(ViewParams(seed=5))
    assert not torch.equal(a.q, c.q) and not torch.equal(a.table_k, c.table_k)
    assert not torch.equal(a.table_k, a.table_v)
    assert derived_seed(4, "w_q") != derived_seed(4, "w_k")


def test_identical_tokens_have_identical_content_so_only_position_differs() -> None:
    params = ViewParams(text="the cat saw the dog", k=2)
    inputs = example_inputs(params)
    assert torch.equal(inputs.x[0], inputs.x[3]) and not torch.equal(inputs.x[0], inputs.x[1])
    assert torch.equal(inputs.q[..., 0, :], inputs.q[..., 3, :])
    trace = rc.relative_attention(
        inputs.q, inputs.k, inputs.v, inputs.table_k, inputs.table_v, trace=True
    )
    assert torch.equal(trace.content_logits[..., 0, :], trace.content_logits[..., 3, :])
    assert not torch.allclose(trace.weights[..., 0, :], trace.weights[..., 3, :])


def test_axis_labels() -> None:
    assert axis_labels(ViewParams(n=3)) == (("q0", "q1", "q2"), ("k0", "k1", "k2"))
    assert axis_labels(ViewParams(text="a b")) == (("a", "b"), ("a", "b"))


def test_skew_provenance_matches_the_definition() -> None:
    for length in (1, 2, 5):
        for masked in (True, False):
            trace = skew_provenance(length, masked)
            row, distance, is_pad = decode_provenance(trace.result, length, masked)
            i = torch.arange(length)[:, None]
            j = torch.arange(length)[None, :]
            valid = (j <= i) if masked else torch.ones(length, length, dtype=torch.bool)
            assert torch.equal(row[valid], i.expand(length, length)[valid])
            assert torch.equal(distance[valid], (j - i)[valid])
            assert not is_pad[valid].any()
            if masked and length > 1:
                assert is_pad[0, 1] and (row[~valid] != i.expand(length, length)[~valid]).all()


def test_decode_provenance_worked_example() -> None:
    trace = skew_provenance(2, masked=True)  # input codes [[1, 2], [3, 4]], distances (-1, 0)
    assert trace.result.tolist() == [[2.0, 0.0], [3.0, 4.0]]
    row, distance, is_pad = decode_provenance(trace.result, 2, masked=True)
    assert row.tolist() == [[0, -1], [1, 1]] and distance.tolist() == [[0, 0], [-1, 0]]
    assert is_pad.tolist() == [[False, True], [False, False]]
