"""The banded method and the lean ``relative_attention_output``, against the definition.

"banded" must equal the "loop" definition for the key term, the value term and whole attention,
for any n_q, n_k and k (0, small, beyond the length), masks (padding, causal, a fully masked row),
in float32 and float64. The lean output must equal ``relative_attention(...).output``.
"""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    ATTENTION_METHODS,
    FAST_METHODS,
    LOGIT_METHODS,
    choose_method,
    logits_bytes,
    memory_bytes,
    relative_attention,
    relative_attention_output,
    relative_logits,
    relative_values,
)
from relpos_core.banded import block_rows, strip

DTYPES = (torch.float32, torch.float64)


def _tol(dtype: torch.dtype) -> dict[str, float]:
    return {"atol": 1e-5, "rtol": 1e-4} if dtype == torch.float32 else {"atol": 1e-10, "rtol": 0}


@st.composite
def problems(draw, max_n: int = 9):
    """Random (q, k, v, table_k, table_v, mask, causal) with their own generator."""
    b = draw(st.integers(1, 2))
    h = draw(st.integers(1, 3))
    n_q = draw(st.integers(1, max_n))
    n_k = draw(st.integers(1, max_n))
    d = draw(st.integers(1, 5))
    d_v = draw(st.integers(1, 5))
    clip = draw(st.sampled_from([0, 1, 2, 3, max(n_q, n_k), max(n_q, n_k) + 3]))
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
    causal = draw(st.booleans())
    tensors = (rand(b, h, n_q, d), rand(b, h, n_k, d), rand(b, h, n_k, d_v))
    return (*tensors, rand(2 * clip + 1, d), rand(2 * clip + 1, d_v), mask, causal)


@given(problems())
def test_banded_logits_equal_loop(problem):
    q, k, _, table_k, *_ = problem
    got = relative_logits(q, table_k, k.shape[-2], method="banded")
    want = relative_logits(q, table_k, k.shape[-2], method="loop")
    torch.testing.assert_close(got, want, **_tol(q.dtype))


@given(problems())
def test_banded_values_equal_loop(problem):
    q, k, _, _, table_v, *_ = problem
    gen = torch.Generator().manual_seed(0)
    weights = torch.rand(*q.shape[:-1], k.shape[-2], generator=gen, dtype=q.dtype)
    got = relative_values(weights, table_v, method="banded")
    torch.testing.assert_close(
        got, relative_values(weights, table_v, method="loop"), **_tol(q.dtype)
    )


@given(problems())
def test_banded_attention_equals_loop(problem):
    q, k, v, table_k, table_v, mask, causal = problem
    want = relative_attention(q, k, v, table_k, table_v, mask, causal, method="loop")
    got = relative_attention(q, k, v, table_k, table_v, mask, causal, method="banded")
    for step_got, step_want in zip(got.steps(), want.steps(), strict=True):
        torch.testing.assert_close(step_got.value, step_want.value, **_tol(q.dtype))


@given(problems(), st.booleans())
def test_lean_output_equals_trace_output(problem, return_weights):
    q, k, v, table_k, table_v, mask, causal = problem
    trace = relative_attention(q, k, v, table_k, table_v, mask, causal, method="loop")
    got = relative_attention_output(
        q, k, v, table_k, table_v, mask, causal, return_weights=return_weights
    )
    out, weights = got if return_weights else (got, None)
    torch.testing.assert_close(out, trace.output, **_tol(q.dtype))
    if weights is not None:
        torch.testing.assert_close(weights, trace.weights, **_tol(q.dtype))


@pytest.mark.parametrize("method", [m for m in FAST_METHODS if m != "skew"])
def test_every_lean_method_equals_the_definition(method):
    gen = torch.Generator().manual_seed(3)
    q, v = torch.randn(2, 2, 7, 4, generator=gen), torch.randn(2, 2, 5, 3, generator=gen)
    k = torch.randn(2, 2, 5, 4, generator=gen)
    table_k, table_v = torch.randn(5, 4, generator=gen), torch.randn(5, 3, generator=gen)
    mask = torch.tensor([True, True, True, False, True])[None, None, None, :]
    want = relative_attention(q, k, v, table_k, table_v, mask, method="loop").output
    got = relative_attention_output(q, k, v, table_k, table_v, mask, method=method)
    torch.testing.assert_close(got, want)


