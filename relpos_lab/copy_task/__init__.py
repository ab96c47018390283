"""The attention introduction notebook's toy problem: copy the first items of a random sequence,
[1, 3, 5, 2, 4] -> [1, 3], with an encoder-decoder RNN and Bahdanau attention.

The items are random, so nothing in the sequence predicts the next one; a decoder that looks
back at the right input position (attention) solves it, and its alignment alpha_ij should put
output i on input i. Vocabulary: ``n_features`` ids, 0 the decoder's start token, items 1..
n_features - 1 (the notebook: 50 features, 5 in, 2 out).

    h_j = GRU(embed(x_j), h_(j-1))                      encoder, j = 1..n_in
    e_ij = v_a^T tanh(W_a s_(i-1) + U_a h_j)            ``relpos_core.basics.additive_scores``
    alpha_ij = softmax_j(e_ij),  c_i = sum_j alpha_ij h_j
    s_i = GRUCell([embed(y_(i-1)); c_i], s_(i-1))       s_0 = h_(n_in), y_0 = the start token
    p(y_i) = softmax(W_out [s_i; c_i; embed(y_(i-1))])  (Bahdanau et al. 2015, eqs. 4-6)

Training feeds the true y_(i-1) (teacher forcing); inference feeds back its own argmax.

    python -m relpos_lab.copy_task      # trains, writes its checkpoints/copy.pt and copy.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from relpos_core.basics import additive_scores
from relpos_core.trace import Trace
from relpos_core.validation import check_int, check_real

CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
CHECKPOINT = CHECKPOINT_DIR / "copy.pt"
RESULTS = CHECKPOINT_DIR / "copy.json"
START = 0  # the decoder's start token; never an item
EVAL_SEED = 2015  # the held-out sequences
EVAL_SIZE = 2000
DATA_SEED_OFFSET = 10_000  # batches come from seed + this, apart from the weights and EVAL_SEED


@dataclass(frozen=True)
class CopyConfig:
    """The task, the model's widths and the optimization; saved with the weights."""

    n_features: int = 50  # vocabulary, the start token included
    n_in: int = 5
    n_out: int = 2
    embed: int = 16
    hidden: int = 64  # encoder and decoder state width
    attention: int = 32  # d_a, the width inside tanh
    steps: int = 600
    batch: int = 64
    lr: float = 1e-2

    def __post_init__(self) -> None:
        check_int("n_features", self.n_features, 2)
        check_int("n_in", self.n_in, 1)
        check_int("n_out", self.n_out, 1, self.n_in)
        for name in ("embed", "hidden", "attention", "steps", "batch"):
            check_int(name, getattr(self, name), 1)
        check_real("lr", self.lr, 0, 1, low_open=True)


@dataclass(frozen=True)
class CopyTrace(Trace):
    """One decoding of a batch, every step: [batch, output i, input j] or [.., channel]."""

    tokens: torch.Tensor  # (b,j) long, the input items x_j
    encoder_states: torch.Tensor  # (b,j,hidden) h_j
    decoder_states: torch.Tensor  # (b,i,hidden) s_(i-1), the state that scores output i
    scores: torch.Tensor  # (b,i,j) e_ij
    weights: torch.Tensor  # (b,i,j) alpha_ij, the alignment
    contexts: torch.Tensor  # (b,i,hidden) c_i
    logits: torch.Tensor  # (b,i,n_features)
    predicted: torch.Tensor  # (b,i) long, argmax of the logits

    FORMULAS = {
        "encoder_states": "h_j = GRU(embed(x_j), h_(j-1))",
        "decoder_states": "s_(i-1)",
        "scores": "e_ij = v_a^T tanh(W_a s_(i-1) + U_a h_j)",
        "weights": "alpha_ij = softmax_j(e_ij)",
        "contexts": "c_i = sum_j alpha_ij h_j",
        "logits": "W_out [s_i; c_i; embed(y_(i-1))]",
    }

    @property
    def target(self) -> torch.Tensor:
        """(b, i) the first n_out input items: what the task asks for."""
        return self.tokens[:, : self.predicted.shape[1]]


