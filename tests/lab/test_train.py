"""Training: a few steps lower the loss, the seed fixes the weights, the CLI documents itself
and writes loadable checkpoints."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from relpos_lab.generalization.models import Encoder, EncoderConfig, build_encoder
from relpos_lab.generalization.tasks import TaskConfig, evaluation_set
from relpos_lab.generalization.train import (
    TrainConfig,
    build_parser,
    evaluate,
    format_table,
    learning_rate,
    loss_curve,
    train_model,
)

ROOT = Path(__file__).resolve().parents[2]
TASK = TaskConfig(vocab=8, shift=1)
MODEL = EncoderConfig(vocab=8, d_model=16, heads=2, layers=1, ffn=32, k=2)
QUICK = TrainConfig(steps=30, batch=32, lr=1e-2, warmup=3, min_len=4, train_max_len=8, seed=0)


@pytest.fixture(autouse=True)
def one_thread():
    """As the CLI does: tiny matrices are fastest on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("position", ["relative", "absolute"])
def test_thirty_steps_lower_the_loss(position):
    model = build_encoder(EncoderConfig(**{**MODEL.__dict__, "position": position}), 0)
    history = train_model(model, TASK, QUICK)
    assert [r["step"] for r in history] == list(range(1, 31))
    initial = history[0]["loss"]
    final = sum(r["loss"] for r in history[-5:]) / 5
    assert final < 0.8 * initial, (initial, final)


def test_same_seed_gives_identical_weights():
    config = TrainConfig(**{**QUICK.__dict__, "steps": 5})
    runs = []
    for seed in (0, 0, 1):
        model = build_encoder(MODEL, seed)
        train_model(model, TASK, TrainConfig(**{**config.__dict__, "seed": seed}))
        runs.append(model.state_dict())
    assert all(torch.equal(runs[0][name], runs[1][name]) for name in runs[0])
    assert not torch.equal(runs[0]["embedding.weight"], runs[2]["embedding.weight"])


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    config = TrainConfig(steps=100, lr=1.0, warmup=10)
    assert learning_rate(0, config) == pytest.approx(0.1)
    assert learning_rate(9, config) == pytest.approx(1.0)
    assert learning_rate(10, config) == pytest.approx(1.0)
    assert learning_rate(100, config) == pytest.approx(0.1)


def test_evaluate_counts_tokens_and_whole_sequences():
    class Echo(torch.nn.Module):  # predicts the input token itself
        def forward(self, ids):
            return torch.nn.functional.one_hot(ids, 8).float()

    ids = torch.tensor([[1, 2, 3, 4], [5, 5, 5, 5]])
    targets = torch.tensor([[1, 2, 3, 0], [5, 5, 5, 5]])
    result = evaluate(Echo(), {4: (ids, targets)})
    assert result == {4: {"token_acc": 7 / 8, "seq_acc": 0.5}}


def test_loss_curve_averages_consecutive_steps():
    history = [{"step": s, "loss": float(s), "acc": 0.0} for s in range(1, 7)]
    assert loss_curve(history, points=3) == {"step": [2, 4, 6], "loss": [1.5, 3.5, 5.5]}


def run_cli(*args, cwd=ROOT):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "relpos_lab.generalization", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_help_documents_every_option():
    text = run_cli("--help").stdout
    for option in [
        "--task",
        "--steps",
        "--seed",
        "--train-max-len",
        "--eval-lengths",
        "--out",
        "--layers",
        "--heads",
        "--d-model",
        "--k",
        "--lr",
        "--batch",
    ]:
        assert option in text


def test_cli_trains_reports_and_writes_loadable_checkpoints(tmp_path):
    result = run_cli(
        *("--steps", "4", "--log-every", "2", "--batch", "8", "--d-model", "16"),
        *("--heads", "2", "--ffn", "16", "--layers", "1", "--eval-lengths", "4,8"),
        *("--train-max-len", "6", "--out", str(tmp_path)),
    )
    assert "relative step     2/4" in result.stdout
    assert "absolute step     4/4" in result.stdout
    summary = json.loads((tmp_path / "generalization.json").read_text())
    assert set(summary["models"]) == {"relative", "absolute"}
    assert format_table(summary) in result.stdout
    for position in ("relative", "absolute"):
        model, metadata = Encoder.from_checkpoint(tmp_path / f"{position}.pt")
        assert model.config.position == position
        assert metadata["train"]["steps"] == 4
        task = TaskConfig(**summary["task"])
        evaluation = summary["evaluation"]
        eval_set = evaluation_set(task, (4, 8), evaluation["per_length"], evaluation["seed"])
        assert evaluate(model, eval_set) == {
            int(n): r for n, r in summary["models"][position]["eval"].items()
        }


def test_cli_rejects_bad_lengths(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--eval-lengths", "8,x"])
    assert "eval lengths must be comma-separated ints" in capsys.readouterr().err


def test_a_model_added_to_the_family_trains_as_many_steps_as_the_family() -> None:
    """Training one model with other steps than the stored family's is refused in words before
    anything trains: the family's numbers compare models trained alike."""
    import argparse

    from relpos_lab.family.__main__ import read_results, train_command

    stored = read_results()["training"]["steps"]
    with pytest.raises(SystemExit) as refused:
        train_command(argparse.Namespace(names=["deberta"], steps=stored + 1))
    assert str(refused.value) == (
        f"--steps {stored + 1} differs from the {stored} steps every stored model of the family "
        "trained for: the family trains alike (leave --steps out, or retrain all)"
    )
