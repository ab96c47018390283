"""ALiBi's bias -m_h |r| at every distance r = j - i, from its slopes."""

from __future__ import annotations

import torch

from relpos_core.by_distance import distances
from relpos_core.validation import check_tensor


def alibi_by_distance(slopes: torch.Tensor, n: int) -> torch.Tensor:
    """ALiBi's -m_h |r| for every head and r of ``distances(n)``: (heads, 2n - 1) float64.

    >>> alibi_by_distance(torch.tensor([0.5]), 2).tolist()
    [[-0.5, -0.0, -0.5]]
    """
    check_tensor("slopes", slopes, 1)
    return -slopes.to(torch.float64)[:, None] * distances(n).abs()[None].to(torch.float64)