class CopyModel(nn.Module):
    """tokens (b, n) long -> ``CopyTrace`` of n_out outputs; ``forward(tokens, targets)``
    teacher-forces ``targets`` (b, n_out), without them it decodes greedily."""

    def __init__(self, config: CopyConfig) -> None:
        super().__init__()
        self.config = c = config
        self.encoder_embedding = nn.Embedding(c.n_features, c.embed)
        self.encoder = nn.GRU(c.embed, c.hidden, batch_first=True)
        self.w_a = nn.Linear(c.hidden, c.attention, bias=False)  # W_a, on s_(i-1)
        self.u_a = nn.Linear(c.hidden, c.attention, bias=False)  # U_a, on h_j
        self.v_a = nn.Parameter(torch.empty(c.attention))
        self.decoder_embedding = nn.Embedding(c.n_features, c.embed)
        self.decoder = nn.GRUCell(c.embed + c.hidden, c.hidden)
        self.readout = nn.Linear(2 * c.hidden + c.embed, c.n_features)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor | None = None) -> CopyTrace:
        h, last = self.encoder(self.encoder_embedding(tokens))  # (b,j,hidden), (1,b,hidden)
        state = last[0]  # s_0
        previous = torch.full_like(tokens[:, 0], START)  # y_0
        rows = []
        for i in range(self.config.n_out):
            e = additive_scores(state[:, None], h, self.w_a.weight, self.u_a.weight, self.v_a)
            alpha = torch.softmax(e, dim=-1)  # (b,1,j)
            context = (alpha @ h)[:, 0]  # (b,1,j),(b,j,hidden) -> (b,hidden)
            y_prev = self.decoder_embedding(previous)  # (b,embed)
            new_state = self.decoder(torch.cat([y_prev, context], -1), state)
            logits = self.readout(torch.cat([new_state, context, y_prev], -1))  # (b,n_features)
            rows.append((state, e[:, 0], alpha[:, 0], context, logits, logits.argmax(-1)))
            previous = rows[-1][-1] if targets is None else targets[:, i]
            state = new_state
        s, e, a, c, lg, y = (torch.stack(column, 1) for column in zip(*rows, strict=True))
        return CopyTrace(tokens, h, s, e, a, c, lg, y)


def init_parameters(model: CopyModel, generator: torch.Generator) -> CopyModel:
    """Fill every parameter from ``generator`` in a fixed order: embeddings N(0, 1), the rest
    uniform in +-1/sqrt(fan in) (a GRU's fan in is its state width, as torch does)."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "embedding" in name:
                param.normal_(generator=generator)
                continue
            module = model.get_submodule(name.rpartition(".")[0]) if "." in name else model
            if isinstance(module, (nn.GRU, nn.GRUCell)):
                fan_in = model.config.hidden
            elif name == "v_a":
                fan_in = model.config.attention
            else:
                fan_in = module.in_features
            bound = 1 / math.sqrt(fan_in)
            param.uniform_(-bound, bound, generator=generator)
    return model


def build_copy_model(config: CopyConfig, seed: int) -> CopyModel:
    """Untrained weights from ``torch.Generator().manual_seed(seed)``; the global RNG is left
    as it was (the modules' own initialisation draws from it inside ``fork_rng``, then every
    parameter is drawn again from the generator). Not the meta device: initialising there
    imports torch's compiler stack (1.5 s and 70 MB on a server that never compiles)."""
    seed = check_int("seed", seed, 0)
    with torch.random.fork_rng(devices=[]):
        model = CopyModel(config)
    return init_parameters(model, torch.Generator().manual_seed(seed))


