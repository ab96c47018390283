"""The registry of exact methods (relpos_core.methods): each Method object's key and value terms
against the definition, what it says it cannot do, what "auto" picks, and the memory models
with the guard that refuses a call before it allocates.

Definition (Shaw et al. 2018, eqs. 3-4), queries at positions i = query_offset + row:
    key term   S_rel[.., row, j] = q_row · w_{clip(j - i, k)}
    value term z^rel[.., row, :] = sum_j alpha_row,j w_{clip(j - i, k)}
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import relpos_core.guard as memory_module
from relpos_core import (
    METHOD_NAMES,
    METHODS,
    Method,
    attention_bytes,
    choose_method,
    format_bytes,
    get_method,
    logits_bytes,
    memory_bytes,
    relative_attention,
    relative_logits,
    relative_values,
)
from relpos_core.methods.banded import block_rows
from tests.largest_tensor import LargestTensor

DTYPES = (torch.float32, torch.float64)


def clip_row(j: int, i: int, k: int) -> int:
    return max(-k, min(k, j - i)) + k


def definition_key_term(q: np.ndarray, table: np.ndarray, n_k: int, offset: int) -> np.ndarray:
    k = (table.shape[0] - 1) // 2
    *lead, n_q, _ = q.shape
    out = np.zeros((*lead, n_q, n_k))
    for r in range(n_q):
        for j in range(n_k):
            out[..., r, j] = q[..., r, :] @ table[clip_row(j, offset + r, k)]
    return out


def definition_value_term(weights: np.ndarray, table: np.ndarray, offset: int) -> np.ndarray:
    k = (table.shape[0] - 1) // 2
    *lead, n_q, n_k = weights.shape
    out = np.zeros((*lead, n_q, table.shape[1]))
    for r in range(n_q):
        for j in range(n_k):
            out[..., r, :] += weights[..., r, j, None] * table[clip_row(j, offset + r, k)]
    return out


def tolerance(dtype: torch.dtype) -> dict:
    return (
        {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-12, "atol": 1e-12}
    )


@st.composite
def term_problems(draw):
    """q, weights and a table for random shapes and offsets; square shapes half the time so the
    skew runs too."""
    n_q = draw(st.integers(1, 7))
    n_k = n_q if draw(st.booleans()) else draw(st.integers(1, 7))
    offset = draw(st.sampled_from([0, 0, 0, 1, max(n_k - n_q, 0), n_k + 2]))
    k = draw(st.sampled_from([0, 1, 2, max(n_q, n_k) - 1, max(n_q, n_k) + 3]))
    d = draw(st.integers(1, 4))
    dtype = draw(st.sampled_from(DTYPES))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 3)))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    q = torch.randn(*lead, n_q, d, generator=gen, dtype=dtype)
    weights = torch.randn(*lead, n_q, n_k, generator=gen, dtype=dtype)
    table = torch.randn(2 * k + 1, d, generator=gen, dtype=dtype)
    return q, weights, table, n_k, offset


def test_registry_lists_every_method_once():
    assert METHOD_NAMES == tuple(METHODS)
    assert set(METHOD_NAMES) == {"loop", "einsum", "matmul", "skew", "bucket", "banded"}
    for name, method in METHODS.items():
        assert isinstance(method, Method)
        assert method.name == name and method.summary
        assert get_method(name) is method
    assert [m.name for m in METHODS.values() if m.kernel is not None] == ["banded"]
    with pytest.raises(ValueError, match="method must be one of auto, loop, .*'nope'"):
        get_method("nope")


@given(problem=term_problems())
def test_every_method_equals_the_definition(problem):
    """Key and value terms of every Method that supports the shape and offset equal the numpy
    definition and the loop method, called directly and through relative_logits/values."""
    q, weights, table, n_k, offset = problem
    want_key = definition_key_term(q.double().numpy(), table.double().numpy(), n_k, offset)
    want_value = definition_value_term(weights.double().numpy(), table.double().numpy(), offset)
    loop_key = METHODS["loop"].key_term(q, table, n_k, offset)
    tol = tolerance(q.dtype)
    ran = []
    for name, method in METHODS.items():
        if method.unsupported(q.shape[-2], n_k, offset) is not None:
            continue
        ran.append(name)
        key = method.key_term(q, table, n_k, offset)
        value = method.value_term(weights, table, offset)
        assert key.dtype == q.dtype and key.shape == (*q.shape[:-1], n_k)
        assert value.shape == (*weights.shape[:-1], table.shape[1])
        torch.testing.assert_close(key.double(), torch.from_numpy(want_key), **tol, msg=name)
        torch.testing.assert_close(value.double(), torch.from_numpy(want_value), **tol, msg=name)
        torch.testing.assert_close(key, loop_key, **tol, msg=name)
        public_key = relative_logits(q, table, n_k, method=name, query_offset=offset)
        public_value = relative_values(weights, table, method=name, query_offset=offset)
        torch.testing.assert_close(public_key, key, rtol=0, atol=0, msg=name)
        torch.testing.assert_close(public_value, value, rtol=0, atol=0, msg=name)
    assert set(METHOD_NAMES) - set(ran) <= {"skew"}


@given(
    n_q=st.integers(1, 6),
    n_k=st.integers(1, 6),
    offset=st.integers(0, 8),
    seed=st.integers(0, 2**16),
)
def test_unsupported_is_honest(n_q, n_k, offset, seed):
    """Only the skew refuses anything, exactly when n_q != n_k or there is an offset; every
    entry point then raises a ValueError carrying that reason."""
    for name, method in METHODS.items():
        reason = method.unsupported(n_q, n_k, offset)
        if name != "skew":
            assert reason is None
            continue
        if n_q == n_k and offset == 0:
            assert reason is None
            continue
        assert f"n_q={n_q}" in reason and f"n_k={n_k}" in reason
        assert f"query_offset={offset}" in reason
        gen = torch.Generator().manual_seed(seed)
        q = torch.randn(1, 1, n_q, 2, generator=gen)
        k, v = torch.randn(1, 1, n_k, 2, generator=gen), torch.randn(1, 1, n_k, 2, generator=gen)
        table = torch.randn(3, 2, generator=gen)
        message = re.escape(f"method 'skew' cannot run here: {reason}")
        for trace in (False, True):
            with pytest.raises(ValueError, match=message):
                relative_attention(
                    q, k, v, table, table, query_offset=offset, method="skew", trace=trace
                )
        with pytest.raises(ValueError, match=message):
            relative_logits(q, table, n_k, method="skew", query_offset=offset)
        with pytest.raises(ValueError, match=message):
            relative_values(torch.rand(1, 1, n_q, n_k), table, "skew", query_offset=offset)


@given(
    n_q=st.integers(1, 6),
    n_k=st.integers(1, 6),
    offset=st.integers(0, 8),
    trace=st.booleans(),
    grad=st.booleans(),
)
def test_auto_picks_a_method_that_can_do_what_is_asked(n_q, n_k, offset, trace, grad):
    chosen = choose_method(n_q, n_k, offset, trace=trace, grad=grad)
    assert chosen.unsupported(n_q, n_k, offset) is None
    assert chosen.can_trace or not trace
    assert chosen.has_grad or not grad
    assert chosen.name != "loop"
    gen = torch.Generator().manual_seed(n_q * 100 + n_k * 10 + offset)
    q = torch.randn(1, 2, n_q, 3, generator=gen, dtype=torch.float64, requires_grad=grad)
    k, v = (torch.randn(1, 2, n_k, 3, generator=gen, dtype=torch.float64) for _ in "kv")
    table = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    got = relative_attention(q, k, v, table, table, query_offset=offset, trace=trace)
    want = relative_attention(q, k, v, table, table, query_offset=offset, method="loop")
    if trace:
        assert got.method == chosen.name
        got = got.output
    torch.testing.assert_close(got, want)
    if grad:
        got.sum().backward()
        assert q.grad is not None and torch.isfinite(q.grad).all()


# --- memory models ---


def test_music_transformer_numbers():
    """Huang et al. (2018) Sec. 3.4.1, L = 2048, D = 512, float32: 8.5 GB versus 4.2 MB."""
    assert memory_bytes("einsum", 2048, 512) == 8589934592
    assert memory_bytes("matmul", 2048, 512) == 8589934592
    assert memory_bytes("skew", 2048, 512, causal=True) == 4194304
    assert memory_bytes("skew", 2048, 512) == (2 * 2048 - 1) * 512 * 4


# one (heads, batch, k) per row; n runs over 1..4200 (every value), where blocks change size
SETTINGS = [(1, 1, 0), (8, 1, 16), (8, 4, 64), (16, 2, 3)]
CLEAN = [m for m in METHOD_NAMES if m != "banded"]
MONOTONE_IN_N = [
    *CLEAN,
    pytest.param(
        "banded",
        marks=pytest.mark.xfail(
            strict=True,
            reason="banded counts its reused block of rows, which gets one row shorter as n "
            "grows past 2^23 / (b h n) rows (e.g. 8 heads, k = 16: n = 4096 -> 4097 drops "
            "the estimate by 119 KiB)",
        ),
    ),
]


@pytest.mark.parametrize("method", MONOTONE_IN_N)
def test_memory_model_is_monotone_in_n(method):
    for heads, batch, k in SETTINGS:
        for causal in (False, True):
            sizes = [
                memory_bytes(method, n, 8, heads, batch, max_relative_position=k, causal=causal)
                for n in range(1, 4201)
            ]
            drops = [n for n in range(1, 4200) if sizes[n] < sizes[n - 1]]
            assert not drops, f"{method} {heads=} {batch=} {k=} {causal=}: drops at n={drops[:5]}"


@pytest.mark.parametrize("method", METHOD_NAMES)
def test_position_bytes_are_monotone_in_n(method):
    """The position-dependent intermediate alone (what Huang et al. compare) never shrinks."""
    chosen = METHODS[method]
    for heads, batch, k in SETTINGS:
        for causal in (False, True):
            sizes = [
                chosen.position_bytes(n, n, 8, heads * batch, k, causal) for n in range(1, 4201)
            ]
            assert all(a <= b for a, b in zip(sizes[:-1], sizes[1:], strict=True))


def test_banded_counts_its_q_w_product_and_one_block():
    for n, heads, batch, k in ((100, 1, 1, 2), (4096, 8, 1, 16), (5000, 2, 3, 64)):
        bh = heads * batch
        want = (bh * n * (2 * k + 1) + bh * block_rows(n, n, bh) * n) * 4
        assert memory_bytes("banded", n, 8, heads, batch, max_relative_position=k) == want


ATTENTION_MODES = [
    {"trace": True},
    {"trace": False},
    {"trace": False, "return_weights": True},
    {"trace": False, "grad": True},
    {"trace": False, "grad": True, "return_weights": True},
]


@pytest.mark.parametrize("mode", ATTENTION_MODES, ids=lambda m: "-".join(map(str, m.items())))
@pytest.mark.parametrize("method", METHOD_NAMES)
def test_attention_bytes_cover_the_output(method, mode):
    """At least the output (b, h, n_q, d_v), and at least the (b, h, n_q, n_k) weights when the
    trace or the weights are asked for or autograd runs through an unfused method."""
    chosen = METHODS[method]
    for b, h, n_q, n_k, d, d_v, k in ((1, 1, 1, 1, 1, 1, 0), (2, 4, 64, 80, 16, 8, 5)):
        if chosen.unsupported(n_q, n_k, 0):
            n_k = n_q
        need = attention_bytes(chosen, (b, h, n_q, n_k, d, d_v), k, itemsize=4, **mode)
        assert need >= b * h * n_q * d_v * 4
        square = mode.get("trace") or mode.get("return_weights") or chosen.kernel is None
        if square:
            assert need >= b * h * n_q * n_k * 4


GROWS = [
    pytest.param(m, mode, marks=pytest.mark.xfail(strict=True, reason="see banded above"))
    if m == "banded" and mode in ({"trace": False}, {"trace": False, "grad": True})
    else (m, mode)
    for m in METHOD_NAMES
    for mode in ATTENTION_MODES[:4]
]


@pytest.mark.parametrize(("method", "mode"), GROWS)
def test_attention_bytes_grow_with_n(method, mode):
    chosen = METHODS[method]
    for heads, batch, k in SETTINGS:
        sizes = [
            attention_bytes(chosen, (batch, heads, n, n, 8, 8), k, itemsize=4, **mode)
            for n in range(1, 4201)
        ]
        drops = [n for n in range(1, 4200) if sizes[n] < sizes[n - 1]]
        assert not drops, f"{method} {mode} {heads=} {batch=} {k=}: drops at n={drops[:5]}"
        assert sizes[-1] > sizes[0]


# --- the guard ---


def normal_inputs(n=64, d=8):
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, n, d, generator=gen) for _ in "qkv")
    table = torch.randn(9, d, generator=gen)
    return q, k, v, table, table


@pytest.mark.parametrize("method", METHOD_NAMES)
@pytest.mark.parametrize("trace", [False, True])
def test_max_bytes_refuses_before_allocating(method, trace):
    inputs = normal_inputs()
    watch = LargestTensor()
    with watch, pytest.raises(ValueError, match="needs about") as error:
        relative_attention(*inputs, method=method, trace=trace, max_bytes=1000)
    assert watch.largest < 2 * 64 * 64  # nothing of size (b, h, n_q, n_k) was made
    message = str(error.value)
    assert f"method {method!r}" in message and "max_bytes = 1000" in message
    assert "(1, 2, 64, 8)" in message
    out = relative_attention(*inputs, method=method, trace=trace, max_bytes=10**12)
    want = relative_attention(*inputs, method="bucket", trace=True).output
    torch.testing.assert_close(out.output if trace else out, want)


def test_the_estimate_in_the_message_is_the_estimate(monkeypatch):
    inputs = normal_inputs()
    chosen = METHODS["einsum"]
    need = attention_bytes(chosen, (1, 2, 64, 64, 8, 8), 4, itemsize=4)
    with pytest.raises(ValueError, match=re.escape(f"needs about {format_bytes(need)}")):
        relative_attention(*inputs, method="einsum", max_bytes=need - 1)
    relative_attention(*inputs, method="einsum", max_bytes=need)  # exactly enough runs


def test_the_default_limit_is_the_device_memory(monkeypatch):
    """max_bytes=None refuses what the device could not hold; a larger max_bytes overrides."""
    inputs = normal_inputs()
    monkeypatch.setattr(memory_module, "device_memory_bytes", lambda device=None: 4096)
    with pytest.raises(ValueError, match=r"needs about .*max_bytes = 4096 \(the device's total"):
        relative_attention(*inputs)
    relative_attention(*inputs, max_bytes=10**9)


def test_the_guard_is_sized_by_logits_for_unfused_methods():
    """An unfused method holds (b, h, n_q, n_k) tensors: its estimate is above the logits."""
    for method in ("einsum", "matmul", "bucket", "loop"):
        need = attention_bytes(METHODS[method], (2, 4, 512, 512, 16, 16), 8, itemsize=4)
        assert need >= logits_bytes(512, 4, 2)
