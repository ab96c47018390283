"""Rotary against the RoFormer paper, eq. (15): R_(Theta,p) is block diagonal with one 2x2
rotation [[cos p theta_m, -sin p theta_m], [sin p theta_m, cos p theta_m]] per channel pair
(2m, 2m+1), theta_m = base^(-2m/d). Built here as explicit matrices:

    e_ij = (R_i q_i) · (R_j k_j) / sqrt(d) = q_i^T R_(j-i) k_j / sqrt(d)   (eq. 16)

and the position term is e_ij - q_i · k_j / sqrt(d).
"""

import math

import pytest
import torch

from relpos_core.schemes import Rotary
from tests.schemes.plain import (
    EXACT,
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    content_loop,
    qkv,
)


def rotation(p: int, d: int, base: float) -> torch.Tensor:
    """R_(Theta,p): (d, d) block diagonal."""
    out = torch.zeros(d, d, dtype=torch.float64)
    for m in range(d // 2):
        angle = p * base ** (-2 * m / d)
        c, s = math.cos(angle), math.sin(angle)
        out[2 * m, 2 * m], out[2 * m, 2 * m + 1] = c, -s
        out[2 * m + 1, 2 * m], out[2 * m + 1, 2 * m + 1] = s, c
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
@pytest.mark.parametrize("base", [10000.0, 3.0])
def test_equals_the_relative_rotation(n_q, n_k, offset, causal, base):
    """Position term from q^T R_(j-i) k; the absolute form (R_i q) · (R_j k) agrees."""
    scheme = Rotary(3, 6, base)
    q, k, v = qkv(n_q, n_k, d=6)
    root_d = math.sqrt(6)

    def rotated(b, h, i, j):
        return float(q[b, h, i] @ rotation(j - (offset + i), 6, base) @ k[b, h, j]) / root_d

    def absolute(b, h, i, j):
        qi = rotation(offset + i, 6, base) @ q[b, h, i]
        return float(qi @ (rotation(j, 6, base) @ k[b, h, j])) / root_d

    content = content_loop(q, k)
    logits = cell_loop((2, 3, n_q, n_k), rotated)
    torch.testing.assert_close(cell_loop((2, 3, n_q, n_k), absolute), logits, **EXACT)
    want = {"content": content, "rotation": logits - content}
    assert_scheme_matches(scheme, q, k, v, want, causal=causal, offset=offset)


def test_rotation_matrices_compose():
    """R_i^T R_j = R_(j-i): the property the relative form rests on."""
    torch.testing.assert_close(
        rotation(3, 4, 10.0).T @ rotation(7, 4, 10.0), rotation(4, 4, 10.0), **EXACT
    )


@pytest.mark.parametrize("base", [10000.0, 2.0])
def test_golden_at_two_channels(base):
    """d = 2: theta_0 = base^0 = 1 whatever the base. q = (1, 2) at position 0, k = (3, -1) at
    position 1: R_1 k = (3 cos 1 + sin 1, 3 sin 1 - cos 1), so q · R_1 k = cos 1 + 7 sin 1
    = 0.5403023 + 7 x 0.8414710 = 6.4305992; q · k = 1. Logit 6.4305992 / sqrt 2 = 4.5471203,
    position term (6.4305992 - 1) / sqrt 2 = 3.8400135."""
    scheme = Rotary(1, 2, base)
    q = torch.tensor([[[[1.0, 2.0]]]], dtype=torch.float64)
    k = torch.tensor([[[[5.0, 5.0], [3.0, -1.0]]]], dtype=torch.float64)
    logit = scheme.logits(q, k)[0, 0, 0, 1]
    position = scheme.position_term(q, k)[0, 0, 0, 1]
    assert math.isclose(float(logit), (math.cos(1) + 7 * math.sin(1)) / math.sqrt(2))
    assert abs(float(logit) - 4.5471203) < 1e-7
    assert abs(float(position) - 3.8400135) < 1e-7


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(Rotary(3, 4), 7, causal)


def test_gradients_and_nothing_learned():
    assert assert_gradients(Rotary(2, 2), 3, 3, 0, True) == []
    assert assert_gradients(Rotary(2, 4), 2, 4, 1, False) == []


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = False  # q_i^T (R_(j-i) - I) k_j reads the query and the key


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    return 0  # the frequencies are fixed