def sample_sequences(config: CopyConfig, count: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` random inputs: (count, n_in) long, items uniform in [1, n_features - 1]."""
    count = check_int("count (sequences)", count, 1, 10**6)
    shape = (count, config.n_in)
    return torch.randint(1, config.n_features, shape, generator=generator)


def copy_eval_set(config: CopyConfig, size: int = EVAL_SIZE, seed: int = EVAL_SEED) -> torch.Tensor:
    """The held-out inputs: ``size`` sequences from ``torch.Generator().manual_seed(seed)``."""
    return sample_sequences(config, size, torch.Generator().manual_seed(check_int("seed", seed, 0)))


@torch.no_grad()
def copy_with_attention(model: CopyModel, tokens: torch.Tensor | list) -> CopyTrace:
    """Greedy decoding with every step: tokens (b, n) or (n,) item ids in [1, n_features - 1],
    n >= n_out -> ``CopyTrace`` with a batch axis (b = 1 for one sequence).

    ``weights[s, i, j]`` is the alignment: how much output i of sequence s reads input j.
    n may differ from the n_in the model was trained on; the attention runs over any n."""
    config = model.config
    tokens = torch.as_tensor(tokens)
    if tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer item ids, got {tokens.dtype}")
    tokens = tokens.long()
    if tokens.dim() == 1:
        tokens = tokens[None]
    if tokens.dim() != 2 or tokens.shape[0] < 1 or tokens.shape[1] < config.n_out:
        raise ValueError(
            f"tokens must be (n,) or (b, n) with b >= 1 and n >= n_out = {config.n_out}, "
            f"got shape {tuple(tokens.shape)}"
        )
    if tokens.min() < 1 or tokens.max() >= config.n_features:
        raise ValueError(
            f"tokens must be item ids in [1, {config.n_features - 1}] (0 is the start token), "
            f"got values in [{int(tokens.min())}, {int(tokens.max())}]"
        )
    was_training = model.training
    trace = model.eval()(tokens)
    model.train(was_training)
    return trace


def item_accuracy(model: CopyModel, tokens: torch.Tensor) -> float:
    """The fraction of output items the greedy decoding gets right on inputs ``tokens``."""
    trace = copy_with_attention(model, tokens)
    return float((trace.predicted == trace.target).float().mean())


@dataclass(frozen=True)
class CopyTraining:
    """What ``train_copy_model`` gives back."""

    model: CopyModel  # trained, in eval mode
    losses: tuple[float, ...]  # cross-entropy (nats per item) of every step
    seconds: float
    accuracy: float  # per item, on ``copy_eval_set(config)``


def train_copy_model(config: CopyConfig, seed: int, threads: int = 1) -> CopyTraining:
    """Train ``build_copy_model(config, seed)`` with Adam and teacher forcing on fresh random
    batches from ``torch.Generator().manual_seed(seed + DATA_SEED_OFFSET)``.

    ``threads``: torch's CPU threads during training (restored after); these matrices are so
    small that one thread is fastest."""
    model = build_copy_model(config, seed)
    threads = check_int("threads", threads, 1)
    generator = torch.Generator().manual_seed(seed + DATA_SEED_OFFSET)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    losses = []
    start = time.perf_counter()
    try:
        model.train()
        for _ in range(config.steps):
            tokens = sample_sequences(config, config.batch, generator)
            targets = tokens[:, : config.n_out]
            logits = model(tokens, targets).logits  # (b,i,n_features)
            loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(float(loss.detach()))
        seconds = time.perf_counter() - start
        accuracy = item_accuracy(model.eval(), copy_eval_set(config))
    finally:
        torch.set_num_threads(before)
    return CopyTraining(model, tuple(losses), seconds, accuracy)


def load_copy_model(path: Path = CHECKPOINT) -> CopyModel:
    """The shipped model (or the one at ``path``), loaded strictly, in eval mode."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model = build_copy_model(CopyConfig(**checkpoint["config"]), 0)
    model.load_state_dict(checkpoint["state_dict"], strict=True)
    return model.eval()


@cache
def _results_text() -> str:
    return RESULTS.read_text()


def shipped_copy_results() -> dict[str, Any]:
    """The shipped copy.json (a fresh copy): config, seed, steps, seconds, held-out accuracy,
    alignment summary and the loss curve."""
    return json.loads(_results_text())


def alignment_summary(trace: CopyTrace) -> dict[str, float]:
    """How diagonal the alignment is: the share of outputs i whose largest weight is on input
    i, and the mean weight alpha_ii."""
    n_out = trace.weights.shape[1]
    diagonal = trace.weights.diagonal(dim1=1, dim2=2)[:, :n_out]  # (b,i) alpha_ii
    on_own = trace.weights.argmax(-1) == torch.arange(n_out)  # (b,i)
    return {
        "argmax_on_own_position": float(on_own.float().mean()),
        "mean_weight_on_own_position": float(diagonal.mean()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m relpos_lab.copy_task", description=__doc__)
    parser.add_argument("--steps", type=int, default=CopyConfig().steps)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    config = replace(CopyConfig(), steps=args.steps)
    run = train_copy_model(config, args.seed)
    CHECKPOINT_DIR.mkdir(parents=True, exist_ok=True)
    torch.save({"config": asdict(config), "state_dict": run.model.state_dict()}, CHECKPOINT)
    eval_set = copy_eval_set(config)
    trace = copy_with_attention(run.model, eval_set)
    every = max(1, config.steps // 30)
    curve = [run.losses[s : s + every] for s in range(0, config.steps, every)]
    results = {
        "config": asdict(config),
        "seed": args.seed,
        "data_seed": args.seed + DATA_SEED_OFFSET,
        "steps": config.steps,
        "seconds": round(run.seconds, 2),
        "threads": 1,
        "torch": torch.__version__,
        "parameters": sum(p.numel() for p in run.model.parameters()),
        "checkpoint_bytes": CHECKPOINT.stat().st_size,
        "held_out": {
            "seed": EVAL_SEED,
            "sequences": EVAL_SIZE,
            "item_accuracy": round(run.accuracy, 5),
            "sequence_accuracy": round(
                float((trace.predicted == trace.target).all(-1).float().mean()), 5
            ),
            **{k: round(v, 5) for k, v in alignment_summary(trace).items()},
        },
        "loss_curve": {
            "every": every,
            "loss": "cross-entropy in nats per item, mean over each block of steps",
            "values": [round(sum(block) / len(block), 4) for block in curve],
        },
    }
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(
        f"{config.steps} steps in {run.seconds:.1f} s, held-out item accuracy "
        f"{run.accuracy:.4f}, {results['held_out']}, wrote {CHECKPOINT} and {RESULTS}"
    )
