"""Synthetic sequence tasks where relative position is what matters, for the encoders.

``shift``: at every position i, output the token ``shift`` places to the left, or BLANK where
there is none (i < shift):

    target[i] = tokens[i - shift]   if i >= shift
              = BLANK               otherwise

The rule never mentions i itself, only the offset -shift, so a model that can see relative
distances up to its clip k >= shift + 1 can apply it at any length (k = shift would merge the
distance -shift with every farther one on the left). A model that only sees absolute positions
must learn the rule separately for each position it was trained on.

``reverse-window``: the sequence is cut into consecutive windows of ``window`` tokens and each
window is reversed. The offset to read from depends on i mod window, an absolute quantity: the
contrast case, which a relative model can only solve near the start of the sequence.

Tokens are ids 1..vocab-1; id 0 (BLANK) only appears in targets. Pure functions: randomness comes
from the ``torch.Generator`` argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from relpos_core.validation import check_choice, check_int

BLANK = 0
TASKS = ("shift", "reverse-window")


@dataclass(frozen=True)
class TaskConfig:
    """Which task, its vocabulary (BLANK included) and its one parameter."""

    name: str = "shift"
    vocab: int = 16
    shift: int = 2  # "shift": how many places to the left to read
    window: int = 4  # "reverse-window": window size

    def __post_init__(self) -> None:
        check_choice("name (task)", self.name, TASKS)
        check_int("vocab (vocabulary size, BLANK included)", self.vocab, 3)
        check_int("shift (places to the left)", self.shift, 1)
        check_int("window (reverse-window size)", self.window, 2)


def shift_targets(tokens: torch.Tensor, shift: int) -> torch.Tensor:
    """(b, n) tokens -> (b, n) targets: the token ``shift`` places to the left, else BLANK.

    >>> shift_targets(torch.tensor([[5, 6, 7, 8]]), 2)
    tensor([[0, 0, 5, 6]])
    """
    shift = check_int("shift (places to the left)", shift, 1)
    out = torch.full_like(tokens, BLANK)
    out[:, shift:] = tokens[:, :-shift]
    return out


def reverse_window_targets(tokens: torch.Tensor, window: int) -> torch.Tensor:
    """(b, n) tokens -> (b, n) targets: each window of ``window`` tokens reversed; a last,
    shorter window is reversed on its own.

    >>> reverse_window_targets(torch.tensor([[1, 2, 3, 4, 5]]), 2)
    tensor([[2, 1, 4, 3, 5]])
    """
    window = check_int("window (reverse-window size)", window, 2)
    n = tokens.shape[1]
    i = torch.arange(n)
    start = i - i % window
    end = torch.clamp(start + window, max=n) - 1  # last position of i's window
    return tokens[:, start + end - i]  # mirror i inside [start, end]


def task_targets(tokens: torch.Tensor, task: TaskConfig) -> torch.Tensor:
    """The targets ``task`` defines for (b, n) ``tokens``."""
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise TypeError(f"tokens must be a (b, n) long tensor, got {tokens.dtype} {tokens.shape}")
    if task.name == "shift":
        return shift_targets(tokens, task.shift)
    return reverse_window_targets(tokens, task.window)


def sample_batch(
    task: TaskConfig, batch: int, length: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch`` random sequences of ``length`` tokens (uniform over 1..vocab-1) and their targets,
    both (batch, length) long."""
    batch = check_int("batch", batch, 1)
    length = check_int("length (sequence length)", length, 1)
    tokens = torch.randint(1, task.vocab, (batch, length), generator=generator)
    return tokens, task_targets(tokens, task)


def evaluation_set(
    task: TaskConfig, lengths: tuple[int, ...], per_length: int, seed: int
) -> dict[int, tuple[torch.Tensor, torch.Tensor]]:
    """A fixed evaluation set: for each length, ``per_length`` sequences and targets.

    Each length draws from its own generator seeded by (seed, length), so adding a length
    leaves the others unchanged.
    """
    out = {}
    for length in lengths:
        generator = torch.Generator().manual_seed(seed * 100_003 + length)
        out[length] = sample_batch(task, per_length, length, generator)
    return out
