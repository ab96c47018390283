"""The long-context measurements: the evaluation command re-run at a small length agrees with
the stored run, scaling is undone after use, and the sliding window is the model's own forward
when the window holds every key."""

from __future__ import annotations

import json

import pytest
import torch

from relpos_lab.family import load
from relpos_lab.family.__main__ import main
from relpos_lab.family.long_context import (
    LONG_CHARS,
    LONG_FILE,
    ROPE_MODEL,
    scaled,
    scaled_bpc,
    scaling_config,
    window_mask,
    windowed_forward,
)
from relpos_lab.family.train import bits_per_character, eval_span


@pytest.fixture(scope="module")
def rope():
    torch.set_num_threads(1)
    return load(ROPE_MODEL)


@pytest.mark.skipif(not LONG_FILE.exists(), reason="no stored long-context run")
@pytest.mark.parametrize(
    ("row", "length", "flags"),
    [
        ("none", 64, []),
        ("yarn, s = 4", 64, ["--rope-scaling", "yarn", "--factor", "4"]),
        ("linear, s = ratio", 128, ["--rope-scaling", "linear", "--factor", "2"]),
        ("dynamic, s = 4", 128, ["--rope-scaling", "dynamic", "--factor", "4"]),
    ],
)
def test_the_command_reproduces_the_stored_numbers(capsys, row, length, flags):
    command = ["eval", ROPE_MODEL, "--length", str(length), "--chars", str(LONG_CHARS), *flags]
    main(command)
    printed = float(capsys.readouterr().out.rsplit(":", 1)[1])
    stored = json.loads(LONG_FILE.read_text())["zero_shot"][row][str(length)]
    assert printed == pytest.approx(stored, abs=2e-4)


def test_no_scaling_is_the_length_tables_definition(rope):
    span = eval_span(1024)
    assert scaled_bpc(rope, span, 64, None) == bits_per_character(rope, span, 64)


def test_scaling_is_undone_and_changes_the_model(rope):
    span = eval_span(512)
    before = bits_per_character(rope, span, 128)
    config = scaling_config("linear", 4, 64)
    with scaled(rope, config, seq_len=128):
        assert all(block.attention.scheme.scaling for block in rope.blocks)
        during = bits_per_character(rope, span, 128)
    assert during != before
    assert all(block.attention.scheme.scaling is None for block in rope.blocks)
    assert bits_per_character(rope, span, 128) == before
    with pytest.raises(ValueError, match="needs a RoPE model"):
        with scaled(load("alibi"), config):
            pass


@pytest.mark.parametrize("name", ["nope", "shaw", "alibi", ROPE_MODEL])
def test_a_window_holding_every_key_is_the_models_forward(name):
    model = load(name)
    ids = eval_span(96)[:-1][None]
    every = window_mask(96, 96, 0)
    with torch.no_grad():
        torch.testing.assert_close(
            windowed_forward(model, ids, every), model(ids), atol=2e-5, rtol=1e-5
        )


def test_the_window_keeps_the_first_characters():
    mask = window_mask(8, 4, 2)
    assert mask[7].nonzero().flatten().tolist() == [0, 1, 6, 7]
    assert window_mask(8, 4, 0)[7].nonzero().flatten().tolist() == [4, 5, 6, 7]


@pytest.mark.skipif(not LONG_FILE.exists(), reason="no stored long-context run")
def test_the_docs_hold_the_generated_tables():
    from pathlib import Path

    from relpos_lab.family.long_context import long_tables

    docs = (Path(__file__).resolve().parents[2] / "docs" / "experiments.md").read_text()
    assert long_tables(json.loads(LONG_FILE.read_text())) in docs


@pytest.mark.skipif(not LONG_FILE.exists(), reason="no stored long-context run")
def test_the_stored_mean_logit_is_the_models(rope):
    """The first layer's stored mean logit by distance, recomputed from its definition: the
    rotated q · k / sqrt(d), averaged over the queries at each distance."""
    from relpos_lab.family.long_context import DECAY_LENGTH, DECAY_TEXTS

    stored = torch.tensor(json.loads(LONG_FILE.read_text())["decay"]["mean_logit"][0])
    ids = eval_span(DECAY_TEXTS * DECAY_LENGTH)[:-1].view(DECAY_TEXTS, DECAY_LENGTH)
    q, k, _ = rope.attention_inputs(ids, layers=1)[0]
    q_rot, k_rot = rope.blocks[0].attention.scheme.rotate_queries_keys(q, k)
    for r in (0, 1, 63, 64, 500, DECAY_LENGTH - 1):
        i = torch.arange(r, DECAY_LENGTH)
        logit = (q_rot[:, :, i] * k_rot[:, :, i - r]).sum(-1) / q.shape[-1] ** 0.5
        torch.testing.assert_close(logit.mean((0, 2)), stored[:, r], atol=2e-4, rtol=1e-4)
