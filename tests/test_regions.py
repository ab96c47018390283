"""The region split (``methods.regions``) against the definition, forward and backward, in
float64, at the sizes where its band blocks change shape (across blocks, heads laid end to end,
k beyond the block, k = 0, k past the sequence)."""

from __future__ import annotations

import math

import pytest
import torch

from relpos_core import relative_attention
from relpos_core.methods.regions import BLOCK_ROWS, TWO_SIDED_MIN_N, region_attention, regions_apply

F64 = torch.float64


def definition(q, k, v, table_k, table_v, causal):
    """Shaw et al.'s eqs. 3-5 written out: a^K, a^V gathered for every pair."""
    n, d = q.shape[-2:]
    kk = (table_k.shape[0] - 1) // 2
    r = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # j - i
    index = r.clamp(-kk, kk) + kk
    e = q @ k.transpose(-1, -2) + torch.einsum("bhid,ijd->bhij", q, table_k[index])
    e = e / math.sqrt(d)
    if causal:
        e = e.masked_fill(r > 0, float("-inf"))
    a = e.softmax(-1)
    return a @ v + torch.einsum("bhij,ije->bhie", a, table_v[index])


def inputs(b, h, n, d, kk, seed):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(b, h, n, d)] * 3 + [(2 * kk + 1, d)] * 2
    return [torch.randn(s, generator=gen, dtype=F64, requires_grad=True) for s in shapes]


def grads(fn, tensors, seed=0):
    out = fn(*tensors)
    weight = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
    return out, torch.autograd.grad((out * weight).sum(), tensors)


# (n, k): the band's blocks (BLOCK_ROWS) on both sides of their boundaries, 2k above a block,
# k = 0, and k = n - 2 (far regions of one cell)
SIZES = [(2, 0), (5, 1), (BLOCK_ROWS, 3), (BLOCK_ROWS + 1, 40), (2 * BLOCK_ROWS + 9, 2),
         (130, 0), (300, 298), (3 * BLOCK_ROWS + 1, 16)]  # fmt: skip


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n", "kk"), SIZES)
def test_regions_equal_the_definition_forward_and_backward(n, kk, causal):
    tensors = inputs(2, 2, n, 3, kk, seed=n + kk)
    out, got = grads(lambda *t: region_attention(*t, causal), tensors)
    want_out, want = grads(lambda *t: definition(*t, causal), tensors)
    torch.testing.assert_close(out, want_out, rtol=1e-10, atol=1e-12)
    for name, g, w in zip(("q", "k", "v", "table_k", "table_v"), got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-9, atol=1e-11, msg=f"d/d{name}")


def test_regions_pass_gradcheck():
    tensors = inputs(1, 2, 9, 2, 2, seed=3)
    for causal in (False, True):
        assert torch.autograd.gradcheck(
            lambda *t, causal=causal: region_attention(*t, causal), tensors
        )


def test_relative_attention_runs_the_regions_where_they_apply_and_blocks_elsewhere():
    q, k, v, tk, tv = inputs(1, 2, 20, 4, 3, seed=5)
    fused = relative_attention(q, k, v, tk, tv, method="banded", causal=True)
    assert type(fused.grad_fn).__name__ == "_RegionAttentionBackward"
    torch.testing.assert_close(fused, definition(q, k, v, tk, tv, True))
    mask = torch.ones(20, 20, dtype=torch.bool)
    for options in ({"mask": mask}, {"dropout_p": 0.1}, {"causal": False}):  # last: two-sided
        options = {"causal": True, **options}
        out = relative_attention(q, k, v, tk, tv, method="banded", **options)
        assert "relpos_banded_attention" in type(out.grad_fn).__name__
    assert not regions_apply(q, k, v[..., :3], tk, None, True, 0, 0.0)  # d_v != d
    assert not regions_apply(q[:, :, 1:], k, v, tk, None, True, 1, 0.0)  # offset
    assert not regions_apply(q, k, v, torch.zeros(41, 4, dtype=F64), None, True, 0, 0.0)
    long = torch.zeros(1, 1, TWO_SIDED_MIN_N, 4)
    assert regions_apply(long, long, long, tk, None, False, 0, 0.0)


def test_the_forward_band_runs_on_one_thread_and_the_flash_kernel_on_all(monkeypatch):
    """Beside busy processes a parallel op waits for its slowest thread: the forward's band ops
    run on one thread, the flash kernel on torch's count, which is restored afterwards (also
    when the call fails)."""
    from relpos_core.methods import regions

    seen = {}
    flash, softmax = regions._flash, torch.softmax

    def spy_flash(*args, **kwargs):
        seen["flash"] = torch.get_num_threads()
        return flash(*args, **kwargs)

    def spy_softmax(*args, **kwargs):
        seen["band"] = torch.get_num_threads()
        return softmax(*args, **kwargs)

    monkeypatch.setattr(regions, "_flash", spy_flash)
    monkeypatch.setattr(torch, "softmax", spy_softmax)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        q, k, v, tk, tv = (t.detach() for t in inputs(1, 2, 40, 4, 3, seed=7))
        torch.testing.assert_close(
            region_attention(q, k, v, tk, tv, True), definition(q, k, v, tk, tv, True)
        )
        assert seen == {"flash": 2, "band": 1}
        assert torch.get_num_threads() == 2

        def fail(*args, **kwargs):
            raise RuntimeError("stop")

        monkeypatch.setattr(torch, "softmax", fail)
        with pytest.raises(RuntimeError, match="stop"):
            region_attention(q, k, v, tk, tv, True)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("layout", ["d-major", "step-sliced", "expanded"])
@pytest.mark.parametrize("causal", [False, True])
def test_regions_read_heads_of_any_stride(layout, causal):
    """The CPU flash kernel reads the last dimension as if its stride were 1: a transposed,
    step-sliced or expanded head must reach it contiguous, forward and backward."""
    n, d, kk = 37, 3, 4
    gen = torch.Generator().manual_seed(11)

    def head():
        if layout == "d-major":
            x = torch.randn(2, 2, d, n, generator=gen, dtype=F64).transpose(-1, -2)
        elif layout == "step-sliced":
            x = torch.randn(2, 2, n, 2 * d, generator=gen, dtype=F64)[..., ::2]
        else:
            x = torch.randn(2, 2, n, 1, generator=gen, dtype=F64).expand(2, 2, n, d)
        return x.requires_grad_(layout != "expanded")

    tensors = [head() for _ in range(3)]
    tensors += [torch.randn(2 * kk + 1, d, generator=gen, dtype=F64, requires_grad=True)] * 1
    tensors += [torch.randn(2 * kk + 1, d, generator=gen, dtype=F64, requires_grad=True)]
    assert tensors[0].stride(-1) != 1
    out = region_attention(*tensors, causal)
    torch.testing.assert_close(out, definition(*tensors, causal), rtol=1e-10, atol=1e-12)
    weight = torch.randn(out.shape, generator=gen, dtype=F64)
    wanted = [t for t in tensors if t.requires_grad]
    got = torch.autograd.grad((out * weight).sum(), wanted)
    want = torch.autograd.grad((definition(*tensors, causal) * weight).sum(), wanted)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, rtol=1e-9, atol=1e-11)
