"""float16 and bfloat16 everywhere the library takes tensors, against the float64 definition.

Inputs are drawn in float64 and rounded once to the half dtype; the reference is the definition
("loop", or a scheme's own float64 forward) on those same rounded values, so what is measured is
only what the half call adds: float32 inside, then one rounding of the result. That rounding is
half a unit in the last place of the result (bfloat16 keeps 8 significant bits, float16 11), so
the tolerances per dtype are, for results of size about 1:

    bfloat16   rtol 1.6e-2, atol 1e-2      (2^-8 relative, twice, and an absolute floor)
    float16    rtol 2e-3,   atol 2e-3      (2^-11 relative, four times)

A half path that summed the weights or took the softmax in the half dtype would be off by far
more at n_k in the hundreds; ``test_long_rows_keep_float32_sums`` checks one such row.
"""

from __future__ import annotations

import pytest
import torch

from relpos_core import (
    RelativeMultiHeadAttention,
    masked_softmax,
    relative_attention,
    relative_logits,
    relative_values,
)
from relpos_core.schemes import make_scheme
from relpos_core.schemes.catalogue import scheme_names

F64 = torch.float64
HALF = (torch.bfloat16, torch.float16)
TOL = {
    torch.bfloat16: {"rtol": 1.6e-2, "atol": 1e-2},
    torch.float16: {"rtol": 2e-3, "atol": 2e-3},
}


def rounded(dtype, *shapes, seed=0):
    """Tensors of ``shapes`` in ``dtype`` and the same values in float64."""
    gen = torch.Generator().manual_seed(seed)
    half = [torch.randn(s, generator=gen, dtype=F64).to(dtype) for s in shapes]
    return half, [t.to(F64) for t in half]


def close(got, want, dtype, **extra):
    assert got.dtype == dtype
    torch.testing.assert_close(got.to(F64), want, **{**TOL[dtype], **extra})


def shapes(b=2, h=2, n_q=7, n_k=9, d=4, d_v=3, k=2):
    return [(b, h, n_q, d), (b, h, n_k, d), (b, h, n_k, d_v), (2 * k + 1, d), (2 * k + 1, d_v)]


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("method", ["banded", "bucket", "einsum", "auto"])
@pytest.mark.parametrize("options", [{}, {"causal": True, "query_offset": 2}, {"mask": "random"}])
def test_attention_in_half_equals_the_float64_definition(dtype, method, options):
    half, ref = rounded(dtype, *shapes(), seed=1)
    if options.get("mask") == "random":
        mask = torch.rand(2, 1, 7, 9, generator=torch.Generator().manual_seed(2)) < 0.6
        mask[0, 0, 3] = False  # a query with nothing to attend to: zero output
        options = {"mask": mask}
    want = relative_attention(*ref, **options, method="loop")
    close(relative_attention(*half, **options, method=method), want, dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_weights_and_trace_come_back_in_the_inputs_dtype(dtype):
    half, ref = rounded(dtype, *shapes(n_q=5, n_k=5), seed=3)
    want = relative_attention(*ref, causal=True, method="loop", trace=True)
    out, weights = relative_attention(*half, causal=True, return_weights=True)
    close(out, want.output, dtype)
    close(weights, want.weights, dtype)
    trace = relative_attention(*half, causal=True, trace=True, method="skew")
    for name in ("relative_logits", "weights", "relative_output", "output"):
        close(getattr(trace, name), getattr(want, name), dtype, msg=name)
    assert trace.allowed.dtype == torch.bool


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("method", ["banded", "bucket"])
def test_gradients_in_half_equal_the_float64_gradients(dtype, method):
    """The fused path's own backward and autograd through an unfused method: the gradients of
    every input come back in its dtype, equal to float64's on the same rounded values."""
    half, ref = rounded(dtype, *shapes(), seed=4)
    half = [t.requires_grad_() for t in half]
    ref = [t.requires_grad_() for t in ref]
    seed_grad = torch.randn(2, 2, 7, 3, generator=torch.Generator().manual_seed(5), dtype=F64)
    want = torch.autograd.grad(
        relative_attention(*ref, causal=True, method="loop"), ref, seed_grad.to(dtype).to(F64)
    )
    out = relative_attention(*half, causal=True, method=method)
    got = torch.autograd.grad(out, half, seed_grad.to(dtype))
    for name, g, w in zip(("q", "k", "v", "table_k", "table_v"), got, want, strict=True):
        close(g, w, dtype, msg=name)


@pytest.mark.parametrize("dtype", HALF)
def test_key_and_value_terms_and_softmax_in_half(dtype):
    (q, table, weights), (q64, table64, weights64) = rounded(
        dtype, (2, 2, 6, 4), (5, 4), (2, 2, 6, 6), seed=6
    )
    close(relative_logits(q, table, method="banded"), relative_logits(q64, table64), dtype)
    close(
        relative_values(weights, table, method="banded"), relative_values(weights64, table64), dtype
    )
    allowed = torch.rand(2, 2, 6, 6, generator=torch.Generator().manual_seed(7)) < 0.5
    close(masked_softmax(q @ q.transpose(-2, -1), allowed), masked_softmax(q64 @ q64.mT, allowed),
          dtype)  # fmt: skip


def test_long_rows_keep_float32_sums():
    """One row of 2048 keys with a clip distance of 1: the right edge bucket sums ~2046 weights
    of ~1/2048 each. In bfloat16 a running sum stalls once it reaches 2^8 times the addend
    (about 0.125 here); summed in float32 the value term is right to bfloat16's last place."""
    n = 2048
    q = torch.zeros(1, 1, 1, 4, dtype=torch.bfloat16)
    k = torch.zeros(1, 1, n, 4, dtype=torch.bfloat16)
    v = torch.zeros(1, 1, n, 1, dtype=torch.bfloat16)
    table_k = torch.zeros(3, 4, dtype=torch.bfloat16)
    table_v = torch.tensor([[0.0], [0.0], [1.0]], dtype=torch.bfloat16)  # w^V_+1 = 1
    out = relative_attention(q, k, v, table_k, table_v)  # z = the right edge bucket's mass
    assert out.dtype == torch.bfloat16
    assert abs(out.item() - (n - 1) / n) <= 2**-8


@pytest.mark.parametrize("dtype", HALF)
def test_layer_cast_to_half_trains(dtype):
    torch.manual_seed(0)
    layer = RelativeMultiHeadAttention(8, 2, 2)
    reference = RelativeMultiHeadAttention(8, 2, 2).to(F64)
    layer.to(dtype)
    reference.load_state_dict({k: v.to(F64) for k, v in layer.state_dict().items()})
    (x,), (x64,) = rounded(dtype, (2, 6, 8), seed=8)
    out = layer(x, x, x, causal=True)
    want = reference(x64, x64, x64, causal=True)
    close(out, want, dtype, rtol=3 * TOL[dtype]["rtol"], atol=3 * TOL[dtype]["atol"])
    out.float().square().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == dtype for p in layer.parameters())


