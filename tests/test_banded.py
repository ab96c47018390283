"""The banded method and the output-only call (``trace=False``), against the definition.

"banded" must equal the "loop" definition for the key term, the value term and whole attention,
for any n_q, n_k, k (0, small, beyond the length) and query offset, with masks (padding, causal,
a fully masked row), in float32 and float64. ``relative_attention(..., trace=False)`` must equal
the output of ``relative_attention(..., trace=True)``; so must its weights with return_weights.
"""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import relpos_core.methods.banded as banded_module
from relpos_core import (
    ATTENTION_METHODS,
    METHOD_NAMES,
    choose_method,
    logits_bytes,
    memory_bytes,
    relative_attention,
    relative_index,
    relative_logits,
    relative_values,
)
from relpos_core.methods.banded import add_by_bucket, block_rows, bucket_mass, strip

DTYPES = (torch.float32, torch.float64)


def _tol(dtype: torch.dtype) -> dict[str, float]:
    return {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 1e-10, "rtol": 0}


@st.composite
def problems(draw, max_n: int = 9):
    """Random (q, k, v, table_k, table_v, options) with their own generator; options holds the
    mask, causal and query_offset (0, inside the keys, n_k - n_q, or past the last key)."""
    b = draw(st.integers(1, 2))
    h = draw(st.integers(1, 3))
    n_q = draw(st.integers(1, max_n))
    n_k = draw(st.integers(1, max_n))
    d = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 5))
    clip = draw(st.sampled_from([0, 1, 2, 3, max(n_q, n_k), max(n_q, n_k) + 3]))
    offset = draw(st.sampled_from([0, 0, max(n_k - n_q, 0), draw(st.integers(0, 2 * max_n))]))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**16))
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=dtype)

    mask_kind = draw(st.sampled_from(["none", "padding", "random", "empty_row"]))
    mask = None
    if mask_kind == "padding":
        n_pad = draw(st.integers(0, n_k - 1))
        mask = (torch.arange(n_k) < n_k - n_pad)[None, None, None, :].expand(b, 1, 1, n_k)
    elif mask_kind == "random":
        mask = torch.rand(b, h, n_q, n_k, generator=gen) < 0.6
    elif mask_kind == "empty_row":
        mask = torch.ones(1, 1, n_q, n_k, dtype=torch.bool)
        mask[..., draw(st.integers(0, n_q - 1)), :] = False
    options = {"mask": mask, "causal": draw(st.booleans()), "query_offset": offset}
    tensors = (rand(b, h, n_q, d), rand(b, h, n_k, d), rand(b, h, n_k, d_v))
    return (*tensors, rand(2 * clip + 1, d), rand(2 * clip + 1, d_v), options)


@given(problems())
def test_banded_logits_equal_loop(problem):
    q, k, _, table_k, _, options = problem
    offset = options["query_offset"]
    got = relative_logits(q, table_k, k.shape[-2], method="banded", query_offset=offset)
    want = relative_logits(q, table_k, k.shape[-2], method="loop", query_offset=offset)
    torch.testing.assert_close(got, want, **_tol(q.dtype))


@given(problems())
def test_banded_values_equal_loop(problem):
    q, k, _, _, table_v, options = problem
    offset = options["query_offset"]
    gen = torch.Generator().manual_seed(0)
    weights = torch.rand(*q.shape[:-1], k.shape[-2], generator=gen, dtype=q.dtype)
    got = relative_values(weights, table_v, method="banded", query_offset=offset)
    want = relative_values(weights, table_v, method="loop", query_offset=offset)
    torch.testing.assert_close(got, want, **_tol(q.dtype))


@given(problems())
def test_banded_attention_equals_loop(problem):
    *tensors, options = problem
    want = relative_attention(*tensors, **options, method="loop", trace=True)
    got = relative_attention(*tensors, **options, method="banded", trace=True)
    assert got.method == "banded" and want.method == "loop"
    for step_got, step_want in zip(got.steps(), want.steps(), strict=True):
        torch.testing.assert_close(
            step_got.value, step_want.value, **_tol(tensors[0].dtype), msg=step_got.name
        )


