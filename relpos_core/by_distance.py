"""What learned (or configured) position parameters give each distance r = j - i.

A model's position parameters are small tables; what attention receives is the table read at
every distance the sequence has, r = -(n - 1), ..., n - 1, and then laid out as the (n, n) matrix
that indexes it by r = j - i. Here: the distances, the matrix that
indexes them, and a rule that sorts heads by the shape of their bias. Each scheme's own reading
(T5's bucketed bias, Shaw et al.'s clipped tables, ALiBi's slopes, RoPE's frequencies) is its
folder's ``by_distance`` module (``relpos_core/schemes/<name>/by_distance.py``); its functions
are this module's names too, found by walking the folders (``readings()``). Plain definitions,
small tensors: every function takes n up to ``MAX_N``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch

from relpos_core.schemes.folders import parts
from relpos_core.validation import check_bool, check_int

MAX_N = 2**16  # distances per call: (2n - 1) x heads values, never an (n, n) table per head
MAX_TRAINING_LENGTH = 2**20  # positions: 2 * 2**20 distances bucketed at most


def distances(n: int) -> torch.Tensor:
    """Every distance r = j - i of a length-n sequence, ascending: int64 (2n - 1,).

    >>> distances(3).tolist()
    [-2, -1, 0, 1, 2]
    """
    n = check_int("n (sequence length)", n, 1, MAX_N)
    return torch.arange(-(n - 1), n)


def readings() -> dict[str, ModuleType]:
    """Each scheme folder's ``by_distance`` module, by its folder's package name."""
    return dict(parts("by_distance"))


def __getattr__(name: str) -> Any:
    """A scheme's reading by its function's name (``t5_bias_by_distance``), from its folder."""
    for module in readings().values():
        if not name.startswith("__") and hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def matrix_from_distances(values: torch.Tensor, n: int) -> torch.Tensor:
    """The (..., n, n) matrix whose cell (i, j) holds ``values[..., r]`` at r = j - i, from
    values over ``distances(n)`` (..., 2n - 1): what the logits receive.

    >>> matrix_from_distances(torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0]), 3).tolist()
    [[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0], [-2.0, -1.0, 0.0]]
    """
    n = check_int("n (sequence length)", n, 1, 4096)
    if values.shape[-1] != 2 * n - 1:
        raise ValueError(f"values must have 2n - 1 = {2 * n - 1} distances, got {values.shape}")
    r = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # (i, j) -> j - i
    return values[..., r + n - 1]


# ---- heads by shape -----------------------------------------------------------------------------
LOCAL_REACH = 2  # |r| <= this is near
LOCAL_SHARE = 0.5  # a local head puts at least half its weight near
NOTICE = 0.1  # "near and far": at least a tenth of the weight near
FAVOUR = 2.0  # near favoured: a near key gets on average at least twice a far key's weight
ONE_SIDE_SHARE = 0.9  # a one-direction head puts at least this share of the rest on one side
SHAPES = (
    "local", "near and far", "looks back", "looks ahead", "long-range", "few far keys",
    "every key near",
)  # fmt: skip


def bias_weights(values: torch.Tensor, n: int, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(r, softmax of the bias over the keys one query sees) per head: the weights a query
    gives when every content score is equal, so position alone decides. The query is the middle
    one, (n - 1) // 2 (the last one, n - 1, when ``causal``): it sees r from -i to n - 1 - i.

    >>> r, w = bias_weights(torch.tensor([[0.0, 0.0, 0.0]]), 2, causal=False)
    >>> r.tolist(), w.tolist()
    ([0, 1], [[0.5, 0.5]])
    """
    i = n - 1 if check_bool("causal", causal) else (n - 1) // 2
    r = distances(n)
    seen = (r >= -i) & (r <= (0 if causal else n - 1 - i))
    return r[seen], torch.softmax(values.to(torch.float64)[:, seen], dim=-1)


def near_share(r: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """(heads,) the weight on keys within |r| <= LOCAL_REACH, from ``bias_weights``."""
    return weights[:, r.abs() <= LOCAL_REACH].sum(-1)


def head_shapes(values: torch.Tensor, n: int, causal: bool) -> list[str]:
    """Each head's shape from ``bias_weights`` at length n, read from two numbers: s, the share
    of its weight within |r| <= LOCAL_REACH, and f, a near key's mean weight over a far key's.
    In order, the first that holds:

    every key near   no key lies beyond LOCAL_REACH (n too short to tell)
    local            s >= LOCAL_SHARE and f >= FAVOUR
    near and far     s >= NOTICE and f >= FAVOUR (near keys favoured, most weight farther)
    looks back/ahead (bidirectional) at least ONE_SIDE_SHARE of the weight off r = 0 one side
    long-range       s < LOCAL_SHARE (so s < NOTICE, or f < FAVOUR)
    few far keys     the rest: s >= LOCAL_SHARE but f < FAVOUR, most keys being near

    >>> r = distances(64).to(torch.float64)
    >>> bias = torch.stack([-r.abs(), 0 * r, -(r - 8).abs(), -9.0 * (r > 0), -0.1 * r.abs()])
    >>> head_shapes(bias, 64, causal=False)
    ['local', 'long-range', 'looks ahead', 'looks back', 'near and far']
    >>> head_shapes(torch.zeros(1, 7), 4, causal=True), head_shapes(torch.zeros(1, 3), 2, True)
    (['few far keys'], ['every key near'])
    """
    r, weights = bias_weights(values, n, causal)
    is_near = r.abs() <= LOCAL_REACH
    s = near_share(r, weights)
    far_keys = int((~is_near).sum())
    if far_keys == 0:
        return ["every key near"] * weights.shape[0]
    near_mean = s / int(is_near.sum())
    far_mean = (1 - s) / far_keys
    favour = near_mean / far_mean.clamp(min=1e-300)
    back, ahead = weights[:, r < 0].sum(-1), weights[:, r > 0].sum(-1)
    off = (back + ahead).clamp(min=1e-300)
    shapes = []
    for h in range(weights.shape[0]):
        if s[h] >= LOCAL_SHARE and favour[h] >= FAVOUR:
            shapes.append("local")
        elif s[h] >= NOTICE and favour[h] >= FAVOUR:
            shapes.append("near and far")
        elif not causal and back[h] / off[h] >= ONE_SIDE_SHARE:
            shapes.append("looks back")
        elif not causal and ahead[h] / off[h] >= ONE_SIDE_SHARE:
            shapes.append("looks ahead")
        elif s[h] < LOCAL_SHARE:
            shapes.append("long-range")
        else:
            shapes.append("few far keys")
    return shapes