def test_lean_skew_equals_the_definition_when_square():
    gen = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 6, 3, generator=gen) for _ in range(3))
    table = torch.randn(5, 3, generator=gen)
    want = relative_attention(q, k, v, table, table, causal=True, method="loop").output
    got = relative_attention_output(q, k, v, table, table, causal=True, method="skew")
    torch.testing.assert_close(got, want)


def test_blocks_of_a_long_sequence_match_the_bucket_method():
    """Several query blocks (n > block_rows), causal and two-sided, float64."""
    gen = torch.Generator().manual_seed(5)
    n = 300
    assert block_rows(n, n, 2) < n
    q, k, v = (torch.randn(1, 2, n, 8, generator=gen, dtype=torch.float64) for _ in range(3))
    tk, tv = (torch.randn(9, 8, generator=gen, dtype=torch.float64) for _ in range(2))
    for causal in (False, True):
        want = relative_attention(q, k, v, tk, tv, causal=causal, method="bucket").output
        got = relative_attention_output(q, k, v, tk, tv, causal=causal)
        torch.testing.assert_close(got, want)


def test_fully_masked_row_gives_zero_output():
    q = k = v = torch.ones(1, 1, 3, 2)
    table = torch.ones(3, 2)
    mask = torch.ones(1, 1, 3, 3, dtype=torch.bool)
    mask[0, 0, 1] = False
    out, weights = relative_attention_output(q, k, v, table, table, mask, return_weights=True)
    assert torch.equal(out[0, 0, 1], torch.zeros(2))
    assert torch.equal(weights[0, 0, 1], torch.zeros(3))
    assert not out.isnan().any()


def test_strip_worked_example():
    """Rows 0-1 of 4 keys, k = 1: columns [0, 2) hold the band, column 2 on is bucket 2k."""
    c0, c1, index = strip(0, 2, 4, 1)
    assert (c0, c1) == (0, 2)
    assert index.tolist() == [[1, 2], [0, 1]]


def test_auto_picks_an_exact_method():
    assert "auto" in ATTENTION_METHODS and "auto" in FAST_METHODS
    for n_q, n_k in ((1, 1), (7, 3), (1024, 1024), (4096, 4096)):
        assert choose_method(n_q, n_k) in LOGIT_METHODS
        assert choose_method(n_q, n_k) != "loop"


def test_auto_is_the_default_and_matches_loop():
    gen = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 2, 5, 3, generator=gen) for _ in range(3))
    table = torch.randn(3, 3, generator=gen)
    want = relative_attention(q, k, v, table, table, method="loop")
    torch.testing.assert_close(relative_attention(q, k, v, table, table).output, want.output)
    torch.testing.assert_close(relative_attention_output(q, k, v, table, table), want.output)


def test_banded_never_builds_an_n_n_d_tensor(monkeypatch):
    """Every tensor the lean path creates through torch ops stays below n·n·d elements."""
    b, h, n, d = 1, 2, 64, 16
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

    with Watch():
        relative_attention_output(q, k, v, table, table)
    assert 0 < largest < n * n * d
    assert largest <= b * h * n * n  # and only because of the reused block buffers


def test_memory_estimate_of_banded_is_below_the_logits():
    n, d, heads = 2048, 128, 8
    assert memory_bytes("banded", n, d, heads, k=16) < logits_bytes(n, heads)
    assert memory_bytes("banded", n, d, heads, k=16) < memory_bytes("einsum", n, d) / 100
    with pytest.raises(ValueError, match="k \\(clip distance\\) is required"):
        memory_bytes("banded", n, d)


def test_bad_arguments_raise_named_errors():
    q = k = v = torch.zeros(1, 1, 2, 2)
    table = torch.zeros(3, 2)
    with pytest.raises(ValueError, match="method must be one of"):
        relative_attention_output(q, k, v, table, table, method="loop")
    with pytest.raises(ValueError, match="table_v must have shape"):
        relative_attention_output(q, k, v, table, torch.zeros(5, 2))
    with pytest.raises(ValueError, match="k must have shape"):
        relative_attention_output(q, torch.zeros(1, 1, 2, 3), v, table, table)
    with pytest.raises(ValueError, match="does not broadcast"):
        relative_attention_output(q, k, v, table, table, mask=torch.ones(3, 3, dtype=torch.bool))
