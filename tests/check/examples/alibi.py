"""ALiBi's bias as people write it: right, and wrong in each known way. None calls the library.
Each takes (heads, n) and returns the bias (heads, n, n); only keys j <= query i count."""

import math

import numpy as np
import torch


def _slopes_press(heads: int) -> list[float]:
    """The paper's code (ofirpress/attention_with_linear_biases), as copied everywhere."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        return power_of_2(heads)
    closest = 2 ** math.floor(math.log2(heads))
    return power_of_2(closest) + _slopes_press(2 * closest)[0::2][: heads - closest]


def right_press(heads, n):
    """The paper's slopes times -(i - j), a distance matrix broadcast over heads."""
    m = torch.tensor(_slopes_press(heads), dtype=torch.float64)
    pos = torch.arange(n)
    distance = (pos[:, None] - pos[None, :]).to(torch.float64)  # i - j
    return -m[:, None, None] * distance


def right_bloom(heads, n):
    """BLOOM's build_alibi_tensor: m_h · j, the same per row up to m_h · i."""
    closest = 2 ** math.floor(math.log2(heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float64)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.float64))
    if closest != heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float64)
        extra = torch.arange(1, 1 + 2 * (heads - closest), 2, dtype=torch.float64)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra)])
    keys = torch.arange(n, dtype=torch.float64)
    return (slopes[:, None] * keys[None, :])[:, None, :].expand(heads, n, n)


def right_numpy_abs(heads, n):
    """-m_h |i - j| in numpy with the slopes as 2^(-8h/H) written out (and the paper's rule)."""

    def geometric(count):
        return [2.0 ** (-8 * h / count) for h in range(1, count + 1)]

    closest = 2 ** int(np.log2(heads))
    m = geometric(closest) + geometric(2 * closest)[0::2][: heads - closest]
    i, j = np.ogrid[:n, :n]
    return -np.array(m)[:, None, None] * np.abs(i - j)


def wrong_sign(heads, n):
    # adds +m_h (i - j): farther keys get a larger logit
    return -right_press(heads, n)


def wrong_direct_slopes(heads, n):
    # 2^(-8h/H) for every H: right for powers of two only
    m = torch.tensor([2 ** (-8 * h / heads) for h in range(1, heads + 1)], dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64)
    return -m[:, None, None] * (pos[:, None] - pos[None, :])


def wrong_heads_from_zero(heads, n):
    # range(heads) in the exponent: the first head gets slope 1
    def geometric(count):
        return [2.0 ** (-8 * h / count) for h in range(count)]

    closest = 2 ** int(math.log2(heads))
    m = np.array(geometric(closest) + geometric(2 * closest)[0::2][: heads - closest])
    i, j = np.ogrid[:n, :n]
    return -m[:, None, None] * (i - j)


def wrong_reversed_heads(heads, n):
    # the slopes flipped: head 1 gets the smallest slope
    return right_press(heads, n).flip(0)
