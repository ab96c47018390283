"""The GPU path (``relpos_core.methods.flex``), checked on a CPU.

The composition (two masked regions, the band, the combination through the log-sum-exps) runs
here with ``dense_region``, the definition of what FlexAttention computes, so forward and
backward are compared with the "loop" definition in float64. FlexAttention itself runs here
by its reference implementation (torch 2.13's compiled CPU kernel returns no log-sum-exp and
has no backward), forward only: the same block masks, mask_mods and log-sum-exp convention as
the compiled CUDA kernel. The profiler counts the ops one call launches at several n: constant
for this path, growing with n for the blocked loop.
"""

from __future__ import annotations

from collections import OrderedDict

import pytest
import torch

from relpos_core import attention_bytes, relative_attention
from relpos_core.methods import FLEX, choose_method
from relpos_core.methods.flex import (
    BAND_ROWS,
    compiled_flex_attention,
    dense_region,
    flex_attention_relative,
    flex_region,
)

F64 = torch.float64
# FlexAttention outside torch.compile says it runs its reference implementation: that is the
# point here; torch's compiler imports a deprecated torch.jit helper (torch 2.13)
pytestmark = [
    pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile:UserWarning"),
    pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning"),
]


def make(b, h, n_q, n_k, d, d_v, k, seed, dtype=F64, grad=False):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(b, h, n_q, d), (b, h, n_k, d), (b, h, n_k, d_v), (2 * k + 1, d), (2 * k + 1, d_v)]
    return [torch.randn(s, generator=gen, dtype=F64).to(dtype).requires_grad_(grad) for s in shapes]


def random_mask(shape, seed, empty_row=True):
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) < 0.6
    if empty_row:
        mask[0, 0, 1] = False  # a query with nothing to attend to: zero output, zero gradient
    return mask


# (b, h, n_q, n_k, d, d_v, k, query_offset, causal, masked): square, a cache (keys before the
# queries), queries past the last key, k = 0, k beyond the sequence, more than one band block
CASES = [
    (2, 2, 7, 9, 4, 3, 2, 2, True, False),
    (2, 2, 7, 9, 4, 3, 2, 2, False, True),
    (1, 2, 6, 6, 3, 3, 0, 0, False, False),
    (1, 1, 6, 6, 2, 2, 9, 0, False, True),
    (1, 1, 5, 4, 3, 2, 1, 3, False, False),
    (1, 2, BAND_ROWS + 7, BAND_ROWS + 20, 4, 2, 5, 6, True, True),
    (2, 1, 2 * BAND_ROWS + 3, 2 * BAND_ROWS + 3, 4, 4, 3, 0, False, False),
]


@pytest.mark.parametrize("case", CASES)
def test_composition_equals_the_definition_forward_and_backward(case):
    b, h, n_q, n_k, d, d_v, k, offset, causal, masked = case
    tensors = make(b, h, n_q, n_k, d, d_v, k, seed=n_q + k, grad=True)
    mask = random_mask((b, 1, n_q, n_k), seed=n_k) if masked else None
    want = relative_attention(*tensors, mask=mask, causal=causal, query_offset=offset,
                              method="loop" if n_q * n_k < 100 else "bucket")  # fmt: skip
    got = flex_attention_relative(*tensors, mask, causal, offset, region=dense_region)
    torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(1), dtype=F64)
    want_grads = torch.autograd.grad(want, tensors, g)
    got_grads = torch.autograd.grad(got, tensors, g)
    for name, x, y in zip(
        ("q", "k", "v", "table_k", "table_v"), got_grads, want_grads, strict=True
    ):
        torch.testing.assert_close(x, y, rtol=1e-9, atol=1e-11, msg=name)


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[2], CASES[5]])
def test_flex_attention_gives_the_definition(case):
    """FlexAttention's own block masks and log-sum-exp (its reference implementation)."""
    b, h, n_q, n_k, d, d_v, k, offset, causal, masked = case
    tensors = make(b, h, n_q, n_k, 16, 16, k, seed=3, dtype=torch.float32)  # d >= 16 for flex
    mask = random_mask((b, 1, n_q, n_k), seed=4) if masked else None
    want = relative_attention(*(t.to(F64) for t in tensors), mask=mask, causal=causal,
                              query_offset=offset, method="bucket")  # fmt: skip
    got = flex_attention_relative(*tensors, mask, causal, offset, region=flex_region)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.to(F64), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("dtype", "tol"), [(torch.bfloat16, 1.6e-2), (torch.float16, 2e-3)]
)  # as tests/test_half_precision.py: one rounding of the result
def test_half_inputs_through_flex_attention(dtype, tol):
    tensors = make(2, 2, 20, 20, 16, 16, 3, seed=5, dtype=dtype)
    want = relative_attention(*(t.to(F64) for t in tensors), causal=True, method="bucket")
    got = flex_attention_relative(*tensors, None, True, 0, region=flex_region)
    assert got.dtype == dtype
    torch.testing.assert_close(got.to(F64), want, rtol=tol, atol=tol)