@given(problems(), st.booleans(), st.booleans())
def test_output_without_trace_equals_the_trace(problem, return_weights, grad):
    """trace=False (the fused path by default) gives the traced output and weights, with and
    without gradients enabled on the inputs."""
    *tensors, options = problem
    trace = relative_attention(*tensors, **options, method="loop", trace=True)
    inputs = [t.clone().requires_grad_(grad) for t in tensors]
    got = relative_attention(*inputs, **options, return_weights=return_weights)
    out, weights = got if return_weights else (got, None)
    torch.testing.assert_close(out.detach(), trace.output, **_tol(trace.output.dtype))
    if weights is not None:
        torch.testing.assert_close(weights.detach(), trace.weights, **_tol(trace.output.dtype))


@pytest.mark.parametrize("method", [m for m in ATTENTION_METHODS if m != "skew"])
def test_every_method_without_trace_equals_the_definition(method):
    gen = torch.Generator().manual_seed(3)
    q, v = torch.randn(2, 2, 7, 4, generator=gen), torch.randn(2, 2, 5, 3, generator=gen)
    k = torch.randn(2, 2, 5, 4, generator=gen)
    table_k, table_v = torch.randn(5, 4, generator=gen), torch.randn(5, 3, generator=gen)
    mask = torch.tensor([True, True, True, False, True])[None, None, None, :]
    for offset in (0, 2):
        options = {"mask": mask, "query_offset": offset}
        want = relative_attention(q, k, v, table_k, table_v, **options, method="loop", trace=True)
        got = relative_attention(q, k, v, table_k, table_v, **options, method=method)
        torch.testing.assert_close(got, want.output)


def test_skew_without_trace_equals_the_definition_when_square():
    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 6, 3, generator=gen) for _ in range(3))
    table = torch.randn(5, 3, generator=gen)
    want = relative_attention(q, k, v, table, table, causal=True, method="loop", trace=True)
    got = relative_attention(q, k, v, table, table, causal=True, method="skew")
    torch.testing.assert_close(got, want.output)


