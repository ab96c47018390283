"""The relative key term S_rel[b, h, i, j] = q_i · w_{clip(j-i, k)} (Shaw et al. 2018, eq. 4).

Every method is checked against a definition written here in numpy (not against the package's
own "loop"), then against "loop", and on seed 000's printed numbers; with a query offset the
queries sit at positions query_offset, query_offset + 1, ... of the keys.
"""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    LOGIT_METHODS,
    relative_logits,
    skew_embeddings,
    trace_matmul_logits,
)

DTYPES = (torch.float32, torch.float64)

SEED000_VOCAB = [
    [-7, 4, 5, -4, 6],
    [-1, -2, -6, -3, 6],
    [6, -3, 2, 5, 7],
    [-3, 6, 2, 3, 1],
    [-9, 5, 8, -1, 0],
]
# Seed 000's e_by_def, (b, h, n, n) = (2, 3, 4, 4), for x = arange(120).reshape(2, 3, 4, 5).
SEED000_E_BY_DEF = [
    [
        [[44, 23, 18, 18], [-29, 129, 68, 33], [66, -59, 214, 113], [86, 86, -89, 299]],
        [[384, 203, 78, 78], [-149, 469, 248, 93], [146, -179, 554, 293], [166, 166, -209, 639]],
        [[724, 383, 138, 138], [-269, 809, 428, 153], [226, -299, 894, 473], [246, 246, -329, 979]],
    ],
    [
        [
            [1064, 563, 198, 198],
            [-389, 1149, 608, 213],
            [306, -419, 1234, 653],
            [326, 326, -449, 1319],
        ],
        [
            [1404, 743, 258, 258],
            [-509, 1489, 788, 273],
            [386, -539, 1574, 833],
            [406, 406, -569, 1659],
        ],
        [
            [1744, 923, 318, 318],
            [-629, 1829, 968, 333],
            [466, -659, 1914, 1013],
            [486, 486, -689, 1999],
        ],
    ],
]
# Seed 000, step 4: x_t_r @ a^K^T, shape (n, b*h, n) = (4, 6, 4).
SEED000_STEP4 = [
    [[44, 23, 18, 18], [384, 203, 78, 78], [724, 383, 138, 138], [1064, 563, 198, 198],
     [1404, 743, 258, 258], [1744, 923, 318, 318]],
    [[-29, 129, 68, 33], [-149, 469, 248, 93], [-269, 809, 428, 153], [-389, 1149, 608, 213],
     [-509, 1489, 788, 273], [-629, 1829, 968, 333]],
    [[66, -59, 214, 113], [146, -179, 554, 293], [226, -299, 894, 473], [306, -419, 1234, 653],
     [386, -539, 1574, 833], [466, -659, 1914, 1013]],
    [[86, 86, -89, 299], [166, 166, -209, 639], [246, 246, -329, 979], [326, 326, -449, 1319],
     [406, 406, -569, 1659], [486, 486, -689, 1999]],
]  # fmt: skip


def definition_logits(
    q: np.ndarray, table: np.ndarray, n_k: int, query_offset: int = 0
) -> np.ndarray:
    """e[b, h, r, j] = sum_c q[b, h, r, c] * w[clip(j - i, k) + k, c] for the query at position
    i = query_offset + r, one pair at a time."""
    k = (table.shape[0] - 1) // 2
    batch, heads, n_q, _ = q.shape
    out = np.zeros((batch, heads, n_q, n_k))
    for r in range(n_q):
        i = query_offset + r
        for j in range(n_k):
            w = table[max(-k, min(k, j - i)) + k]
            out[:, :, r, j] = q[:, :, r, :] @ w
    return out


def tolerance(dtype: torch.dtype) -> dict:
    return (
        {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-12}
    )


@st.composite
def logit_problems(draw, square: bool = False):
    """Random (q, table, n_k, query_offset): k from 0 through past the sequence length, both
    float dtypes, offsets 0 (most often), inside the keys, tensor2tensor's n_k - n_q and past
    the last key."""
    n_q = draw(st.integers(1, 7))
    n_k = n_q if square else draw(st.integers(1, 7))
    k = draw(st.sampled_from([0, 1, 2, max(n_q, n_k) - 1, max(n_q, n_k) + 3]))
    d = draw(st.integers(1, 5))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), n_q, d)
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**31 - 1))
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(shape, generator=gen, dtype=dtype)
    table = torch.randn(2 * k + 1, d, generator=gen, dtype=dtype)
    offset = 0 if square else draw(st.sampled_from([0, 0, 1, max(n_k - n_q, 0), n_k + 2]))
    return q, table, n_k, offset


