"""relative_attention against Shaw et al. (2018) eqs. (2)-(4), written here in numpy:

e_ij = (q_i · k_j + q_i · a^K_ij) / sqrt(d),  alpha_i = softmax over the allowed keys,
z_i = sum_j alpha_ij (v_j + a^V_ij);  a query with no allowed key gets zero weights and output.

Query row r sits at position i = query_offset + r of the key sequence (0 for self-attention).
Both forms of the call are checked: ``trace=True`` (every step) and ``trace=False`` (the output,
and the weights with ``return_weights``).
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    ATTENTION_METHODS,
    causal_mask,
    masked_softmax,
    padding_mask,
    relative_attention,
)

DTYPES = (torch.float32, torch.float64)
MASK_KINDS = ("none", "padding", "causal", "padding+causal", "random", "random-int", "empty-row")


def reference_attention(q, k, v, table_k, table_v, allowed, query_offset=0):
    """Weights and output by the paper's formulas, one query at a time, in float64 numpy."""
    q, k, v, table_k, table_v = (
        np.asarray(t, dtype=np.float64) for t in (q, k, v, table_k, table_v)
    )
    batch, heads, n_q, d = q.shape
    n_k = k.shape[2]
    clip_k = (table_k.shape[0] - 1) // 2
    weights = np.zeros((batch, heads, n_q, n_k))
    out = np.zeros((batch, heads, n_q, v.shape[-1]))
    for b in range(batch):
        for h in range(heads):
            for r in range(n_q):
                i = query_offset + r  # the query's position among the keys
                rows = [max(-clip_k, min(clip_k, j - i)) + clip_k for j in range(n_k)]
                keys = [j for j in range(n_k) if allowed[b, h, r, j]]
                if not keys:
                    continue
                e = np.array(
                    [(q[b, h, r] @ k[b, h, j] + q[b, h, r] @ table_k[rows[j]]) for j in keys]
                ) / math.sqrt(d)
                alpha = np.exp(e - e.max())
                alpha /= alpha.sum()
                for a, j in zip(alpha, keys, strict=True):
                    weights[b, h, r, j] = a
                    out[b, h, r] += a * (v[b, h, j] + table_v[rows[j]])
    return weights, out


def tolerance(dtype: torch.dtype) -> dict:
    return (
        {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-10, "atol": 1e-12}
    )


def causal_rows(n_q, n_k, query_offset):
    """Bool (n_q, n_k): the query at position query_offset + r sees keys j <= that position."""
    return torch.tensor(
        [[j <= query_offset + r for j in range(n_k)] for r in range(n_q)], dtype=torch.bool
    )


