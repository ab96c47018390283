"""The fine-tune at 4x RoPE's training length: it starts from the zero-shot model the long-context
table scores, trains a copy (the shipped model is left as it was), reads as many characters a
step as the family's training, and the docs hold the stored run's table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from relpos_lab.family import load
from relpos_lab.family.corpus import train_ids
from relpos_lab.family.fine_tune import (
    FACTOR,
    FINE_TUNE_FILE,
    RUNS,
    fine_tune,
    fine_tune_table,
    settings,
)
from relpos_lab.family.long_context import LONG_FILE, ROPE_MODEL, scaled_bpc, scaling_config
from relpos_lab.family.train import TrainSettings, eval_span


@pytest.fixture(scope="module")
def rope():
    torch.set_num_threads(1)
    return load(ROPE_MODEL)


def test_a_step_reads_as_many_characters_as_the_familys() -> None:
    family, tuned = TrainSettings(), settings()
    assert tuned.context == FACTOR * family.context
    assert tuned.batch * tuned.context == family.batch * family.context
    assert tuned.lr < family.lr and tuned.data_seed != family.data_seed


@pytest.mark.parametrize("run", ["none", "yarn"])
def test_it_starts_at_the_zero_shot_numbers_and_trains_a_copy(rope, run: str) -> None:
    span = eval_span(512)
    weights = {k: v.clone() for k, v in rope.state_dict().items()}
    result = fine_tune(rope, train_ids(), span, run, steps=2, lengths=(256,), eval_every=1)
    config = None if run == "none" else scaling_config(run, FACTOR, 64)
    assert result["bpc"]["0"]["256"] == pytest.approx(scaled_bpc(rope, span, 256, config), abs=1e-6)
    assert list(result["bpc"]) == ["0", "1", "2"]
    assert result["bpc"]["2"]["256"] != result["bpc"]["0"]["256"]  # it trained
    for key, value in rope.state_dict().items():  # the shipped model is untouched
        assert torch.equal(value, weights[key]), key


@pytest.mark.skipif(not FINE_TUNE_FILE.exists(), reason="no stored fine-tune run")
def test_the_stored_run_starts_where_the_zero_shot_table_stands() -> None:
    """Step 0 of each stored run is the zero-shot table's number (the same 8,192 characters)."""
    record, zero = json.loads(FINE_TUNE_FILE.read_text()), json.loads(LONG_FILE.read_text())
    assert list(record["runs"]) == list(RUNS)
    for run, result in record["runs"].items():
        row = "none" if run == "none" else f"{run}, s = {FACTOR}"
        for length, bpc in result["bpc"]["0"].items():
            assert bpc == pytest.approx(zero["zero_shot"][row][length], abs=2e-4), (run, length)


@pytest.mark.skipif(not FINE_TUNE_FILE.exists(), reason="no stored fine-tune run")
def test_the_docs_hold_the_generated_table() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "experiments.md").read_text()
    assert fine_tune_table(json.loads(FINE_TUNE_FILE.read_text())) in docs
