"""Shaw et al.'s clipped table read at every distance r = j - i."""

from __future__ import annotations

import torch

from relpos_core.by_distance import distances
from relpos_core.validation import check_tensor


def table_by_distance(table: torch.Tensor, n: int) -> torch.Tensor:
    """Shaw et al.'s w_clip(r, k) for every r of ``distances(n)``: (2n - 1, d), from a table
    (2k + 1, d) whose row k + r holds distance r.

    >>> table_by_distance(torch.tensor([[-1.0], [0.0], [1.0]]), 3).flatten().tolist()
    [-1.0, -1.0, 0.0, 1.0, 1.0]
    """
    check_tensor("table", table, 2)
    rows = table.shape[0]
    if rows % 2 == 0:
        raise ValueError(f"table must have 2k + 1 rows (an odd count), got {rows}")
    k = rows // 2
    return table[distances(n).clamp(-k, k) + k]
