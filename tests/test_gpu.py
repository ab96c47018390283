"""The library on a CUDA device: what ``"auto"`` runs there equals the definition.

Skipped without a CUDA device (the CPU suite checks the GPU path's composition through
``dense_region`` and FlexAttention's reference implementation, see ``test_flex.py``). On a GPU
this runs the real compiled FlexAttention kernel, forward and backward, and the blocked path for
what FlexAttention does not take (dropout, returned weights), each against the "bucket"
definition computed in float64 on the CPU.
"""

from __future__ import annotations

import pytest
import torch

from relpos_core import RelativeMultiHeadAttention, relative_attention
from relpos_core.methods import FLEX, choose_method

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    # torch's backward on a worker thread sets its CUDA context itself, and says so
    pytest.mark.filterwarnings("ignore:Attempting to run cuBLAS:UserWarning"),
    # inductor's advice on float32 matmuls: the tests keep torch's exact default
    pytest.mark.filterwarnings("ignore:TensorFloat32 tensor cores:UserWarning"),
    # dynamo reads .grad of the layer's head views while compiling FlexAttention (torch 2.11)
    pytest.mark.filterwarnings(
        "ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning"
    ),
]

F64 = torch.float64
CUDA = "cuda"
NAMES = ("q", "k", "v", "table_k", "table_v")


def make(b, h, n_q, n_k, d, k, seed):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(b, h, n_q, d), (b, h, n_k, d), (b, h, n_k, d), (2 * k + 1, d), (2 * k + 1, d)]
    return [torch.randn(s, generator=gen, dtype=F64) for s in shapes]


def definition(tensors, g, **kwargs):
    """z and the gradients of sum(g * z), float64 on the CPU, by the bucket definition."""
    xs = [t.detach().clone().requires_grad_(True) for t in tensors]
    z = relative_attention(*xs, method="bucket", **kwargs)
    return z, torch.autograd.grad(z, xs, g)


def on_gpu(tensors, dtype):
    return [t.to(CUDA, dtype).requires_grad_(True) for t in tensors]


# (b, h, n_q, n_k, d, k, query_offset, causal, masked): self-attention causal and two-sided
# across several band blocks, a key cache with a mask, k past the sequence, k = 0
CASES = [
    (2, 4, 300, 300, 64, 16, 0, True, False),
    (2, 4, 300, 300, 64, 16, 0, False, False),
    (1, 2, 200, 264, 32, 8, 64, True, True),
    (1, 2, 40, 40, 16, 64, 0, False, True),
    (1, 2, 130, 130, 32, 0, 0, True, False),
]


@pytest.mark.parametrize("case", CASES)
def test_auto_on_cuda_runs_flex_attention_and_equals_the_definition(case):
    b, h, n_q, n_k, d, k, offset, causal, masked = case
    tensors = make(b, h, n_q, n_k, d, k, seed=n_q + k)
    gen = torch.Generator().manual_seed(1)
    mask = torch.rand(b, 1, n_q, n_k, generator=gen) < 0.7 if masked else None
    g = torch.randn(b, h, n_q, d, generator=gen, dtype=F64)
    assert choose_method(n_q, n_k, device=CUDA, grad=True) is FLEX
    kwargs = {"mask": mask, "causal": causal, "query_offset": offset}
    want, want_grads = definition(tensors, g, **kwargs)
    xs = on_gpu(tensors, torch.float32)
    cuda_kwargs = {**kwargs, "mask": None if mask is None else mask.to(CUDA)}
    got = relative_attention(*xs, **cuda_kwargs)
    got_grads = torch.autograd.grad(got, xs, g.to(CUDA, torch.float32))
    torch.testing.assert_close(got.cpu().to(F64), want, rtol=2e-4, atol=2e-5)
    for name, x, y in zip(NAMES, got_grads, want_grads, strict=True):
        torch.testing.assert_close(x.cpu().to(F64), y, rtol=2e-4, atol=5e-4, msg=name)


def test_bfloat16_on_cuda_is_one_rounding_from_the_definition():
    tensors = make(2, 4, 512, 512, 64, 32, seed=7)
    g = torch.randn(2, 4, 512, 64, generator=torch.Generator().manual_seed(2), dtype=F64)
    want, _ = definition(tensors, g, causal=True)
    got = relative_attention(*on_gpu(tensors, torch.bfloat16), causal=True)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.cpu().to(F64), want, rtol=2e-2, atol=2e-2)


def test_the_blocked_path_on_cuda_returns_the_definitions_weights():
    tensors = make(1, 2, 100, 100, 32, 8, seed=3)
    want_z, want_w = relative_attention(*tensors, causal=True, return_weights=True,
                                        method="bucket")  # fmt: skip
    got_z, got_w = relative_attention(
        *(t.to(CUDA, torch.float32) for t in tensors), causal=True, return_weights=True
    )
    torch.testing.assert_close(got_z.cpu().to(F64), want_z, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got_w.cpu().to(F64), want_w, rtol=1e-4, atol=1e-6)


def test_compiled_layer_on_cuda_trains_as_eager():
    torch.manual_seed(0)
    layer = RelativeMultiHeadAttention(128, 4, 16).to(CUDA)
    compiled = torch.compile(layer, fullgraph=True)
    x = torch.randn(2, 200, 128, device=CUDA, requires_grad=True)
    out, want = compiled(x, x, x, causal=True), layer(x, x, x, causal=True)
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-5)
    params = [x, *layer.parameters()]
    got = torch.autograd.grad(out, params, torch.ones_like(out))
    expected = torch.autograd.grad(want, params, torch.ones_like(want))
    for a, e in zip(got, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-3, atol=1e-4)
