"""The library on a CUDA device: what ``"auto"`` runs there equals the definition.

Skipped without a CUDA device (the CPU suite checks the GPU path's composition through
``dense_region`` and FlexAttention's reference implementation, see ``test_flex.py``, and the
Triton kernel through Triton's interpreter, see ``test_triton_kernel.py``). On a GPU this runs
the compiled Triton kernel (what "auto" takes without a mask), the compiled FlexAttention path,
forward and backward, and the blocked path for what neither takes (dropout, returned weights),
each against the "bucket" definition computed in float64 on the CPU.
"""

from __future__ import annotations

import pytest
import torch

from relpos_core import RelativeMultiHeadAttention, relative_attention
from relpos_core.admission import which_method
from relpos_core.methods import FLEX, choose_method
from relpos_core.methods.flex import flex_attention_relative

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


def check_against_definition(case, run, dtype=torch.float32, tol=(2e-4, 2e-5, 5e-4)):
    """``run(xs, mask (cuda or None), causal, offset)`` on the GPU against the definition."""
    b, h, n_q, n_k, d, k, offset, causal, masked = case
    tensors = make(b, h, n_q, n_k, d, k, seed=n_q + k)
    gen = torch.Generator().manual_seed(1)
    mask = torch.rand(b, 1, n_q, n_k, generator=gen) < 0.7 if masked else None
    g = torch.randn(b, h, n_q, d, generator=gen, dtype=F64)
    want, want_grads = definition(tensors, g, mask=mask, causal=causal, query_offset=offset)
    xs = on_gpu(tensors, dtype)
    got = run(xs, None if mask is None else mask.to(CUDA), causal, offset)
    assert got.dtype == dtype
    got_grads = torch.autograd.grad(got, xs, g.to(CUDA, dtype))
    rtol, atol, grad_atol = tol
    torch.testing.assert_close(got.cpu().to(F64), want, rtol=rtol, atol=atol)
    for name, x, y in zip(NAMES, got_grads, want_grads, strict=True):
        torch.testing.assert_close(x.cpu().to(F64), y, rtol=rtol, atol=grad_atol, msg=name)


# the kernel's own edges: k = 256 (a band wider than a tile), head sizes 128 and 48 (padded)
TRITON_CASES = [c for c in CASES if not c[-1]] + [
    (1, 2, 700, 700, 128, 256, 0, False, False),
    (1, 3, 150, 190, 48, 5, 40, True, False),
]


@pytest.mark.parametrize("case", TRITON_CASES)
def test_the_triton_kernel_on_cuda_equals_the_definition(case):
    b, h, n_q, n_k, d, k, offset, causal, _ = case
    xs = on_gpu(make(b, h, n_q, n_k, d, k, seed=0), torch.float32)
    assert which_method(*xs, causal=causal, query_offset=offset)[0] == "triton"

    def run(xs, mask, causal, offset):
        return relative_attention(*xs, method="triton", causal=causal, query_offset=offset)

    check_against_definition(case, run)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_the_triton_kernel_on_cuda_in_half_precision(dtype):
    def run(xs, mask, causal, offset):
        return relative_attention(*xs, causal=causal, query_offset=offset)  # auto: triton

    check_against_definition((2, 4, 512, 512, 64, 32, 0, True, False), run, dtype,
                             tol=(2e-2, 2e-2, 5e-2))  # fmt: skip


@pytest.mark.parametrize("case", [c for c in CASES if not c[-1]])
def test_the_flex_path_on_cuda_equals_the_definition(case):
    """FlexAttention's path, which "auto" now leaves to masked calls, kept checked unmasked."""

    def run(xs, mask, causal, offset):
        return flex_attention_relative(*xs, mask, causal, offset)

    check_against_definition(case, run)


@pytest.mark.parametrize("case", CASES)
def test_auto_on_cuda_equals_the_definition(case):
    """ "auto" takes the Triton kernel without a mask and FlexAttention's path with one."""
    b, h, n_q, n_k, d, k, offset, causal, masked = case
    assert choose_method(n_q, n_k, device=CUDA, grad=True) is FLEX  # what auto leaves to FLEX
    xs = on_gpu(make(b, h, n_q, n_k, d, k, seed=0), torch.float32)
    mask = torch.ones(n_q, n_k, dtype=torch.bool, device=CUDA) if masked else None
    kwargs = {"mask": mask, "causal": causal, "query_offset": offset}
    assert which_method(*xs, **kwargs)[0] == ("flex" if masked else "triton")

    def run(xs, mask, causal, offset):
        return relative_attention(*xs, mask=mask, causal=causal, query_offset=offset)

    check_against_definition(case, run)


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