@given(problem=logit_problems())
def test_every_method_matches_the_definition(problem):
    """All methods (loop included) equal the numpy definition; skew needs n_q == n_k and no
    offset."""
    q, table, n_k, offset = problem
    expected = torch.from_numpy(
        definition_logits(q.double().numpy(), table.double().numpy(), n_k, offset)
    )
    loop = relative_logits(q, table, n_k, method="loop", query_offset=offset)
    for method in LOGIT_METHODS:
        if method == "skew" and (q.shape[-2] != n_k or offset):
            with pytest.raises(ValueError, match=rf"n_q=\d+, n_k=\d+, query_offset={offset}"):
                relative_logits(q, table, n_k, method=method, query_offset=offset)
            continue
        got = relative_logits(q, table, n_k, method=method, query_offset=offset)
        assert got.dtype == q.dtype and got.shape == (*q.shape[:-1], n_k)
        torch.testing.assert_close(got.double(), expected, **tolerance(q.dtype))
        torch.testing.assert_close(got, loop, **tolerance(q.dtype))


@given(problem=logit_problems(square=True))
def test_skew_method_matches_the_definition_on_square_inputs(problem):
    """n_q == n_k drawn on purpose so the skew path is exercised every example."""
    q, table, n_k, _ = problem
    expected = torch.from_numpy(definition_logits(q.double().numpy(), table.double().numpy(), n_k))
    got = relative_logits(q, table, method="skew")
    torch.testing.assert_close(got.double(), expected, **tolerance(q.dtype))


def test_n_k_defaults_to_n_q():
    q = torch.randn(1, 2, 3, 4)
    table = torch.randn(5, 4)
    assert relative_logits(q, table).shape == (1, 2, 3, 3)


@given(length=st.integers(1, 8), k=st.integers(0, 10))
def test_skew_embeddings_row_c_is_distance_c_minus_length_plus_one(length, k):
    """Er[c] = w_{clip(c - (L-1), k)} for c in 0..2L-2."""
    table = torch.arange(float(2 * k + 1))[:, None] * torch.tensor([[1.0, -2.0]])
    e_r = skew_embeddings(table, length)
    assert e_r.shape == (2 * length - 1, 2)
    for c in range(2 * length - 1):
        r = max(-k, min(k, c - (length - 1)))
        assert torch.equal(e_r[c], table[r + k])


def seed000_inputs(dtype=torch.float64):
    x = torch.arange(2 * 3 * 4 * 5, dtype=dtype).reshape(2, 3, 4, 5)
    vocab = torch.tensor(SEED000_VOCAB, dtype=dtype)
    return x, vocab


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", LOGIT_METHODS)
def test_seed000_e_by_def_all_methods(method, dtype):
    """Seed 000's printed e_by_def, exactly (integers well inside float32's exact range)."""
    x, vocab = seed000_inputs(dtype)
    got = relative_logits(x, vocab, method=method)
    assert got.tolist() == SEED000_E_BY_DEF


def test_seed000_matmul_trace_shapes_and_values():
    """Seed 000's six steps: intermediate shapes and the printed step-4 product."""
    x, vocab = seed000_inputs()
    trace = trace_matmul_logits(x, vocab)
    assert trace.q_t.shape == (4, 2, 3, 5)
    assert trace.q_t_r.shape == (4, 6, 5)
    assert trace.product.shape == (4, 6, 4)
    assert trace.product_r.shape == (4, 2, 3, 4)
    assert trace.result.shape == (2, 3, 4, 4)
    assert trace.a_k.shape == (4, 4, 5)
    assert trace.product.tolist() == SEED000_STEP4
    assert trace.result.tolist() == SEED000_E_BY_DEF
    # step 3: row i holds query i of (batch 0 head 0, batch 0 head 1, ..., batch 1 head 2)
    assert trace.q_t_r[0].tolist() == [[20 * r + c for c in range(5)] for r in range(6)]
    assert trace.q_t_r[3, 5].tolist() == [115, 116, 117, 118, 119]


def test_matmul_trace_steps_in_paper_order():
    """steps() lists every tensor field in order, each with a formula."""
    x, vocab = seed000_inputs()
    steps = trace_matmul_logits(x, vocab).steps()
    names = [s.name for s in steps]
    assert names == ["q", "a_k", "q_t", "q_t_r", "product", "product_r", "result"]
    assert all(s.formula for s in steps)
    assert steps[-1].shape == (2, 3, 4, 4)


@given(problem=logit_problems())
def test_matmul_trace_result_matches_definition(problem):
    """trace_matmul_logits(...).result follows the definition for cross lengths and offsets."""
    q, table, n_k, offset = problem
    expected = torch.from_numpy(
        definition_logits(q.double().numpy(), table.double().numpy(), n_k, offset)
    )
    trace = trace_matmul_logits(q, table, n_k, query_offset=offset)
    b, h, n_q, d = q.shape
    assert trace.q_t_r.shape == (n_q, b * h, d)
    assert trace.product.shape == (n_q, b * h, n_k)
    torch.testing.assert_close(trace.result.double(), expected, **tolerance(q.dtype))


def test_seed002_toeplitz_every_method():
    """Seed 002: Q = ones(5, 1), w_r = r for r in -4..4 (k = 4) gives S_rel[i, j] = j - i."""
    q = torch.ones(1, 1, 5, 1)
    table = torch.arange(-4.0, 5.0)[:, None]
    expected = [[float(j - i) for j in range(5)] for i in range(5)]
    for method in LOGIT_METHODS:
        assert relative_logits(q, table, method=method)[0, 0].tolist() == expected
