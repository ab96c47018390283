"""The shipped generalization encoders, their loader, and what to look at in them.

``relpos_lab/generalization/checkpoints/`` holds ``relative.pt`` and ``absolute.pt`` (written
by ``python -m relpos_lab.generalization``) and ``generalization.json`` (their configs, training
metrics and the length-generalization table). Everything is found relative to this package's
files: no network, works from a clean clone and from any working directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from relpos_core.attention import AttentionTrace
from relpos_core.validation import check_choice, check_int, check_tensor
from relpos_lab.generalization.models import Encoder, EncoderConfig, build_encoder
from relpos_lab.generalization.tasks import TaskConfig, sample_batch, task_targets
from relpos_lab.generalization.train import CHECKPOINT_DIR, GENERALIZATION_FILE

KINDS = ("relative", "absolute", "random")


@cache
def generalization_table() -> dict[str, Any]:
    """The shipped ``generalization.json``: task, training settings, evaluation set, and per
    model its config, training metrics and {length: {token_acc, seq_acc}}. Do not mutate."""
    return json.loads((CHECKPOINT_DIR / GENERALIZATION_FILE).read_text())


def shipped_task() -> TaskConfig:
    """The task the shipped models were trained on."""
    return TaskConfig(**generalization_table()["task"])


def load_encoder(kind: str) -> Encoder:
    """A fresh copy of a shipped model, in eval mode.

    "relative" / "absolute": the trained weights. "random": the relative architecture at the
    initialization training started from (same config, same seed), to compare against.
    """
    kind = check_choice("kind", kind, KINDS)
    if kind == "random":
        summary = generalization_table()
        config = EncoderConfig(**summary["models"]["relative"]["config"])
        return build_encoder(config, summary["train"]["seed"]).eval()
    model, _ = Encoder.from_checkpoint(CHECKPOINT_DIR / f"{kind}.pt")
    return model


def relative_tables(model: Encoder) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
    """Per layer, (w^K, w^V): each (2k+1, head_dim), row r is distance r - k (shared by heads).

    Detached copies; for the absolute model each is a single zero row."""
    return tuple(
        (
            block.attention.relative_position_k.embeddings_table.detach().clone(),
            block.attention.relative_position_v.embeddings_table.detach().clone(),
        )
        for block in model.blocks
    )


def distance_cosine(table: torch.Tensor) -> torch.Tensor:
    """Cosine similarity between the learned vectors of every two distances:
    (2k+1, d) -> (2k+1, 2k+1), entry [r, s] = cos(w_{r-k}, w_{s-k}).

    A zero row has no direction: its similarities are 0 (its diagonal entry too), never NaN.

    >>> distance_cosine(torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]))
    tensor([[1.0000, 0.7071, 0.0000],
            [0.7071, 1.0000, 0.0000],
            [0.0000, 0.0000, 0.0000]])
    """
    table = check_tensor("table", table, 2)
    norms = table.norm(dim=1, keepdim=True)  # (2k+1, 1)
    unit = table / torch.where(norms > 0, norms, torch.ones_like(norms))
    return unit @ unit.T  # (r,d),(d,s) -> (r,s)


@dataclass(frozen=True)
class Prediction:
    """One sequence through a model: every tensor for the single input, no batch axis except
    in the traces, which are the layers' ``AttentionTrace`` with batch size 1."""

    tokens: torch.Tensor  # (n,) long, the input
    target: torch.Tensor  # (n,) long, what the task asks for
    prediction: torch.Tensor  # (n,) long, argmax of the logits
    probabilities: torch.Tensor  # (n, vocab) softmax of the logits
    traces: tuple[AttentionTrace, ...]  # one per layer; weights (1, heads, n, n)

    @property
    def accuracy(self) -> float:
        return float((self.prediction == self.target).float().mean())


@torch.no_grad()
def predict_with_traces(
    model: Encoder, tokens: torch.Tensor | list[int], task: TaskConfig | None = None
) -> Prediction:
    """Run ``model`` on one sequence of token ids (1..vocab-1) and return the prediction, the
    target of ``task`` (default: the shipped task) and every layer's attention trace."""
    task = shipped_task() if task is None else task
    tokens = torch.as_tensor(tokens, dtype=torch.long)
    if tokens.dim() != 1 or tokens.numel() < 1:
        raise ValueError(
            f"tokens must be a non-empty 1-D sequence, got shape {tuple(tokens.shape)}"
        )
    if tokens.min() < 1 or tokens.max() >= model.config.vocab:
        raise ValueError(
            f"tokens must be ids in [1, {model.config.vocab - 1}], "
            f"got values in [{int(tokens.min())}, {int(tokens.max())}]"
        )
    was_training = model.training
    logits, traces = model.eval().forward_with_traces(tokens[None])  # (1,n,vocab)
    model.train(was_training)
    return Prediction(
        tokens=tokens,
        target=task_targets(tokens[None], task)[0],
        prediction=logits[0].argmax(-1),
        probabilities=torch.softmax(logits[0], dim=-1),
        traces=traces,
    )


def example_tokens(length: int, seed: int, task: TaskConfig | None = None) -> torch.Tensor:
    """A random input for ``task`` (default: the shipped task): (length,) long ids drawn from
    ``torch.Generator().manual_seed(seed)``, so the same (length, seed) gives the same input."""
    task = shipped_task() if task is None else task
    generator = torch.Generator().manual_seed(check_int("seed", seed, 0))
    return sample_batch(task, 1, length, generator)[0][0]


def parse_tokens(text: str, vocab: int) -> torch.Tensor:
    """Token ids from text such as "3 7 1 12" or "3,7,1,12" -> (n,) long.

    >>> parse_tokens("3, 7 1", vocab=16)
    tensor([3, 7, 1])
    """
    vocab = check_int("vocab", vocab, 2)
    parts = text.replace(",", " ").split()
    if not parts:
        raise ValueError("tokens must hold at least one id, got an empty text")
    try:
        ids = [int(part) for part in parts]
    except ValueError:
        raise ValueError(
            f"tokens must be integers separated by spaces or commas, got {text!r}"
        ) from None
    bad = [i for i in ids if not 1 <= i < vocab]
    if bad:
        raise ValueError(f"token ids must be in [1, {vocab - 1}], got {bad[0]}")
    return torch.tensor(ids, dtype=torch.long)
