"""ShawRelative against Shaw et al. 2018, eqs. (3)-(5), written as loops, and against the
project's own ``relative_attention`` with the same two tables.

    e_ij = q_i · (k_j + a^K_ij) / sqrt(d),   z_i = sum_j alpha_ij (v_j + a^V_ij)
    a^K_ij = w^K_clip(j-i, k),   clip(x, k) = max(-k, min(k, x))
"""

import math

import pytest
import torch

from relpos_core import relative_attention
from relpos_core.schemes import ShawRelative
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


def make(k: int, heads: int = 3, d: int = 4, seed: int = 0) -> ShawRelative:
    return ShawRelative(heads, d, k, generator=torch.Generator().manual_seed(seed)).double()


def clipped_row(i: int, j: int, offset: int, k: int) -> int:
    """Row of the (2k+1, d) table for the query of row i and key j."""
    return max(-k, min(k, j - (offset + i))) + k


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
@pytest.mark.parametrize("k", [0, 2, 9])
def test_equals_the_paper(n_q, n_k, offset, k, causal):
    scheme = make(k)
    q, k_, v = qkv(n_q, n_k)
    w_k, w_v = scheme.table_k.detach(), scheme.table_v.detach()  # (2k+1, d)
    d = q.shape[-1]

    def relative(b, h, i, j):  # q_i · a^K_ij / sqrt(d), eq. (4)
        return float(q[b, h, i] @ w_k[clipped_row(i, j, offset, k)]) / math.sqrt(d)

    want = {"content": content_loop(q, k_), "relative": cell_loop((2, 3, n_q, n_k), relative)}
    assert_scheme_matches(
        scheme,
        q,
        k_,
        v,
        want,
        causal=causal,
        offset=offset,
        value_vector=lambda h, i, j: w_v[clipped_row(i, j, offset, k)],
    )


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
def test_equals_relative_attention_with_its_tables(n_q, n_k, offset, causal):
    scheme = make(2)
    q, k, v = qkv(n_q, n_k, seed=5)
    z, alpha = scheme(q, k, v, causal=causal, query_offset=offset)
    want_z, want_alpha = relative_attention(
        q,
        k,
        v,
        scheme.table_k.detach(),
        scheme.table_v.detach(),
        causal=causal,
        query_offset=offset,
        return_weights=True,
    )
    torch.testing.assert_close(alpha, want_alpha, **EXACT)
    torch.testing.assert_close(z, want_z, **EXACT)


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(make(2), 7, causal)


def test_tables_are_shared_by_heads_and_sized_2k_plus_1():
    scheme = ShawRelative(5, 6, 3)
    assert scheme.table_k.shape == scheme.table_v.shape == (7, 6)


@pytest.mark.parametrize(("n_q", "n_k", "offset", "causal"), [(3, 3, 0, True), (2, 4, 1, False)])
def test_gradients(n_q, n_k, offset, causal):
    names = assert_gradients(make(1, heads=2, d=2), n_q, n_k, offset, causal)
    assert names == ["table_k", "table_v"]


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = False  # q_i · a^K_ij reads the query: not a function of j - i alone


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    k = int(settings["max_relative_position"])
    return 2 * (2 * k + 1) * d  # w^K and w^V, (2k + 1, d) each, shared by the heads
