"""Train the tiny relative and absolute encoders on a synthetic task and test length
generalization (Shaw et al. 2018, section 4: relative representations "generalize to sequence
lengths not seen during training").

    python -m relpos_lab.generalization          # both models, writes its checkpoints/
    python -m relpos_lab.generalization --help

Both models see the same batches (one data generator per model, same seed) and start from the
same seed. Each step draws one length uniformly from [min-len, train-max-len] and a batch of
sequences of that length, so no padding is ever needed. Evaluation runs on a fixed set
(``tasks.evaluation_set``) at every length in --eval-lengths, most of them longer than any
training sequence.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
from torch import nn

from relpos_lab.generalization.models import POSITIONS, Encoder, EncoderConfig, build_encoder
from relpos_lab.generalization.tasks import TASKS, TaskConfig, evaluation_set, sample_batch

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
GENERALIZATION_FILE = "generalization.json"
EVAL_SEED = 2018  # the fixed evaluation set; distinct from any training seed's stream
EVAL_PER_LENGTH = 512


@dataclass(frozen=True)
class TrainConfig:
    """Optimization settings shared by both models."""

    steps: int = 1500
    batch: int = 64
    lr: float = 3e-3
    warmup: int = 100  # linear warm-up steps, then linear decay to 10% of lr
    min_len: int = 4
    train_max_len: int = 16
    seed: int = 0


def learning_rate(step: int, config: TrainConfig) -> float:
    """Linear warm-up over ``warmup`` steps, then linear decay to 0.1 * lr at the last step."""
    if step < config.warmup:
        return config.lr * (step + 1) / config.warmup
    progress = (step - config.warmup) / max(1, config.steps - config.warmup)
    return config.lr * (1.0 - 0.9 * progress)


def token_accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Fraction of positions whose argmax is the target: (b, n, vocab), (b, n) -> float."""
    return float((logits.argmax(-1) == targets).float().mean())


def train_model(
    model: Encoder,
    task: TaskConfig,
    config: TrainConfig,
    log: Callable[[str], None] | None = None,
    log_every: int = 100,
) -> list[dict[str, float]]:
    """Train ``model`` in place with AdamW; returns one {step, loss, acc} record per step.

    Data come from ``torch.Generator().manual_seed(config.seed)``: same seed, same batches.
    """
    generator = torch.Generator().manual_seed(config.seed)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=config.lr, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    history = []
    model.train()
    for step in range(config.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, config)
        length = int(
            torch.randint(config.min_len, config.train_max_len + 1, (), generator=generator)
        )
        tokens, targets = sample_batch(task, config.batch, length, generator)
        logits = model(tokens)  # (b,n,vocab)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        record = {
            "step": step + 1,
            "loss": float(loss.detach()),
            "acc": token_accuracy(logits.detach(), targets),
        }
        history.append(record)
        if log is not None and (step + 1) % log_every == 0:
            recent = history[-log_every:]
            mean_loss = sum(r["loss"] for r in recent) / len(recent)
            mean_acc = sum(r["acc"] for r in recent) / len(recent)
            log(
                f"{model.config.position:8s} step {step + 1:5d}/{config.steps}  "
                f"loss {mean_loss:.4f}  acc {mean_acc:.4f}  (mean of last {len(recent)})"
            )
    return history


@torch.no_grad()
def evaluate(
    model: Encoder, eval_set: dict[int, tuple[torch.Tensor, torch.Tensor]], chunk: int = 128
) -> dict[int, dict[str, float]]:
    """Per length: token accuracy and sequence accuracy (every position right)."""
    model.eval()
    out = {}
    for length, (tokens, targets) in eval_set.items():
        correct = torch.cat(
            [
                model(tokens[s : s + chunk]).argmax(-1) == targets[s : s + chunk]
                for s in range(0, len(tokens), chunk)
            ]
        )  # (b,n) bool
        out[length] = {
            "token_acc": float(correct.float().mean()),
            "seq_acc": float(correct.all(-1).float().mean()),
        }
    return out


