"""ALiBi: Press, Smith, Lewis 2022, "Train Short, Test Long: Attention with Linear Biases
Enables Input Length Extrapolation", Sec. 3.

    e_ij = q_i · k_j / sqrt(d) - m_h |j - i|

No learned parameter: head h (1-based) has slope m_h = 2^(-8h/H) for H heads, a geometric
sequence (1/2, 1/4, ..., 1/256 for 8 heads). For H not a power of two the paper takes the
slopes of the nearest smaller power of two, then every other slope of the next power of two.
The paper's causal code adds m_h (j - i) for j <= i, the same as -m_h |j - i| there.
"""

from __future__ import annotations

import math

import torch

from relpos_core.lookup import relative_distances_unguarded
from relpos_core.schemes.base import PositionScheme
from relpos_core.validation import check_int, check_real


def alibi_slopes(heads: int, max_bias: float = 8.0) -> torch.Tensor:
    """m_1..m_H as float64 (H,): start = 2^(-max_bias/H), m_h = start^h (H a power of two).

    >>> alibi_slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> alibi_slopes(3).tolist()  # two from H = 2, then the first odd one of H = 4
    [0.0625, 0.00390625, 0.25]
    """
    heads = check_int("heads", heads, 1, 4096)
    max_bias = check_real("max_bias (slope exponent)", max_bias, 0, 64, low_open=True)

    def power_of_two(count: int) -> list[float]:
        start = 2.0 ** (-max_bias / count)
        return [start ** (h + 1) for h in range(count)]

    closest = 2 ** int(math.floor(math.log2(heads)))
    slopes = power_of_two(closest)
    if closest < heads:
        slopes += alibi_slopes(2 * closest, max_bias).tolist()[0::2][: heads - closest]
    return torch.tensor(slopes, dtype=torch.float64)


class ALiBi(PositionScheme):
    name = "alibi"
    TERMS = ("content", "bias")
    POSITION_TERMS = ("bias",)

    def __init__(self, heads: int, head_dim: int, max_bias: float = 8.0) -> None:
        super().__init__(heads, head_dim)
        self.max_bias = check_real("max_bias (slope exponent)", max_bias, 0, 64, low_open=True)
        slopes = alibi_slopes(self.heads, self.max_bias)
        self.register_buffer("slopes", slopes, persistent=False)

    def position_terms(self, q, k, causal, query_offset):
        r = relative_distances_unguarded(q.shape[2], k.shape[2], query_offset, q.device)
        slopes = self.slopes.to(q.dtype)[:, None, None]  # (h,1,1)
        return {"bias": (-slopes * r.abs().to(q.dtype))[None]}  # (1,h,i,j)

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        return n_q * n_k * 8  # the int64 distances

    def extra_repr(self) -> str:
        return super().extra_repr() + f", max_bias={self.max_bias}"
