"""Transformer-XL's ``rel_shift`` (Dai et al. 2019, Appendix B): relative layout -> absolute
layout by pad, reshape and slice, the same trick as the Music Transformer's masked skew.

Relative layout: x[..., i, c] belongs to distance i - j = K - 1 - c for the query i of Q queries
at positions M + i (M = K - Q memory positions before them) and K keys. The shift gives
out[i, j] = x[i, j + Q - 1 - i], the right value wherever j <= M + i (the causal region,
Transformer-XL's only use). Every cell with j > M + i holds the zero pad or a value of the next
query row: the shift is wrong there and those cells must be masked.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from relpos_core.trace import Trace
from relpos_core.validation import check_tensor


@dataclass(frozen=True)
class RelShiftTrace(Trace):
    """Every intermediate of one rel_shift (shapes for Q queries and K keys)."""

    input: torch.Tensor  # (..., Q, K): column c is distance i - j = K - 1 - c
    padded: torch.Tensor  # (..., Q, K+1): a zero column on the left
    reshaped: torch.Tensor  # (..., K+1, Q): the same numbers read in rows of Q
    sliced: torch.Tensor  # (..., K, Q): first row dropped
    result: torch.Tensor  # (..., Q, K): read back as Q rows; right where ``valid``
    valid: torch.Tensor  # bool (Q, K): j <= (K - Q) + i

    FORMULAS = {
        "input": "x[i, c] = (q_i + v) · W_R R_(K-1-c)",
        "padded": "pad one zero column on the left",
        "reshaped": "view the (Q, K+1) numbers as (K+1, Q)",
        "sliced": "drop the first row",
        "result": "view as (Q, K): out[i, j] = x[i, j + Q - 1 - i] where j <= M + i",
    }


def trace_rel_shift(x: torch.Tensor) -> RelShiftTrace:
    """``rel_shift`` with every intermediate; x (..., Q, K) with K >= Q. See the module doc."""
    x = check_tensor("x", x, tuple(range(2, 9)))
    q_len, k_len = x.shape[-2:]
    if k_len < q_len:
        raise ValueError(
            f"x must have at least as many keys as queries (..., Q, K >= Q), got {tuple(x.shape)}"
        )
    lead = x.shape[:-2]
    padded = F.pad(x, (1, 0))  # (..., Q, K+1)
    reshaped = padded.reshape(*lead, k_len + 1, q_len)
    sliced = reshaped[..., 1:, :]  # (..., K, Q)
    result = sliced.reshape(*lead, q_len, k_len)
    rows = torch.arange(q_len, device=x.device)[:, None]
    cols = torch.arange(k_len, device=x.device)[None, :]
    valid = cols <= rows + (k_len - q_len)
    return RelShiftTrace(x, padded, reshaped, sliced, result, valid)


def rel_shift(x: torch.Tensor) -> torch.Tensor:
    """Transformer-XL's shift: (..., Q, K) relative -> (..., Q, K) absolute, right for j <= M + i.

    >>> rel_shift(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))  # distances (1, 0) in each row
    tensor([[2., 0.],
            [3., 4.]])
    """
    return trace_rel_shift(x).result
