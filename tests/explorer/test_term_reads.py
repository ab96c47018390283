"""What each term reads (Position schemes, under a scheme's terms): against the terms written
out from their formulas by loops, on the view's own q and k.

DeBERTa: c2p = q_i · P^K[c(i, j)] / sqrt(3d) moves with the query and never the key; p2c =
k_j · P^Q[c(i, j)] / sqrt(3d) with the key and never the query, which the note says of it alone.
Transformer-XL's u · k reads the key and no distance, so the note says nothing of it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.frame.params import ViewParams
from explorer.stories.family import settings as family_settings
from explorer.stories.family.term_reads import reads_note, reads_table, term_reads
from explorer.weights.example import example_inputs
from explorer.weights.schemes import scheme_for

SETTINGS = family_settings.FamilySettings()


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("head", [0, 1])
def test_deberta_reads_equal_the_terms_written_out(causal, head):
    params = ViewParams(n=9, mask="causal" if causal else "none", weights="random")
    config = SETTINGS.config("deberta", params)
    reads = term_reads(params, config, head)
    scheme = scheme_for(params, config)
    inputs = example_inputs(params, "deberta")
    q, k = (t[0, head].double().numpy() for t in (inputs.q, inputs.k))
    mean_q, mean_k = q.mean(0), k.mean(0)
    pos_key, pos_query = (t[head].detach().numpy() for t in scheme.position_vectors(torch.float64))
    rows = scheme.rows(9, 9, 0).numpy()
    root = math.sqrt(3 * q.shape[-1])
    cells = [(i, j) for i in range(9) for j in range(9) if not causal or j <= i]

    def c2p(qi, i, j):
        return qi @ pos_key[rows[i, j]] / root

    def p2c(kj, i, j):
        return kj @ pos_query[rows[i, j]] / root

    want = {
        "content": (
            rms(np.array([(q[i] - mean_q) @ k[j] / root for i, j in cells])),
            rms(np.array([q[i] @ (k[j] - mean_k) / root for i, j in cells])),
            0.0,
        ),
        "c2p": (
            rms(np.array([c2p(q[i], i, j) - c2p(mean_q, i, j) for i, j in cells])),
            0.0,
            float(np.std([c2p(mean_q, i, j) for i, j in cells])),
        ),
        "p2c": (
            0.0,
            rms(np.array([p2c(k[j], i, j) - p2c(mean_k, i, j) for i, j in cells])),
            float(np.std([p2c(mean_k, i, j) for i, j in cells])),
        ),
    }
    assert list(reads.parts) == list(want)
    for term, parts in want.items():
        np.testing.assert_allclose(reads.parts[term], parts, rtol=1e-4, atol=1e-6, err_msg=term)
    table = reads_table(reads, "deberta")
    assert "| position-to-content k · P^Q | 0 |" in table  # never the query
    assert "| content-to-position q · P^K | " in table and " | 0 | " in table.split("\n")[3]
    note = reads_note(reads, "deberta")
    assert note.count("never with the query") == 1
    assert "Position-to-content k · P^Q moves with the key's content" in note


def test_transformer_xl_has_no_term_of_the_key_and_the_distance():
    params = ViewParams(n=8, weights="random")
    reads = term_reads(params, SETTINGS.config("xl", params), 0)
    by_query, by_key, by_distance = reads.parts["global_content"]  # (c) u · k
    assert by_query == 0 and by_key > 0.01 and by_distance < 1e-6 * reads.size
    assert "never with the query" not in reads_note(reads, "xl")