def loss_curve(history: list[dict[str, float]], points: int = 60) -> dict[str, list[float]]:
    """About ``points`` (step, mean training loss of the steps since the previous point) pairs."""
    every = max(1, len(history) // points)
    steps, losses = [], []
    for end in range(every, len(history) + 1, every):
        window = history[end - every : end]
        steps.append(end)
        losses.append(round(sum(r["loss"] for r in window) / len(window), 6))
    return {"step": steps, "loss": losses}


def parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"eval lengths must be comma-separated ints, got {text!r}"
        ) from None
    if not lengths or min(lengths) < 1:
        raise argparse.ArgumentTypeError(f"eval lengths must all be >= 1, got {text!r}")
    return lengths


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m relpos_lab.generalization",
        description=(
            "Train a tiny relative-attention encoder and the same architecture with sinusoidal "
            "absolute encoding on a synthetic task, then measure token accuracy at lengths up to "
            "4x the longest training length. Writes <out>/relative.pt, <out>/absolute.pt and "
            f"<out>/{GENERALIZATION_FILE}. Reproducible: same seed, same weights."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    task, train, model = TaskConfig(), TrainConfig(), EncoderConfig()
    parser.add_argument("--task", choices=TASKS, default=task.name, help="synthetic task")
    parser.add_argument("--shift", type=int, default=task.shift, help="shift task: places left")
    parser.add_argument("--window", type=int, default=task.window, help="reverse-window size")
    parser.add_argument("--vocab", type=int, default=task.vocab, help="vocabulary, BLANK included")
    parser.add_argument("--steps", type=int, default=train.steps, help="optimizer steps per model")
    parser.add_argument("--batch", type=int, default=train.batch, help="sequences per step")
    parser.add_argument("--lr", type=float, default=train.lr, help="peak learning rate (AdamW)")
    parser.add_argument("--seed", type=int, default=train.seed, help="initialization+data seed")
    parser.add_argument(
        "--min-len", type=int, default=train.min_len, help="shortest training length"
    )
    parser.add_argument(
        "--train-max-len", type=int, default=train.train_max_len, help="longest training length"
    )
    parser.add_argument(
        "--eval-lengths",
        type=parse_lengths,
        default=(8, 16, 24, 32, 48, 64),
        help="comma-separated evaluation lengths",
    )
    parser.add_argument("--layers", type=int, default=model.layers, help="encoder blocks")
    parser.add_argument("--heads", type=int, default=model.heads, help="attention heads")
    parser.add_argument("--d-model", type=int, default=model.d_model, help="model width")
    parser.add_argument("--ffn", type=int, default=model.ffn, help="feed-forward hidden width")
    parser.add_argument("--k", type=int, default=model.k, help="relative clip distance")
    parser.add_argument(
        "--models", choices=(*POSITIONS, "both"), default="both", help="which models to train"
    )
    parser.add_argument("--out", type=Path, default=CHECKPOINT_DIR, help="output directory")
    parser.add_argument("--log-every", type=int, default=100, help="steps between progress lines")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads; 1 is fastest for these tiny matrices and immune to other load",
    )
    return parser


def run(args: argparse.Namespace, log: Callable[[str], None] = print) -> dict:
    """Train, evaluate and save as ``args`` says; returns the summary written to JSON."""
    task = TaskConfig(name=args.task, vocab=args.vocab, shift=args.shift, window=args.window)
    train_config = TrainConfig(
        steps=args.steps,
        batch=args.batch,
        lr=args.lr,
        warmup=min(TrainConfig.warmup, max(1, args.steps // 10)),
        min_len=args.min_len,
        train_max_len=args.train_max_len,
        seed=args.seed,
    )
    if not 1 <= train_config.min_len <= train_config.train_max_len:
        raise ValueError(
            f"need 1 <= min-len <= train-max-len, got {train_config.min_len}, "
            f"{train_config.train_max_len}"
        )
    base = EncoderConfig(
        vocab=task.vocab,
        d_model=args.d_model,
        heads=args.heads,
        layers=args.layers,
        ffn=args.ffn,
        k=args.k,
    )
    eval_set = evaluation_set(task, args.eval_lengths, EVAL_PER_LENGTH, EVAL_SEED)
    positions = POSITIONS if args.models == "both" else (args.models,)
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict = {
        "task": asdict(task),
        "train": asdict(train_config),
        "evaluation": {"seed": EVAL_SEED, "per_length": EVAL_PER_LENGTH},
        "models": {},
    }
    for position in positions:
        config = replace(base, position=position)
        model = build_encoder(config, args.seed)
        n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
        log(f"{position}: {n_params} trainable parameters, {train_config.steps} steps")
        start = time.perf_counter()
        history = train_model(model, task, train_config, log, args.log_every)
        seconds = time.perf_counter() - start
        last = history[-min(100, len(history)) :]
        results = evaluate(model, eval_set)
        metadata = {"task": asdict(task), "train": asdict(train_config)}
        model.save(args.out / f"{position}.pt", **metadata)
        summary["models"][position] = {
            "config": asdict(config),
            "trainable_parameters": n_params,
            "train_seconds": round(seconds, 1),
            "initial_loss": history[0]["loss"],
            "final_train_loss": sum(r["loss"] for r in last) / len(last),
            "final_train_acc": sum(r["acc"] for r in last) / len(last),
            "loss_curve": loss_curve(history),
            "eval": {str(n): r for n, r in results.items()},
        }
        log(f"{position}: trained in {seconds:.1f} s")
    (args.out / GENERALIZATION_FILE).write_text(json.dumps(summary, indent=2) + "\n")
    log(format_table(summary))
    return summary


def format_table(summary: dict) -> str:
    """The length-generalization table as Markdown: one row per length, per model token/seq."""
    models = list(summary["models"])
    lengths = list(summary["models"][models[0]]["eval"])
    limit = summary["train"]["train_max_len"]
    head = "| length | " + " | ".join(f"{m} token acc | {m} seq acc" for m in models) + " |"
    rule = "|---" * (1 + 2 * len(models)) + "|"
    rows = []
    for n in lengths:
        cells = []
        for m in models:
            r = summary["models"][m]["eval"][n]
            cells += [f"{r['token_acc']:.3f}", f"{r['seq_acc']:.3f}"]
        seen = "" if int(n) <= limit else " (unseen)"
        rows.append(f"| {n}{seen} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    run(args)
    print(f"total {time.perf_counter() - start:.1f} s (training and evaluation)")
