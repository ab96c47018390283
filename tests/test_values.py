"""The relative value term z^rel_i = sum_j alpha_ij w^V_{clip(j-i, k)} (Shaw et al. 2018, eq. 3).

Every method is checked against a numpy double loop written here, then against "loop"; with a
query offset the queries sit at positions query_offset, query_offset + 1, ... of the keys.
"""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import LOGIT_METHODS, relative_values

DTYPES = (torch.float32, torch.float64)


def definition_values(weights: np.ndarray, table: np.ndarray, query_offset: int = 0) -> np.ndarray:
    """z[b, h, r, :] = sum_j weights[b, h, r, j] * w[clip(j - i, k) + k] for the query at
    position i = query_offset + r, pair by pair."""
    k = (table.shape[0] - 1) // 2
    batch, heads, n_q, n_k = weights.shape
    out = np.zeros((batch, heads, n_q, table.shape[1]))
    for r in range(n_q):
        i = query_offset + r
        for j in range(n_k):
            w = table[max(-k, min(k, j - i)) + k]
            out[:, :, r, :] += weights[:, :, r, j, None] * w
    return out


def tolerance(dtype: torch.dtype) -> dict:
    return (
        {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-12}
    )


@st.composite
def value_problems(draw, square: bool = False):
    """Random (weights, table, query_offset): arbitrary real weights (the term is linear in
    them); offsets 0 (most often), inside the keys, n_k - n_q and past the last key."""
    n_q = draw(st.integers(1, 7))
    n_k = n_q if square else draw(st.integers(1, 7))
    k = draw(st.sampled_from([0, 1, 2, max(n_q, n_k) - 1, max(n_q, n_k) + 3]))
    d = draw(st.integers(1, 5))
    dtype = draw(st.sampled_from(DTYPES))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), n_q, n_k)
    weights = torch.randn(shape, generator=gen, dtype=dtype)
    table = torch.randn(2 * k + 1, d, generator=gen, dtype=dtype)
    offset = 0 if square else draw(st.sampled_from([0, 0, 1, max(n_k - n_q, 0), n_k + 2]))
    return weights, table, offset


@given(problem=value_problems())
def test_every_method_matches_the_definition(problem):
    """All methods (loop included) equal the numpy definition; skew needs n_q == n_k and no
    offset."""
    weights, table, offset = problem
    expected = torch.from_numpy(
        definition_values(weights.double().numpy(), table.double().numpy(), offset)
    )
    loop = relative_values(weights, table, method="loop", query_offset=offset)
    n_q, n_k = weights.shape[-2:]
    for method in LOGIT_METHODS:
        if method == "skew" and (n_q != n_k or offset):
            with pytest.raises(ValueError, match=rf"n_q={n_q}, n_k={n_k}, query_offset={offset}"):
                relative_values(weights, table, method=method, query_offset=offset)
            continue
        got = relative_values(weights, table, method=method, query_offset=offset)
        assert got.dtype == weights.dtype
        assert got.shape == (*weights.shape[:-1], table.shape[1])
        torch.testing.assert_close(got.double(), expected, **tolerance(weights.dtype))
        torch.testing.assert_close(got, loop, **tolerance(weights.dtype))


@given(problem=value_problems(square=True))
def test_skew_method_matches_the_definition_on_square_inputs(problem):
    """n_q == n_k drawn on purpose so the skew path runs every example."""
    weights, table, _ = problem
    expected = torch.from_numpy(definition_values(weights.double().numpy(), table.double().numpy()))
    got = relative_values(weights, table, method="skew")
    torch.testing.assert_close(got.double(), expected, **tolerance(weights.dtype))


@pytest.mark.parametrize("method", LOGIT_METHODS)
def test_single_bucket_scales_the_one_vector_by_row_mass(method):
    """k = 0: every key uses w_0, so z_i = (sum_j alpha_ij) w_0."""
    weights = torch.tensor([[[[0.25, 0.75, 0.0], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]]])
    w0 = torch.tensor([[2.0, -1.0]])
    got = relative_values(weights, w0, method=method)[0, 0]
    assert got.tolist() == [[2.0, -1.0], [12.0, -6.0], [0.0, 0.0]]


@pytest.mark.parametrize("method", LOGIT_METHODS)
def test_hand_computed_example(method):
    """k = 1, w_r = (r, 1): uniform weights over 3 keys give the mean clipped distance."""
    weights = torch.full((1, 1, 3, 3), 1.0 / 3.0, dtype=torch.float64)
    table = torch.tensor([[-1.0, 1.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    got = relative_values(weights, table, method=method)[0, 0]
    # row 0 sees distances (0, 1, 2->1), row 1 (-1, 0, 1), row 2 (-2->-1, -1, 0)
    expected = torch.tensor([[2 / 3, 1.0], [0.0, 1.0], [-2 / 3, 1.0]], dtype=torch.float64)
    torch.testing.assert_close(got, expected)
