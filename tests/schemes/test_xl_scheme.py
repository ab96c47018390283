"""TransformerXL against Dai et al. 2019, Sec. 3.3, written as loops, and ``rel_shift`` against
its definition and against the reference code's way of filling (b) and (d).

    A_ij = [q_i · k_j + q_i · W_R R_(i-j) + u · k_j + v · W_R R_(i-j)] / sqrt(d)

R_r = [sin(r f_0), .., sin(r f_(D/2-1)), cos(r f_0), ..] with f_m = 10000^(-2m/D), D = d_model:
the reference code concatenates the sines and the cosines, it does not interleave them.
"""

import math

import pytest
import torch

from relpos_core.schemes import TransformerXL, rel_shift, trace_rel_shift, xl_sinusoid
from tests.schemes.plain import (
    EXACT,
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    content_loop,
    qkv,
    randn,
)


def make(heads: int = 3, d: int = 4, seed: int = 0) -> TransformerXL:
    return TransformerXL(heads, d, generator=torch.Generator().manual_seed(seed)).double()


def sinusoid(r: int, d_model: int) -> torch.Tensor:
    """R_r (d_model,): every sine, then every cosine."""
    freqs = [10000.0 ** (-2 * m / d_model) for m in range(d_model // 2)]
    values = [math.sin(r * f) for f in freqs] + [math.cos(r * f) for f in freqs]
    return torch.tensor(values, dtype=torch.float64)


def projected(scheme: TransformerXL, r: int, h: int) -> torch.Tensor:
    """Head h's slice of W_R R_r: (d,). W_R is stored (d_model, h·d), applied on the right."""
    d = scheme.head_dim
    full = sinusoid(r, scheme.d_model) @ scheme.w_r.detach()  # (h·d,)
    return full[h * d : (h + 1) * d]


def test_sinusoid_golden_values():
    """D = 4: f_0 = 1, f_1 = 10000^(-1/2) = 0.01."""
    got = xl_sinusoid(torch.tensor([0, 1, -2]), 4)
    want = torch.tensor(
        [
            [0.0, 0.0, 1.0, 1.0],
            [math.sin(1), math.sin(0.01), math.cos(1), math.cos(0.01)],
            [math.sin(-2), math.sin(-0.02), math.cos(-2), math.cos(-0.02)],
        ],
        dtype=torch.float64,
    )
    torch.testing.assert_close(got, want, **EXACT)
    assert abs(want[1, 1] - 0.0099998333) < 1e-9  # sin(0.01) by its series


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
def test_four_terms_equal_the_paper(n_q, n_k, offset, causal):
    scheme = make()
    q, k, v = qkv(n_q, n_k)
    u, v_bias = scheme.u.detach(), scheme.v.detach()  # (h, d)
    root_d = math.sqrt(q.shape[-1])
    shape = (2, 3, n_q, n_k)

    def distance(i, j):  # i - j, the query at position offset + i
        return offset + i - j

    want = {
        "content": content_loop(q, k),
        "position": cell_loop(
            shape,
            lambda b, h, i, j: float(q[b, h, i] @ projected(scheme, distance(i, j), h)) / root_d,
        ),
        "global_content": cell_loop(shape, lambda b, h, i, j: float(u[h] @ k[b, h, j]) / root_d),
        "global_position": cell_loop(
            shape,
            lambda b, h, i, j: float(v_bias[h] @ projected(scheme, distance(i, j), h)) / root_d,
        ),
    }
    assert_scheme_matches(scheme, q, k, v, want, causal=causal, offset=offset)


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(make(), 7, causal)


# ---- rel_shift -------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_q", "n_k"), [(1, 1), (4, 4), (3, 7), (1, 5), (5, 6)])
@pytest.mark.parametrize("lead", [(), (2,), (2, 3)])
def test_rel_shift_is_the_definition_inside_valid(n_q, n_k, lead):
    """out[i, j] = x[i, j + Q - 1 - i] wherever j <= M + i, M = K - Q memory positions."""
    x = randn(*lead, n_q, n_k, seed=n_q * 10 + n_k)
    trace = trace_rel_shift(x)
    memory = n_k - n_q
    for i in range(n_q):
        for j in range(n_k):
            assert bool(trace.valid[i, j]) == (j <= memory + i)
            if j <= memory + i:
                assert torch.equal(trace.result[..., i, j], x[..., i, j + n_q - 1 - i])
    assert torch.equal(rel_shift(x), trace.result)


def test_rel_shift_steps_are_the_tensors_in_order_without_the_valid_mask():
    trace = trace_rel_shift(torch.zeros(3, 5))  # Q = 3, K = 5
    steps = trace.steps()
    assert [s.name for s in steps] == ["input", "padded", "reshaped", "sliced", "result"]
    assert [s.shape for s in steps] == [(3, 5), (3, 6), (6, 3), (5, 3), (3, 5)]
    assert all(s.formula for s in steps)


@pytest.mark.parametrize(("n_q", "n_k"), [(4, 4), (3, 7)])
def test_rel_shift_outside_valid_is_not_the_definition(n_q, n_k):
    """Beyond j = M + i the shift holds the zero pad (j = M + i + 1), then values of the next
    query row: x[i+1, j - i - M - 2]. The definition there is a future distance that the
    relative layout never held, so those cells are wrong and must be masked."""
    scheme = make(heads=1, d=4)
    memory = n_k - n_q
    q = randn(1, 1, n_q, 4, seed=2)
    keys = torch.stack([projected(scheme, n_k - 1 - c, 0) for c in range(n_k)])  # (K, d)
    x = (q + scheme.v.detach()) @ keys.T  # (1,1,Q,K): column c is distance K - 1 - c
    out = rel_shift(x)[0, 0]
    wrong = 0
    for i in range(n_q):
        for j in range(memory + i + 1, n_k):
            want = float((q[0, 0, i] + scheme.v.detach()[0]) @ projected(scheme, memory + i - j, 0))
            got = float(out[i, j])
            if j == memory + i + 1:
                assert got == 0.0
            else:
                assert got == float(x[0, 0, i + 1, j - i - memory - 2])
            assert abs(got - want) > 1e-3
            wrong += 1
    assert wrong == n_q * (n_q - 1) // 2  # the strict upper triangle of the last Q columns


@pytest.mark.parametrize(("n_q", "n_k"), [(5, 5), (3, 7)])
def test_the_reference_codes_way_equals_the_gathered_terms(n_q, n_k):
    """The reference code: r_head_k = W_R R for pos_seq = K-1, .., 0; AC = (q + u) · k;
    BD = rel_shift((q + v) · r_head_k); score = (AC + BD) / sqrt(d), queries the last Q of
    the K positions. The scheme's four terms sum to that score on the causal region."""
    scheme = make()
    q, k, _ = qkv(n_q, n_k, seed=9)
    memory = n_k - n_q
    u, v_bias = scheme.u.detach(), scheme.v.detach()
    pos_emb = torch.stack([sinusoid(r, scheme.d_model) for r in range(n_k - 1, -1, -1)])
    r_head_k = (pos_emb @ scheme.w_r.detach()).reshape(n_k, 3, 4)  # (K, h, d)
    ac = torch.einsum("bhid,bhjd->bhij", q + u[None, :, None], k)
    relative = torch.einsum("bhid,jhd->bhij", q + v_bias[None, :, None], r_head_k)
    torch.testing.assert_close(
        scheme.relative_layout(q, n_k), relative / math.sqrt(4), **EXACT
    )  # the core's relative layout is the reference code's, divided by sqrt(d)
    bd = rel_shift(relative)
    score = (ac + bd) / math.sqrt(4)
    logits = scheme.logits(q, k, causal=True, query_offset=memory)
    causal = trace_rel_shift(bd).valid
    torch.testing.assert_close(logits[..., causal], score[..., causal], **EXACT)
    assert not torch.allclose(logits[..., ~causal], score[..., ~causal])


@pytest.mark.parametrize(("n_q", "n_k", "offset", "causal"), [(3, 3, 0, True), (2, 4, 1, False)])
def test_gradients(n_q, n_k, offset, causal):
    names = assert_gradients(make(heads=2, d=2), n_q, n_k, offset, causal)
    assert names == ["w_r", "u", "v"]


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = False  # (q_i + v) · W_R R_(i-j) reads the query


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    return (h * d) * (h * d) + 2 * h * d  # W_R (d_model, h·d) at d_model = h·d; u and v