def make_mask(kind, gen, batch, heads, n_q, n_k, query_offset=0):
    """(mask argument, causal flag, the bool (b, h, n_q, n_k) it means)."""
    full = (batch, heads, n_q, n_k)
    if kind == "none":
        return None, False, torch.ones(full, dtype=torch.bool)
    if kind in ("padding", "padding+causal"):
        lengths = torch.randint(1, n_k + 1, (batch,), generator=gen)
        mask = torch.arange(n_k)[None, :] < lengths[:, None]  # (b, j)
        mask = mask[:, None, None, :]
        causal = kind == "padding+causal"
        allowed = mask.expand(full) & (causal_rows(n_q, n_k, query_offset) if causal else True)
        return mask, causal, allowed
    if kind == "causal":
        return None, True, causal_rows(n_q, n_k, query_offset).expand(full)
    shapes = [full, (batch, 1, 1, n_k), (n_q, n_k), (1, heads, n_q, 1)]
    shape = shapes[int(torch.randint(len(shapes), (1,), generator=gen))]
    mask = torch.rand(shape, generator=gen) < 0.6
    if kind == "empty-row":
        mask = mask.expand(full).clone()
        mask[0, 0, n_q // 2] = False
    allowed = mask.expand(full)
    if kind == "random-int":
        return mask.to(torch.int64), False, allowed
    return mask, False, allowed


@st.composite
def attention_problems(draw):
    """(tensors, mask, causal, query_offset, allowed, method): offsets 0, inside the keys,
    tensor2tensor's n_k - n_q (when >= 0) and past the last key; skew only where it applies."""
    n_q = draw(st.integers(1, 6))
    n_k = draw(st.integers(1, 6))
    k = draw(st.sampled_from([0, 1, 3, max(n_q, n_k) + 1]))
    d = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 3))
    batch, heads = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dtype = draw(st.sampled_from(DTYPES))
    offsets = sorted({0, n_k // 2, max(n_k - n_q, 0), n_k + 1})
    query_offset = draw(st.sampled_from(offsets))
    methods = [m for m in ATTENTION_METHODS if m != "skew" or (n_q == n_k and query_offset == 0)]
    method = draw(st.sampled_from(methods))
    kind = draw(st.sampled_from(MASK_KINDS))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    q = torch.randn(batch, heads, n_q, d, generator=gen, dtype=dtype)
    key = torch.randn(batch, heads, n_k, d, generator=gen, dtype=dtype)
    v = torch.randn(batch, heads, n_k, d_v, generator=gen, dtype=dtype)
    table_k = torch.randn(2 * k + 1, d, generator=gen, dtype=dtype)
    table_v = torch.randn(2 * k + 1, d_v, generator=gen, dtype=dtype)
    mask, causal, allowed = make_mask(kind, gen, batch, heads, n_q, n_k, query_offset)
    options = {"mask": mask, "causal": causal, "query_offset": query_offset, "method": method}
    return (q, key, v, table_k, table_v), options, allowed


def reference_of(tensors, allowed, options):
    weights, out = reference_attention(
        *(t.numpy() for t in tensors), allowed.numpy(), options["query_offset"]
    )
    return torch.from_numpy(weights), torch.from_numpy(out)


@given(problem=attention_problems())
def test_matches_the_paper_reference(problem):
    """Weights and output equal the numpy reference for every method, mask kind and offset."""
    tensors, options, allowed = problem
    trace = relative_attention(*tensors, **options, trace=True)
    weights, out = reference_of(tensors, allowed, options)
    dtype = tensors[0].dtype
    assert trace.weights.dtype == dtype and trace.output.dtype == dtype
    assert trace.query_offset == options["query_offset"]
    if options["method"] != "auto":
        assert trace.method == options["method"]
    torch.testing.assert_close(trace.weights.double(), weights, **tolerance(dtype))
    torch.testing.assert_close(trace.output.double(), out, **tolerance(dtype))


@given(problem=attention_problems(), grad=st.booleans())
def test_output_without_trace_matches_the_paper_reference(problem, grad):
    """trace=False: the output alone, and (output, weights) with return_weights, with and
    without inputs that require gradients (the fused banded path keeps its own backward)."""
    tensors, options, allowed = problem
    tensors = tuple(t.clone().requires_grad_(grad) for t in tensors)
    weights, out = reference_of(tuple(t.detach() for t in tensors), allowed, options)
    tol = tolerance(tensors[0].dtype)
    got = relative_attention(*tensors, **options)
    assert isinstance(got, torch.Tensor) and got.shape == out.shape
    torch.testing.assert_close(got.detach().double(), out, **tol)
    got_out, got_weights = relative_attention(*tensors, **options, return_weights=True)
    torch.testing.assert_close(got_out.detach().double(), out, **tol)
    torch.testing.assert_close(got_weights.detach().double(), weights, **tol)


@given(problem=attention_problems())
def test_weights_are_a_distribution_over_allowed_keys(problem):
    """Rows with an allowed key sum to 1; forbidden keys and empty rows get exactly 0; no NaN."""
    tensors, options, allowed = problem
    trace = relative_attention(*tensors, **options, trace=True)
    assert torch.equal(trace.allowed, allowed)
    assert not trace.weights.isnan().any() and not trace.output.isnan().any()
    assert (trace.weights[~allowed] == 0).all()
    assert (trace.weights >= 0).all()
    has_key = allowed.any(-1)
    sums = trace.weights.sum(-1)
    torch.testing.assert_close(sums[has_key], torch.ones_like(sums[has_key]))
    assert (trace.weights[~has_key] == 0).all()
    assert (trace.output[~has_key] == 0).all()


@given(problem=attention_problems())
def test_trace_fields_are_consistent(problem):
    """output = content + relative; scaled = (content + relative) * scale; masked_logits is -inf
    exactly where forbidden; content_logits = q k^T; scale = 1/sqrt(d)."""
    tensors, options, allowed = problem
    q, key = tensors[:2]
    trace = relative_attention(*tensors, **options, trace=True)
    tol = tolerance(q.dtype)
    assert trace.scale == pytest.approx(1 / math.sqrt(q.shape[-1]))
    torch.testing.assert_close(trace.content_logits, torch.einsum("bhid,bhjd->bhij", q, key), **tol)
    torch.testing.assert_close(
        trace.scaled_logits, (trace.content_logits + trace.relative_logits) * trace.scale, **tol
    )
    torch.testing.assert_close(trace.output, trace.content_output + trace.relative_output, **tol)
    torch.testing.assert_close(trace.content_output, trace.weights @ tensors[2], **tol)
    assert torch.equal(trace.masked_logits == float("-inf"), ~allowed)
    assert torch.equal(trace.masked_logits[allowed], trace.scaled_logits[allowed])
    names = [s.name for s in trace.steps()]
    assert names[0] == "content_logits" and names[-1] == "output"
    assert all(s.formula for s in trace.steps())


def test_trace_is_frozen():
    q = torch.zeros(1, 1, 2, 1)
    trace = relative_attention(q, q, q, torch.zeros(3, 1), torch.zeros(3, 1), trace=True)
    with pytest.raises(AttributeError):
        trace.output = torch.ones(1)


@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_causal_weights_are_exactly_zero_above_the_diagonal(method):
    gen = torch.Generator().manual_seed(0)
    q, key, v = (torch.randn(2, 3, 6, 4, generator=gen) for _ in range(3))
    table = torch.randn(5, 4, generator=gen)
    weights = relative_attention(
        q, key, v, table, table, causal=True, method=method, trace=True
    ).weights
    upper = torch.ones(6, 6, dtype=torch.bool).triu(1)
    assert (weights[..., upper] == 0).all()
    assert (weights[..., ~upper] > 0).all()
    assert weights[..., 0, 0].eq(1).all()  # the first query sees only itself
    _, lean = relative_attention(
        q, key, v, table, table, causal=True, method=method, return_weights=True
    )
    assert (lean[..., upper] == 0).all() and lean[..., 0, 0].eq(1).all()


@pytest.mark.parametrize("method", [m for m in ATTENTION_METHODS if m != "skew"])
def test_causal_with_an_offset_sees_keys_up_to_its_position(method):
    """Queries at positions 3, 4 of 6 keys (query_offset = 3): row r sees keys j <= 3 + r."""
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 3, 2, 4, generator=gen)
    key, v = (torch.randn(2, 3, 6, 4, generator=gen) for _ in range(2))
    table = torch.randn(5, 4, generator=gen)
    weights = relative_attention(
        q, key, v, table, table, causal=True, query_offset=3, method=method, trace=True
    ).weights
    visible = torch.tensor([[j <= 3 + r for j in range(6)] for r in range(2)])
    assert (weights[..., ~visible] == 0).all()
    assert (weights[..., visible] > 0).all()


@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_fully_masked_row_gives_zero_weights_and_output(method):
    """A query with nothing to attend to: zero weights, zero output, never NaN (documented)."""
    gen = torch.Generator().manual_seed(1)
    q, key, v = (torch.randn(1, 2, 4, 3, generator=gen) for _ in range(3))
    table = torch.randn(3, 3, generator=gen)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[2] = False
    trace = relative_attention(q, key, v, table, table, mask=mask, method=method, trace=True)
    assert (trace.weights[..., 2, :] == 0).all()
    assert (trace.output[..., 2, :] == 0).all()
    assert not trace.output.isnan().any()
    assert (trace.masked_logits[..., 2, :] == float("-inf")).all()
    torch.testing.assert_close(trace.weights[..., [0, 1, 3], :].sum(-1), torch.ones(1, 2, 3))
    out, weights = relative_attention(
        q, key, v, table, table, mask=mask, method=method, return_weights=True
    )
    assert (out[..., 2, :] == 0).all() and (weights[..., 2, :] == 0).all()
    assert not out.isnan().any()
    torch.testing.assert_close(out, trace.output)


def test_padding_and_causal_combine():
    """Seed 004's token ids [[1, 21, 777, 0, 0]] as a padding mask, with and without causal."""
    gen = torch.Generator().manual_seed(2)
    q, key, v = (torch.randn(1, 2, 5, 3, generator=gen, dtype=torch.float64) for _ in range(3))
    table = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    mask = padding_mask(torch.tensor([[1, 21, 777, 0, 0]]))
    for causal in (False, True):
        trace = relative_attention(q, key, v, table, table, mask=mask, causal=causal, trace=True)
        assert (trace.weights[..., 3:] == 0).all()
        allowed = mask.expand(1, 2, 5, 5) & (causal_mask(5) if causal else True)
        weights, out = reference_attention(q, key, v, table, table, allowed.numpy())
        torch.testing.assert_close(trace.weights, torch.from_numpy(weights))
        torch.testing.assert_close(trace.output, torch.from_numpy(out))


# --- seed 004: scaled dot-product attention, reproduced with zero relative tables ---

TEMP_Q = [[0.0, 0.0, 10.0], [0.0, 10.0, 0.0], [10.0, 10.0, 0.0]]
TEMP_K = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0], [0.0, 0.0, 10.0]]
TEMP_V = [[1.0, 0.0], [10.0, 0.0], [100.0, 5.0], [1000.0, 6.0]]
SEED004_WEIGHTS = [[0.0, 0.0, 0.5, 0.5], [0.0, 1.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]]
SEED004_OUTPUT = [[550.0, 5.5], [10.0, 0.0], [5.5, 0.0]]