def test_auto_picks_flex_on_cuda_for_the_fast_call_only():
    assert choose_method(4096, 4096, device="cuda") is FLEX
    assert choose_method(4096, 4096, device=torch.device("cuda", 0), grad=True) is FLEX
    for asked in ({"trace": True}, {"dropout": True}, {"weights": True}):
        assert choose_method(64, 64, device="cuda", **asked).name == "banded"
    assert choose_method(64, 64, device="cpu").name == "banded"
    assert choose_method(64, 64).name == "banded"
    shape = (4, 16, 16384, 16384, 64, 64)  # the bench's largest: about 8 GB with the backward
    need = attention_bytes(FLEX, shape, 64, itemsize=2, grad=True)
    assert need < 4 * 16 * 16384 * 16384 * 2 / 4  # a quarter of one (b, h, n, n) bf16 tensor


def test_the_compiled_flex_attention_is_one_shared_function():
    """The bench and ``flex_region`` share one compiled FlexAttention (and its compilations);
    building it compiles nothing yet, so this holds on a CPU too."""
    run = compiled_flex_attention()
    assert callable(run)
    assert compiled_flex_attention() is run


def op_count(run) -> int:
    """Ops (aten and FlexAttention's) that one call runs, as the profiler records them."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    return sum(1 for e in prof.events() if e.name.startswith(("aten::", "flex")))


def test_kernels_per_call_do_not_grow_with_n():
    """At n = 256, 768 and 2048 the flex path runs the same number of ops around exactly two
    region calls (each one FlexAttention kernel on a GPU, after a block mask whose own ops do
    not grow with n either); the blocked loop, for contrast, runs more ops as n grows (its
    blocks of rows and strips of STRIP_ROWS rows). Here each region is ``dense_region``: the
    reference FlexAttention runs on a CPU has its own, size-dependent, op count."""
    from torch.nn.attention.flex_attention import create_block_mask

    counts, regions, masks, blocked = [], [], [], []
    for n in (256, 768, 2048):
        tensors = make(1, 2, n, n, 16, 16, 4, seed=n, dtype=torch.float32)
        calls = []

        def region(*args, calls=calls):
            calls.append(1)
            return dense_region(*args)

        with torch.no_grad():
            counts.append(
                op_count(lambda t=tensors, r=region: flex_attention_relative(*t, None, True, 0, r))
            )
            masks.append(op_count(lambda n=n: create_block_mask(
                lambda b, h, i, j: j <= i - 4, 1, 2, n, n, device="cpu"
            )))  # fmt: skip
            every = torch.ones(n, n, dtype=torch.bool)  # a mask: the blocked loop, not regions
            blocked.append(
                op_count(lambda t=tensors, m=every: relative_attention(*t, mask=m, causal=True))
            )
        regions.append(len(calls))
    assert counts[0] == counts[1] == counts[2], counts
    assert regions == [2, 2, 2]
    assert masks[0] == masks[1] == masks[2], masks
    assert blocked[0] < blocked[1] < blocked[2], blocked
    assert blocked[2] > 2 * (counts[2] + 2 * masks[2]), (blocked, counts, masks)


def test_a_regions_block_mask_is_built_once_per_shape(monkeypatch):
    """Building a block mask costs as much as the attention it steers (on a GPU it was most of
    a call): without a mask of the caller's, the two regions' masks are built once and kept."""
    import torch.nn.attention.flex_attention as fa

    from relpos_core.methods import flex

    built = []
    real = fa.create_block_mask
    monkeypatch.setattr(
        fa, "create_block_mask", lambda *a, **kw: built.append(a[1:5]) or real(*a, **kw)
    )
    monkeypatch.setattr(flex, "_block_masks", OrderedDict(), raising=False)  # none kept yet
    tensors = make(1, 2, 40, 40, 16, 16, 3, seed=6, dtype=torch.float32)
    outs = [flex_attention_relative(*tensors, None, True, 0, region=flex_region) for _ in range(3)]
    assert built == [(1, 1, 40, 40)] * 2  # left and right, for a batch and heads of 1
    torch.testing.assert_close(outs[2], outs[0], rtol=0, atol=0)
    mask = random_mask((1, 1, 40, 40), seed=2, empty_row=False)  # the caller's: built per call
    flex_attention_relative(*tensors, mask, True, 0, region=flex_region)
    assert built[2:] == [(1, 1, 40, 40)] * 2
