"""Sinusoidal absolute encoding (Vaswani et al. 2017) and its dot-product similarity.

PE[pos, 2m] = sin(pos / 10000^(2m/d)),  PE[pos, 2m+1] = cos(pos / 10000^(2m/d)).
"""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import encoding_similarity, sinusoidal_encoding

# Seed 004: max_sequence_length = 10, d_model = 6, printed to 4 decimals.
SEED004_PE = [
    [0.0000, 1.0000, 0.0000, 1.0000, 0.0000, 1.0000],
    [0.8415, 0.5403, 0.0464, 0.9989, 0.0022, 1.0000],
    [0.9093, -0.4161, 0.0927, 0.9957, 0.0043, 1.0000],
    [0.1411, -0.9900, 0.1388, 0.9903, 0.0065, 1.0000],
    [-0.7568, -0.6536, 0.1846, 0.9828, 0.0086, 1.0000],
    [-0.9589, 0.2837, 0.2300, 0.9732, 0.0108, 0.9999],
    [-0.2794, 0.9602, 0.2749, 0.9615, 0.0129, 0.9999],
    [0.6570, 0.7539, 0.3192, 0.9477, 0.0151, 0.9999],
    [0.9894, -0.1455, 0.3629, 0.9318, 0.0172, 0.9999],
    [0.4121, -0.9111, 0.4057, 0.9140, 0.0194, 0.9998],
]


def definition_pe(n: int, d: int) -> torch.Tensor:
    """The formula, channel by channel, with math.sin / math.cos."""
    out = torch.zeros(n, d, dtype=torch.float64)
    for pos in range(n):
        for c in range(d):
            angle = pos / 10000 ** ((c - c % 2) / d)
            out[pos, c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return out


def test_seed004_table():
    """n = 10, d = 6 equals seed 004's printed PE within its 4-decimal rounding."""
    pe = sinusoidal_encoding(10, 6)
    assert pe.shape == (10, 6) and pe.dtype == torch.float32
    torch.testing.assert_close(pe, torch.tensor(SEED004_PE), rtol=0, atol=5.1e-5)


@given(n=st.integers(1, 40), d=st.integers(1, 17))
def test_even_channels_sine_odd_channels_cosine(n, d):
    """Every channel follows the formula, including odd d (the last channel is a sine)."""
    pe = sinusoidal_encoding(n, d, dtype=torch.float64)
    assert pe.shape == (n, d)
    torch.testing.assert_close(pe, definition_pe(n, d), rtol=0, atol=1e-12)


def test_odd_width_last_channel():
    pe = sinusoidal_encoding(5, 3, dtype=torch.float64)
    expected = [math.sin(pos / 10000 ** (2 / 3)) for pos in range(5)]
    assert pe[:, 2].tolist() == pytest.approx(expected, abs=1e-14)


@given(n=st.integers(2, 30), half=st.integers(1, 8))
def test_similarity_depends_only_on_offset_for_even_d(n, half):
    """For even d, PE_i · PE_j = sum_m cos(w_m (j - i)): a Toeplitz matrix."""
    d = 2 * half
    sim = encoding_similarity(sinusoidal_encoding(n, d, dtype=torch.float64))
    assert sim.shape == (n, n)
    torch.testing.assert_close(sim[1:, 1:], sim[:-1, :-1], rtol=0, atol=1e-12)
    freqs = [10000 ** (-2 * m / d) for m in range(half)]
    for i in range(n):
        for j in range(n):
            expected = sum(math.cos(w * (j - i)) for w in freqs)
            assert float(sim[i, j]) == pytest.approx(expected, abs=1e-12)


def test_similarity_is_not_toeplitz_for_odd_d():
    """Odd d adds an unpaired sin^2 term, so the diagonal is not constant."""
    sim = encoding_similarity(sinusoidal_encoding(4, 3, dtype=torch.float64))
    assert float(sim[0, 0]) == pytest.approx(1.0)
    assert float(sim[1, 1]) > 1.0 + 1e-6
