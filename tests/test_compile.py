"""torch.compile with fullgraph=True: the library's own code makes no graph break.

fullgraph=True turns any graph break into an error, so compiling at all is the check that the
memory guard, the dropout seed and the fused path's loops (one ``relpos::banded_attention`` op
with a fake kernel and a registered backward) are traceable. The compiled calls must then equal
eager mode, forward and backward. Sizes are tiny: each compilation costs seconds on two cores.
"""

from __future__ import annotations

import pytest
import torch

from relpos_core import RelativeMultiHeadAttention, relative_attention


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def inputs(seed, dtype=torch.float32, grad=True):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(2, 2, 6, 4), (2, 2, 8, 4), (2, 2, 8, 3), (5, 4), (5, 3)]  # k = 2
    return [torch.randn(s, generator=gen).to(dtype).requires_grad_(grad) for s in shapes]


def grads(out, tensors):
    return torch.autograd.grad(out, tensors, torch.ones_like(out))


def test_compiled_fast_call_equals_eager_forward_and_backward():
    mask = torch.rand(2, 1, 6, 8, generator=torch.Generator().manual_seed(1)) < 0.7
    mask[1, 0, 2] = False  # a query with no key: zero output in both

    def attend(q, k, v, table_k, table_v, mask):
        return relative_attention(q, k, v, table_k, table_v, mask=mask, causal=True,
                                  query_offset=2)  # fmt: skip

    compiled = torch.compile(attend, fullgraph=True)
    tensors = inputs(0)
    out = compiled(*tensors, mask)
    want = attend(*tensors, mask)
    torch.testing.assert_close(out, want)
    for got, expected in zip(grads(out, tensors), grads(want, tensors), strict=True):
        torch.testing.assert_close(got, expected)


def test_compiled_layer_equals_eager_and_trains_with_dropout():
    torch.manual_seed(0)
    layer = RelativeMultiHeadAttention(8, 2, 2, dropout=0.25).eval()
    compiled = torch.compile(layer, fullgraph=True)
    x = torch.randn(2, 7, 8, requires_grad=True)
    out, want = compiled(x, x, x, causal=True), layer(x, x, x, causal=True)
    torch.testing.assert_close(out, want)
    params = [x, *layer.parameters()]
    for got, expected in zip(grads(out, params), grads(want, params), strict=True):
        torch.testing.assert_close(got, expected)

    layer.train()  # dropout: the seed is drawn inside the graph, as a tensor
    runs = []
    for _ in range(2):
        torch.manual_seed(5)
        out = compiled(x, x, x, causal=True)
        runs.append((out, grads(out, params)))
    assert not torch.equal(runs[0][0], want)  # some weights were dropped
    torch.testing.assert_close(runs[0][0], runs[1][0], rtol=0, atol=0)  # same seed, same drops
    for got, again in zip(runs[0][1], runs[1][1], strict=True):
        assert torch.isfinite(got).all()
        torch.testing.assert_close(got, again, rtol=0, atol=0)


def test_compiled_layer_under_autocast_equals_eager():
    torch.manual_seed(2)
    layer = RelativeMultiHeadAttention(8, 2, 2)
    compiled = torch.compile(layer, fullgraph=True)
    x = torch.randn(2, 5, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, want = compiled(x, x, x), layer(x, x, x)
    assert out.dtype == want.dtype == torch.bfloat16
    torch.testing.assert_close(out, want, rtol=1.6e-2, atol=1e-2)  # inductor fuses differently


# Non-contiguous inputs: with b = 1 the layer's head views (b, n, h, d) -> (b, h, n, d) flatten
# to (b·h, n, d) without a copy, so the fused backward sees their strides. Its gradients must
# have the layout its registered fake promises, or the compiled backward stops on a stride check.


def layer_and_input(seed, dropout=0.0):
    torch.manual_seed(seed)
    layer = RelativeMultiHeadAttention(32, 2, 4, dropout=dropout)
    x = torch.randn(1, 48, 32, requires_grad=True)
    return layer, x


def test_compiled_layer_backward_through_head_views_equals_eager():
    layer, x = layer_and_input(3)
    compiled = torch.compile(layer, fullgraph=True)
    params = [x, *layer.parameters()]
    for causal in (False, True):
        out, want = compiled(x, x, x, causal=causal), layer(x, x, x, causal=causal)
        torch.testing.assert_close(out, want)
        for got, expected in zip(grads(out, params), grads(want, params), strict=True):
            torch.testing.assert_close(got, expected)


def test_compiled_call_with_transposed_and_sliced_inputs_equals_eager():
    gen = torch.Generator().manual_seed(4)
    base = torch.randn(1, 20, 2, 4, generator=gen, requires_grad=True)  # (b, n, h, d)
    wide = torch.randn(1, 2, 24, 6, generator=gen, requires_grad=True)
    table_k_t = torch.randn(4, 7, generator=gen, requires_grad=True)  # (d, 2k+1), k = 3
    table_v_wide = torch.randn(9, 3, generator=gen, requires_grad=True)
    leaves = [base, wide, table_k_t, table_v_wide]

    def attend(base, wide, table_k_t, table_v_wide):
        q = base.transpose(1, 2)  # (b, h, n_q, d), strides of (b, n, h, d)
        k = wide[:, :, ::2, :4]  # every other key, the first 4 channels
        v = wide[:, :, 1::2, 3:]  # (b, h, 12, 3)
        table_v = table_v_wide[1:8]  # (2k+1, d_v), a slice
        return relative_attention(q[:, :, :12], k, v, table_k_t.T, table_v, causal=True)

    compiled = torch.compile(attend, fullgraph=True)
    out, want = compiled(*leaves), attend(*leaves)
    torch.testing.assert_close(out, want)
    for got, expected in zip(grads(out, leaves), grads(want, leaves), strict=True):
        assert got.shape == expected.shape
        torch.testing.assert_close(got, expected)


def test_compiled_layer_with_dropout_trains_through_head_views():
    layer, x = layer_and_input(5, dropout=0.3)
    compiled = torch.compile(layer, fullgraph=True)
    params = [x, *layer.parameters()]
    # inductor's own RNG differs from eager's; with fallback_random it draws the seed as eager
    with torch._inductor.config.patch(fallback_random=True):
        torch.manual_seed(6)
        out = compiled(x, x, x, causal=True)
        torch.manual_seed(6)
        want = layer(x, x, x, causal=True)
    torch.testing.assert_close(out, want)
    for got, expected in zip(grads(out, params), grads(want, params), strict=True):
        assert got.shape == expected.shape and torch.isfinite(got).all()
        torch.testing.assert_close(got, expected)


def test_compiled_layer_backward_under_autocast_equals_eager():
    layer, x = layer_and_input(7)
    compiled = torch.compile(layer, fullgraph=True)
    params = [x, *layer.parameters()]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, want = compiled(x, x, x), layer(x, x, x)
    assert out.dtype == want.dtype == torch.bfloat16
    torch.testing.assert_close(out, want, rtol=1.6e-2, atol=1e-2)
    for got, expected in zip(grads(out, params), grads(want, params), strict=True):
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected, rtol=5e-2, atol=5e-2)
