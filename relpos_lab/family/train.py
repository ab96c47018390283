"""Train a family model on the corpus, store it, and measure bits per character.

Training draws ``batch`` windows of ``context + 1`` characters at offsets from one seeded
generator, so every model sees the same characters in the same order. The length experiment
(Press et al. 2022, Fig. 1) evaluates one fixed held-out span at several lengths L: the span
is cut into non-overlapping windows of L characters and every character after the first is
predicted from the characters before it in its window, so each length scores the same
``EVAL_CHARS`` characters and only the context the model sees changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from relpos_core.validation import check_int
from relpos_lab.family.corpus import Vocabulary, held_out_ids
from relpos_lab.family.model import CharLM, ModelConfig, build_model

EVAL_CHARS = 16384  # the held-out span every length scores: 16 windows at 1024
LENGTH_FACTORS = (1, 2, 4, 8, 16)  # multiples of the training length
STORAGE_DTYPE = torch.float16  # checkpoints hold float16 weights; models run in float32


@dataclass(frozen=True)
class TrainSettings:
    """Optimization shared by every model of the family."""

    steps: int = 1200
    batch: int = 32
    context: int = 64
    lr: float = 3e-3
    warmup: int = 100  # linear warm-up, then cosine decay to 10% of lr
    weight_decay: float = 0.01
    seed: int = 0  # the weights
    data_seed: int = 1  # the batches
    threads: int = 2

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def learning_rate(step: int, settings: TrainSettings) -> float:
    if step < settings.warmup:
        return settings.lr * (step + 1) / settings.warmup
    progress = (step - settings.warmup) / max(1, settings.steps - settings.warmup)
    return settings.lr * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))


def sample_windows(
    ids: torch.Tensor, batch: int, context: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch`` random windows: inputs (batch, context) and next characters (batch, context)."""
    starts = torch.randint(0, len(ids) - context, (batch,), generator=generator)
    windows = torch.stack([ids[s : s + context + 1] for s in starts.tolist()])
    return windows[:, :-1], windows[:, 1:]


def train_model(
    model: CharLM,
    ids: torch.Tensor,
    settings: TrainSettings,
    log: Callable[[str], None] | None = None,
    log_every: int = 100,
    after_step: Callable[[int], None] | None = None,
) -> list[float]:
    """Train ``model`` in place with AdamW on windows of ``ids``; the loss (nats per
    character) of every step. ``after_step(done)`` runs after each step (an evaluation may;
    the model is put back in training mode after it)."""
    torch.set_num_threads(settings.threads)
    generator = torch.Generator().manual_seed(settings.data_seed)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        trainable, lr=settings.lr, betas=(0.9, 0.99), weight_decay=settings.weight_decay
    )
    losses: list[float] = []
    model.train()
    for step in range(settings.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, settings)
        x, y = sample_windows(ids, settings.batch, settings.context, generator)
        logits = model(x)  # (b,n,vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        losses.append(float(loss.detach()))
        if log is not None and (step + 1) % log_every == 0:
            recent = losses[-log_every:]
            log(f"step {step + 1:5d}/{settings.steps}  loss {sum(recent) / len(recent):.4f}")
        if after_step is not None:
            after_step(step + 1)
            model.train()
    return losses


def eval_span(chars: int = EVAL_CHARS) -> torch.Tensor:
    """The held-out span the length experiment scores: ``chars + 1`` ids from the start of the
    held-out part (the first is context only)."""
    chars = check_int("chars", chars, 1, len(held_out_ids()) - 1)
    return held_out_ids()[: chars + 1]


@torch.no_grad()
def bits_per_character(
    model: CharLM, span: torch.Tensor, length: int, max_cells: int = 2**22
) -> float:
    """Mean bits per predicted character of ``span[1:]`` with non-overlapping windows of
    ``length`` characters; ``len(span) - 1`` must be a multiple of ``length``."""
    length = check_int("length", length, 1, 2**16)
    chars = len(span) - 1
    if chars % length:
        raise ValueError(f"length must divide the span's {chars} characters, got {length}")
    x = span[:-1].view(-1, length)  # (windows, L)
    y = span[1:].view(-1, length)
    per_batch = max(1, max_cells // (length * length))  # bounds the (b, h, L, L) logits
    model.eval()
    nats = 0.0
    for s in range(0, len(x), per_batch):
        logits = model(x[s : s + per_batch])
        nats += float(
            F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]).double(),
                y[s : s + per_batch].reshape(-1),
                reduction="sum",
            )
        )
    return nats / chars / math.log(2)


def save_checkpoint(model: CharLM, vocabulary: Vocabulary, path: Path, **metadata: Any) -> None:
    """The config, the vocabulary and the weights in ``STORAGE_DTYPE``."""
    state = {
        name: (t.to(STORAGE_DTYPE) if t.is_floating_point() else t)
        for name, t in model.state_dict().items()
    }
    torch.save(
        {
            "config": model.config.to_dict(),
            "vocabulary": vocabulary.chars,
            "state_dict": state,
            "metadata": metadata,
        },
        path,
    )


def load_checkpoint(path: Path) -> tuple[CharLM, Vocabulary, dict[str, Any]]:
    """The model at ``path`` in float32 and eval mode, its vocabulary and its metadata."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = CharLM(ModelConfig(**checkpoint["config"]))
    state = {
        name: t.float() if t.is_floating_point() else t
        for name, t in checkpoint["state_dict"].items()
    }
    model.load_state_dict(state, strict=True)
    return model.eval(), Vocabulary(checkpoint["vocabulary"]), checkpoint["metadata"]


def parameter_count(model: CharLM) -> int:
    """Trained parameters (a table fixed at zero by an ablation is not counted)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def fresh_model(config: ModelConfig, settings: TrainSettings) -> CharLM:
    return build_model(config, settings.seed)


def timed_training(model, ids, settings, log=None) -> tuple[list[float], float]:
    start = time.perf_counter()
    losses = train_model(model, ids, settings, log)
    return losses, time.perf_counter() - start
