"""Huang et al. (2018) "skew": relative-indexed logits -> absolute-indexed, by pad and reshape.

Relative layout: x[..., i, c] is the logit of query i at distance r = c - (L - 1).
Absolute layout: y[..., i, j] is the logit of query i for key j, so y[i, j] = x[i, j - i + L - 1].
The skew moves every row by its own offset using only a pad, a reshape and a slice: no gather,
no (L, L, d) tensor. The inverses (absolute -> relative) serve the value term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from relpos_core.guard import check_fits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.trace import Trace
from relpos_core.validation import check_int, check_max_bytes, check_tensor


def _square_length(name: str, x: torch.Tensor, width: int | None = None) -> int:
    x = check_tensor(name, x, tuple(range(2, 9)))
    length = x.shape[-2]
    want = length if width is None else width
    if x.shape[-1] != want:
        raise ValueError(
            f"{name} must have shape (..., L, {'L' if width is None else '2L-1'}), "
            f"got {tuple(x.shape)}"
        )
    return length


def _guard(call: str, x: torch.Tensor, length: int, cells: int, max_bytes: object) -> None:
    """Refuse ``call`` on ``x`` (..., L, ·) if the ``cells`` values per matrix it holds at once
    (its padded copies; every matrix of the leading axes has its own) exceed ``max_bytes``."""
    matrices = math.prod(x.shape[:-2])
    check_fits(
        f"{call} of a {tuple(x.shape)} tensor (L = {length})",
        matrices * cells * x.element_size(),
        check_max_bytes(max_bytes),
        x.device,
    )


@dataclass(frozen=True)
class SkewTrace(Trace):
    """Every intermediate of one skew, for the step-by-step view."""

    input: torch.Tensor
    padded: torch.Tensor
    reshaped: torch.Tensor
    result: torch.Tensor
    masked: bool

    FORMULAS = {
        "input": "S[i, c] = q_i · Er_c,  distance r = c - (L-1)",
        "padded": "pad one column",
        "reshaped": "reshape the padded matrix",
        "result": "S_rel[i, j] = S[i, j - i + L - 1]",
    }


def trace_skew_masked(x: torch.Tensor, *, max_bytes: int | None = None) -> SkewTrace:
    """Music Transformer skew with every intermediate. See :func:`skew_masked`."""
    length = _square_length("x", x)
    _guard("the masked skew", x, length, length * (length + 1), max_bytes)
    padded = F.pad(x, (1, 0))  # (..., L, L+1): zero column on the left
    reshaped = padded.reshape(*x.shape[:-2], length + 1, length)  # (..., L+1, L)
    result = reshaped[..., 1:, :]  # drop the first row -> (..., L, L)
    return SkewTrace(x, padded, reshaped, result, masked=True)


def skew_masked(x: torch.Tensor, *, max_bytes: int | None = None) -> torch.Tensor:
    """Relative -> absolute for causal attention (Huang et al. 2018, Sec. 3.4.1).

    x: (..., L, L), [..., query_position, distance + L - 1] for distances -(L-1)..0,
    i.e. column c holds distance c - (L - 1). Returns (..., L, L), [..., query, key]:
    out[i, j] = x[i, j - i + L - 1] for j <= i.

    Cells above the diagonal (j > i) are NOT relative logits and must be masked: out[i, i+1]
    holds the zero pad, and out[i, j] for j > i + 1 holds x[i + 1, j - i - 2] (a value of the
    next query row). Steps: pad one zero column on the left, reshape to (L+1, L), drop row 0.
    ``max_bytes`` as in ``relative_attention`` (None: the device's memory).

    >>> skew_masked(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))  # distances (-1, 0) per row
    tensor([[2., 0.],
            [3., 4.]])
    """
    return trace_skew_masked(x, max_bytes=max_bytes).result


def trace_skew_unmasked(x: torch.Tensor, *, max_bytes: int | None = None) -> SkewTrace:
    """Two-sided skew with every intermediate. See :func:`skew_unmasked`."""
    x = check_tensor("x", x, tuple(range(2, 9)), finite=False)
    length = _square_length("x", x, width=2 * x.shape[-2] - 1)
    # the padded (L, 2L) and the flattened 2L^2 + L - 1 values, both kept
    _guard("the unmasked skew", x, length, 4 * length * length + length - 1, max_bytes)
    lead = x.shape[:-2]
    padded = F.pad(x, (0, 1))  # (..., L, 2L): zero column on the right
    flat = F.pad(padded.reshape(*lead, 2 * length * length), (0, length - 1))  # + L-1 zeros
    reshaped = flat.reshape(*lead, length + 1, 2 * length - 1)  # (..., L+1, 2L-1)
    result = reshaped[..., :length, length - 1 :]  # (..., L, L)
    return SkewTrace(x, padded, reshaped, result, masked=False)


def skew_unmasked(x: torch.Tensor, *, max_bytes: int | None = None) -> torch.Tensor:
    """Relative -> absolute for attention in both directions (tensor2tensor's unmasked skew).

    x: (..., L, 2L-1), [..., query_position, distance + L - 1] for distances -(L-1)..L-1.
    Returns (..., L, L) with out[i, j] = x[i, j - i + L - 1], valid everywhere.
    Steps: pad a zero column on the right -> (L, 2L), flatten, pad L-1 zeros,
    reshape to (L+1, 2L-1), keep [:L, L-1:]. ``max_bytes`` as in ``relative_attention``.

    >>> skew_unmasked(torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))  # distances (-1, 0, 1)
    tensor([[2., 3.],
            [4., 5.]])
    """
    return trace_skew_unmasked(x, max_bytes=max_bytes).result


def absolute_to_relative_unmasked(y: torch.Tensor, *, max_bytes: int | None = None) -> torch.Tensor:
    """Inverse of :func:`skew_unmasked`: (..., L, L) [query, key] -> (..., L, 2L-1) [query, r+L-1].

    out[i, j - i + L - 1] = y[i, j]; distances that fall outside the sequence for row i are 0.
    The value term uses it: sum_j a_ij w_{j-i} = (relative weights) @ Er.

    >>> absolute_to_relative_unmasked(torch.tensor([[2.0, 3.0], [4.0, 5.0]]))
    tensor([[0., 2., 3.],
            [4., 5., 0.]])
    """
    length = _square_length("y", y)
    # the padded (L, 2L-1) and the flattened L (2L-1) + L values, at once
    _guard("absolute_to_relative_unmasked", y, length, 2 * length * (2 * length - 1) + length,
           max_bytes)  # fmt: skip
    lead = y.shape[:-2]
    padded = F.pad(y, (0, length - 1))  # (..., L, 2L-1)
    flat = F.pad(padded.reshape(*lead, length * (2 * length - 1)), (length, 0))
    return flat.reshape(*lead, length, 2 * length)[..., 1:]  # (..., L, 2L-1)


def absolute_to_relative_masked(y: torch.Tensor, *, max_bytes: int | None = None) -> torch.Tensor:
    """Inverse of :func:`skew_masked` on and below the diagonal.

    y: (..., L, L) [query, key], only j <= i used. Returns (..., L, L) [query, r + L - 1] for
    r = j - i in -(L-1)..0; distances before the sequence start (r < -i) are 0.

    >>> absolute_to_relative_masked(torch.tensor([[2.0, 9.0], [3.0, 4.0]]))
    tensor([[0., 2.],
            [3., 4.]])
    """
    length = _square_length("y", y)
    # the lower triangle (L, L) and its padded copy (L+1, L), at once
    _guard("absolute_to_relative_masked", y, length, length * (2 * length + 1), max_bytes)
    lower = torch.tril(y)  # zero j > i: those cells are what lands in the out-of-range slots
    padded = F.pad(lower, (0, 0, 1, 0))  # (..., L+1, L): zero row on top
    reshaped = padded.reshape(*y.shape[:-2], length, length + 1)
    return reshaped[..., 1:]  # drop the first column -> (..., L, L)


def skew_embeddings(table: torch.Tensor, length: int) -> torch.Tensor:
    """Er for the two-sided skew: row c holds w_{clip(c - (L-1), k)}, c in 0..2L-2.

    (2k+1, d) -> (2L-1, d). With L - 1 <= k this is a slice of the table, else edge rows repeat.

    >>> skew_embeddings(torch.arange(3.0)[:, None], 3).flatten()  # k = 1, L = 3
    tensor([0., 0., 1., 2., 2.])
    """
    table = check_tensor("table", table, 2)
    length = check_int("length (sequence length L)", length, 1)
    clip_distance_from_table(table)  # checks the table has 2k + 1 rows
    rows = 2 * length - 1
    check_fits(  # the output and two int64 index vectors at once
        f"skew_embeddings with length = {length} (a ({rows}, {table.shape[1]}) table)",
        rows * (table.shape[1] * table.element_size() + 16),
        None,
        table.device,
    )
    return skew_embeddings_unguarded(table, length)


def skew_embeddings_unguarded(table: torch.Tensor, length: int) -> torch.Tensor:
    """``skew_embeddings`` without its checks and memory guard, for calls already sized."""
    k = (table.shape[0] - 1) // 2
    distances = torch.arange(-(length - 1), length, device=table.device)
    return table[distances.clamp(-k, k) + k]  # (2L-1, d)