@pytest.mark.parametrize("k", [0, 2])
@pytest.mark.parametrize("method", [m for m in ATTENTION_METHODS if m != "skew"])
def test_seed004_scaled_dot_product_attention(method, k):
    """Zero relative tables reduce relative attention to seed 004's printed example."""
    q = torch.tensor(TEMP_Q)[None, None]  # (1, 1, 3, 3)
    key = torch.tensor(TEMP_K)[None, None]  # (1, 1, 4, 3)
    v = torch.tensor(TEMP_V)[None, None]  # (1, 1, 4, 2)
    trace = relative_attention(
        q, key, v, torch.zeros(2 * k + 1, 3), torch.zeros(2 * k + 1, 2), method=method, trace=True
    )
    torch.testing.assert_close(
        trace.weights[0, 0], torch.tensor(SEED004_WEIGHTS), rtol=0, atol=1e-6
    )
    torch.testing.assert_close(
        trace.output[0, 0], torch.tensor(SEED004_OUTPUT), rtol=1e-6, atol=1e-4
    )
    assert (trace.relative_output == 0).all() and (trace.relative_logits == 0).all()


def test_seed004_with_skew_raises_for_cross_lengths():
    """3 queries against 4 keys: the skew method refuses (it needs n_q == n_k)."""
    q = torch.tensor(TEMP_Q)[None, None]
    key = torch.tensor(TEMP_K)[None, None]
    v = torch.tensor(TEMP_V)[None, None]
    with pytest.raises(ValueError, match=r"n_q=3, n_k=4"):
        relative_attention(q, key, v, torch.zeros(1, 3), torch.zeros(1, 2), method="skew")


# --- masked_softmax on its own ---


@given(
    n=st.integers(1, 6),
    seed=st.integers(0, 2**31 - 1),
    dtype=st.sampled_from(DTYPES),
)
def test_masked_softmax_is_softmax_over_the_allowed_subset(n, seed, dtype):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(3, n, generator=gen, dtype=dtype) * 5
    allowed = torch.rand(3, n, generator=gen) < 0.5
    allowed[0] = False
    got = masked_softmax(logits, allowed)
    for row in range(3):
        keep = allowed[row]
        expected = torch.zeros(n, dtype=dtype)
        if keep.any():
            e = logits[row, keep].double().exp()
            expected[keep] = (e / e.sum()).to(dtype)
        torch.testing.assert_close(got[row], expected, **tolerance(dtype))