@pytest.mark.parametrize("dtype", HALF)
def test_layer_under_autocast_matches_float32(dtype):
    """Under autocast the projections run in ``dtype`` and the attention gets half heads from
    float32 tables: the output is in ``dtype`` and the float32 parameters get float32
    gradients, both within a few half roundings of the float32 layer (each projection and the
    attention round once: tolerances four times the single-rounding ones)."""
    torch.manual_seed(1)
    layer = RelativeMultiHeadAttention(16, 2, 3, method="auto")
    x = torch.randn(2, 12, 16)
    with torch.autocast("cpu", dtype=dtype):
        out = layer(x, x, x, causal=True)
    assert out.dtype == dtype
    want = layer(x, x, x, causal=True)
    tol = {"rtol": 4 * TOL[dtype]["rtol"], "atol": 4 * TOL[dtype]["atol"]}
    torch.testing.assert_close(out.float(), want, **tol)
    grads = torch.autograd.grad(out.float().sum(), list(layer.parameters()))
    want_grads = torch.autograd.grad(want.sum(), list(layer.parameters()))
    scale = max(w.abs().max().item() for w in want_grads)  # fc_k.bias's is 0: softmax shift
    for (name, _), g, w in zip(layer.named_parameters(), grads, want_grads, strict=True):
        assert g.dtype == torch.float32, name
        torch.testing.assert_close(g / scale, w / scale, **tol, msg=name)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", scheme_names())
def test_every_scheme_takes_half(dtype, name):
    scheme = make_scheme(name, heads=2, head_dim=4, seed=3)
    reference = make_scheme(name, heads=2, head_dim=4, seed=3).to(F64)
    (q, k, v), (q64, k64, v64) = rounded(dtype, (2, 2, 6, 4), (2, 2, 6, 4), (2, 2, 6, 4), seed=9)
    z, weights = scheme(q, k, v, causal=True)
    z64, weights64 = reference(q64, k64, v64, causal=True)
    close(z, z64, dtype)
    close(weights, weights64, dtype)
    terms = scheme.terms(q, k)
    for term, value in reference.terms(q64, k64).items():
        close(terms[term], value, dtype, msg=term)


def test_integer_inputs_are_still_refused():
    q = torch.zeros(1, 1, 2, 2, dtype=torch.int64)
    with pytest.raises(TypeError, match="q must be float16, bfloat16, float32 or float64"):
        relative_attention(q, q, q, torch.zeros(3, 2), torch.zeros(3, 2))