def test_blocks_of_a_long_sequence_match_the_bucket_method():
    """Several query blocks (n > block_rows), causal and two-sided, float64."""
    gen = torch.Generator().manual_seed(5)
    n = 300
    assert block_rows(n, n, 2) < n
    q, k, v = (torch.randn(1, 2, n, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    tk, tv = (torch.randn(9, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    for causal in (False, True):
        want = relative_attention(q, k, v, tk, tv, causal=causal, method="bucket", trace=True)
        got = relative_attention(q, k, v, tk, tv, causal=causal)
        torch.testing.assert_close(got, want.output)


@pytest.mark.parametrize("causal", [False, True])
def test_many_small_blocks_with_offset_and_mask_match_the_bucket_method(monkeypatch, causal):
    """64-row blocks (three for 150 queries), queries at positions 20.., a random key mask."""
    monkeypatch.setattr(banded_module, "BLOCK_ELEMENTS", 1)
    assert block_rows(150, 170, 2) == 64
    gen = torch.Generator().manual_seed(15)
    q = torch.randn(2, 1, 150, 4, generator=gen, dtype=torch.float64)
    k, v = (torch.randn(2, 1, 170, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    tk, tv = (torch.randn(11, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    mask = torch.rand(2, 1, 1, 170, generator=gen) < 0.7
    options = {"mask": mask, "causal": causal, "query_offset": 20}
    want = relative_attention(q, k, v, tk, tv, **options, method="bucket", trace=True)
    got, weights = relative_attention(q, k, v, tk, tv, **options, return_weights=True)
    torch.testing.assert_close(got, want.output)
    torch.testing.assert_close(weights, want.weights)


@pytest.mark.parametrize("grad", [False, True])
def test_padding_mask_over_several_blocks_matches_the_bucket_method(grad):
    """A (b, 1, 1, n_k) padding mask broadcasts over the queries of every block of rows."""
    gen = torch.Generator().manual_seed(8)
    n = 300
    assert block_rows(n, n, 2) < n
    q, k, v = (torch.randn(2, 1, n, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    tk, tv = (torch.randn(5, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    mask = (torch.arange(n)[None, :] < torch.tensor([[n], [n - 40]]))[:, None, None, :]
    want = relative_attention(q, k, v, tk, tv, mask=mask, method="bucket", trace=True)
    got = relative_attention(q.requires_grad_(grad), k, v, tk, tv, mask=mask)
    torch.testing.assert_close(got.detach(), want.output)


def test_fully_masked_row_gives_zero_output():
    q = k = v = torch.ones(1, 1, 3, 2)
    table = torch.ones(3, 2)
    mask = torch.ones(1, 1, 3, 3, dtype=torch.bool)
    mask[0, 0, 1] = False
    out, weights = relative_attention(q, k, v, table, table, mask=mask, return_weights=True)
    assert torch.equal(out[0, 0, 1], torch.zeros(2))
    assert torch.equal(weights[0, 0, 1], torch.zeros(3))
    assert not out.isnan().any()


def test_strip_worked_example():
    """Queries at positions 0-1 of 4 keys, k = 1: columns [0, 2) hold the band, from column 2
    on every cell is bucket 2k."""
    c0, c1, index = strip(0, 2, 4, 1)
    assert (c0, c1) == (0, 2)
    assert index.tolist() == [[1, 2], [0, 1]]
    # two queries at positions 5-6 of 8 keys: the band moves to columns [5, 7), key 7 is right
    c0, c1, index = strip(5, 7, 8, 1)
    assert (c0, c1) == (5, 7)
    assert index.tolist() == [[1, 2], [0, 1]]


@given(
    p0=st.integers(0, 12),
    rows=st.integers(1, 6),
    n_k=st.integers(1, 12),
    k=st.integers(0, 8),
)
def test_strip_is_the_band_of_the_full_index(p0, rows, n_k, k):
    """Left of c0 every cell is bucket 0, from c1 on bucket 2k, between them the full index."""
    c0, c1, index = strip(p0, p0 + rows, n_k, k)
    full = relative_index(rows, n_k, k, query_offset=p0)
    assert 0 <= c0 <= c1 <= n_k
    assert torch.equal(index, full[:, c0:c1])
    assert (full[:, :c0] == 0).all()
    assert (full[:, c1:] == 2 * k).all()


@given(
    p0=st.integers(0, 12),
    rows=st.integers(1, 6),
    n_k=st.integers(1, 12),
    k=st.integers(0, 8),
    seed=st.integers(0, 2**16),
)
def test_bucket_mass_and_add_by_bucket_follow_the_index(p0, rows, n_k, k, seed):
    """bucket_mass sums each row's weights per bucket clip(j - i, k) + k; add_by_bucket adds
    per_bucket[.., clip(j - i, k) + k] to every cell (for queries at positions p0..)."""
    gen = torch.Generator().manual_seed(seed)
    index = relative_index(rows, n_k, k, query_offset=p0)
    weights = torch.rand(2, rows, n_k, generator=gen, dtype=torch.float64)
    want = torch.zeros(2, rows, 2 * k + 1, dtype=torch.float64)
    for r in range(rows):
        for j in range(n_k):
            want[:, r, index[r, j]] += weights[:, r, j]
    torch.testing.assert_close(bucket_mass(weights, p0, k), want)

    per_bucket = torch.randn(2, rows, 2 * k + 1, generator=gen, dtype=torch.float64)
    start = torch.randn(2, rows, n_k, generator=gen, dtype=torch.float64)
    gathered = per_bucket.gather(-1, index.expand(2, -1, -1))
    torch.testing.assert_close(add_by_bucket(start.clone(), per_bucket, p0, k), start + gathered)
    # shift: the left constant is left out; with per_bucket[.., 0] = 0 nothing else changes
    per_bucket[..., 0] = 0
    gathered = per_bucket.gather(-1, index.expand(2, -1, -1))
    shifted = add_by_bucket(start.clone(), per_bucket, p0, k, shift=True)
    torch.testing.assert_close(shifted, start + gathered)


def test_auto_picks_an_exact_method():
    assert "auto" in ATTENTION_METHODS
    for n_q, n_k in ((1, 1), (7, 3), (1024, 1024), (4096, 4096)):
        chosen = choose_method(n_q, n_k)
        assert chosen.name in METHOD_NAMES
        assert chosen.name != "loop"
        assert chosen.unsupported(n_q, n_k, 0) is None


def test_auto_is_the_default_and_matches_loop():
    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 2, 5, 3, generator=gen) for _ in range(3))
    table = torch.randn(3, 3, generator=gen)
    want = relative_attention(q, k, v, table, table, method="loop", trace=True)
    trace = relative_attention(q, k, v, table, table, trace=True)
    assert trace.method == choose_method(5, 5, trace=True).name
    torch.testing.assert_close(trace.output, want.output)
    torch.testing.assert_close(relative_attention(q, k, v, table, table), want.output)


def test_banded_never_builds_an_n_n_d_tensor():
    """Every tensor the output-only path creates through torch ops stays below n·n·d elements,
    and below one (b, h, n, n) tensor: only a reused block of rows is ever that wide."""
    b, h, n, d = 1, 2, 300, 16
    gen = torch.Generator().manual_seed(7)
    q, k, v = (torch.randn(b, h, n, d, generator=gen) for _ in range(3))
    table = torch.randn(9, d, generator=gen)
    largest = 0

    class Watch(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            nonlocal largest
            result = func(*args, **(kwargs or {}))
            for t in result if isinstance(result, tuple) else (result,):
                if isinstance(t, torch.Tensor):
                    largest = max(largest, t.numel())
            return result

    for causal in (False, True):
        with Watch():
            relative_attention(q, k, v, table, table, causal=causal)
    rows = block_rows(n, n, b * h)
    assert rows < n
    assert 0 < largest < n * n * d
    assert largest <= b * h * rows * n < b * h * n * n  # the reused block buffer


def test_memory_estimate_of_banded_is_below_the_logits():
    n, d, heads = 2048, 128, 8
    banded = memory_bytes("banded", n, d, heads, max_relative_position=16)
    assert banded < logits_bytes(n, heads)
    assert banded < memory_bytes("einsum", n, d) / 100
    with pytest.raises(ValueError, match="max_relative_position is required"):
        memory_bytes("banded", n, d)


def test_bad_arguments_raise_named_errors():
    q = k = v = torch.zeros(1, 1, 2, 2)
    table = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="method must be one of"):
        relative_attention(q, k, v, table, table, method="flash")
    with pytest.raises(ValueError, match="table_v must have shape"):
        relative_attention(q, k, v, table, torch.zeros(5, 2))
    with pytest.raises(ValueError, match="k must have shape"):
        relative_attention(q, torch.zeros(1, 1, 2, 3), v, table, table)
    with pytest.raises(ValueError, match="does not broadcast"):
        relative_attention(q, k, v, table, table, mask=torch.ones(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="return_weights"):
        relative_attention(q, k, v, table, table, trace=True, return_weights=True)
    with pytest.raises(ValueError, match="dropout_p"):
        relative_attention(q, k, v, table, table, trace=True, dropout_p=0.1)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        relative_attention(q, k, v, table, table, dropout_p=1.0)
    with pytest.raises(TypeError, match="dropout_p must be a number"):
        relative_attention(q, k, v, table, table, dropout_p="0.1")
