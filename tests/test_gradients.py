"""Gradients of the fused banded path (its own backward, recomputing each block's weights).

``torch.autograd.gradcheck`` in float64 compares the backward with finite differences of the
forward, with respect to q, k, v, table_k and table_v; the same gradients must also come out of
autograd through the "loop" definition and through "bucket". Dropout must be reproducible from
the generator (the backward regenerates the keep-mask), and the graph must keep nothing of size
(b, h, n_q, n_k) for the backward.
"""

from __future__ import annotations

import pytest
import torch
from torch.autograd import gradcheck

import relpos_core.methods.banded as banded_module
from relpos_core import relative_attention, relative_logits, relative_values
from relpos_core.methods.banded import block_rows

F64 = torch.float64


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread: many tiny ops, each a parallel region, crawl on a busy 2-core
    machine with two threads; the numbers do not depend on it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def make_inputs(b, h, n_q, n_k, d, d_v, k, seed, grad=True):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(b, h, n_q, d), (b, h, n_k, d), (b, h, n_k, d_v), (2 * k + 1, d), (2 * k + 1, d_v)]
    return tuple(torch.randn(s, generator=gen, dtype=F64).requires_grad_(grad) for s in shapes)


def random_mask(b, h, n_q, n_k, seed, empty_row=None):
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(b, h, n_q, n_k, generator=gen) < 0.6
    if empty_row is not None:
        mask[0, 0, empty_row] = False
    return mask


def padding(lengths, n_k):
    """(b, 1, 1, n_k): batch element i attends to its first lengths[i] keys."""
    return (torch.arange(n_k)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]


def is_fused(out: torch.Tensor) -> bool:
    """The output comes from a fused backward: the ``relpos::banded_attention`` op's, or the
    region split's (``relpos_core.methods.regions``, self-attention without a mask on the CPU)."""
    name = type(out.grad_fn).__name__
    return "relpos_banded_attention" in name or name == "_RegionAttentionBackward"


def banded(**options):
    def run(*tensors):
        out = relative_attention(*tensors, **options, method="banded")
        assert is_fused(out)
        return out

    return run


# (id, (b, h, n_q, n_k, d, d_v, k), options)
CASES = [
    ("no mask", (2, 2, 6, 6, 3, 2, 2), {}),
    ("causal", (1, 2, 6, 6, 3, 2, 2), {"causal": True}),
    ("padding mask", (2, 1, 5, 5, 3, 2, 1), {"mask": padding([5, 3], 5)}),
    ("padding mask causal", (2, 1, 5, 5, 3, 2, 1), {"mask": padding([5, 2], 5), "causal": True}),
    ("random mask, empty row", (2, 2, 5, 6, 3, 2, 2), {"mask": random_mask(2, 2, 5, 6, 0, 2)}),
    ("cross lengths, offset", (1, 2, 4, 7, 3, 2, 2), {"query_offset": 2}),
    ("cross lengths, offset, causal", (1, 2, 4, 7, 3, 2, 2), {"query_offset": 2, "causal": True}),
    ("t2t offset n_k - n_q", (1, 2, 3, 7, 3, 2, 2), {"query_offset": 4, "causal": True}),
    ("queries past the keys", (1, 1, 3, 4, 2, 2, 1), {"query_offset": 6}),
    ("more queries than keys", (1, 2, 7, 4, 3, 2, 2), {"causal": True}),
    ("k = 0", (1, 2, 5, 5, 3, 2, 0), {}),
    ("k = 0 causal", (1, 2, 5, 5, 3, 2, 0), {"causal": True}),
    ("k larger than n", (1, 2, 5, 4, 3, 2, 9), {}),
    ("k larger than n, offset", (1, 1, 3, 5, 3, 2, 9), {"query_offset": 2, "causal": True}),
]


@pytest.mark.parametrize(("shape", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradcheck_fused(shape, options):
    inputs = make_inputs(*shape, seed=sum(shape))
    assert gradcheck(banded(**options), inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


def loss_grads(method, inputs, options, seed=1):
    """Gradients of sum(out * R) for a fixed random R, w.r.t. all five inputs."""
    tensors = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = relative_attention(*tensors, **options, method=method)
    weight = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
    grads = torch.autograd.grad((out * weight).sum(), tensors)
    return out, grads


@pytest.mark.parametrize(("shape", "options"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fused_gradients_equal_autograd_through_the_definition(shape, options):
    inputs = make_inputs(*shape, seed=sum(shape) + 1)
    out, grads = loss_grads("banded", inputs, options)
    assert is_fused(out)
    for method in ("loop", "bucket"):
        want_out, want = loss_grads(method, inputs, options)
        assert not is_fused(want_out)
        torch.testing.assert_close(out, want_out)
        for name, got, expected in zip(
            ("q", "k", "v", "table_k", "table_v"), grads, want, strict=True
        ):
            torch.testing.assert_close(got, expected, msg=f"{method}: d/d{name}")


# (n_q, n_k, query_offset, k): a band inside the keys, and blocks entirely left of it
TERM_CASES = [(6, 6, 0, 2), (4, 7, 2, 2), (1, 1, 0, 0), (1, 1, 2, 2), (2, 4, 10, 1), (3, 5, 7, 2)]


@pytest.mark.parametrize(("n_q", "n_k", "offset", "k"), TERM_CASES)
def test_unfused_banded_terms_have_the_definition_gradients(n_q, n_k, offset, k):
    """Autograd through banded's key and value terms (the traced path) equals autograd through
    the loop definition, wherever the band falls."""
    gen = torch.Generator().manual_seed(n_q + n_k + offset + k)

    def grads(method):
        q = torch.randn(2, 1, n_q, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
        weights = torch.rand(2, 1, n_q, n_k, generator=torch.Generator().manual_seed(1))
        table = torch.randn(2 * k + 1, 3, generator=torch.Generator().manual_seed(2), dtype=F64)
        tensors = [q.requires_grad_(), weights.double().requires_grad_(), table.requires_grad_()]
        key = relative_logits(tensors[0], tensors[2], n_k, method=method, query_offset=offset)
        value = relative_values(tensors[1], tensors[2], method=method, query_offset=offset)
        loss = (key * key_weight).sum() + (value * value_weight).sum()
        return torch.autograd.grad(loss, tensors)

    key_weight = torch.randn(2, 1, n_q, n_k, generator=gen, dtype=F64)
    value_weight = torch.randn(2, 1, n_q, 3, generator=gen, dtype=F64)
    for name, got, want in zip(
        ("q", "weights", "table"), grads("banded"), grads("loop"), strict=True
    ):
        torch.testing.assert_close(got, want, msg=name)


@pytest.mark.parametrize(("n_q", "n_k", "offset", "k"), TERM_CASES)
def test_traced_attention_has_the_definition_gradients(n_q, n_k, offset, k):
    inputs = make_inputs(1, 2, n_q, n_k, 3, 2, k, seed=n_q * n_k + offset)

    def grads(method):
        tensors = [t.detach().clone().requires_grad_() for t in inputs]
        trace = relative_attention(*tensors, query_offset=offset, method=method, trace=True)
        return torch.autograd.grad(trace.output.square().sum(), tensors)

    for name, got, want in zip(
        ("q", "k", "v", "table_k", "table_v"), grads("banded"), grads("loop"), strict=True
    ):
        torch.testing.assert_close(got, want, msg=name)


def test_fully_masked_row_has_zero_gradient():
    """A query that attends to nothing has output 0 whatever its inputs: its gradient is 0."""
    q, k, v, tk, tv = make_inputs(1, 1, 4, 4, 3, 2, 1, seed=5)
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[1] = False
    out = relative_attention(q, k, v, tk, tv, mask=mask, method="banded")
    out.square().sum().backward()
    assert torch.equal(q.grad[0, 0, 1], torch.zeros(3))
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v, tk, tv))


# --- several blocks of rows ---

BLOCK_CASES = [
    ("no mask", 150, 150, {}),
    ("causal", 150, 150, {"causal": True}),
    ("offset, causal", 150, 170, {"query_offset": 20, "causal": True}),
    ("t2t offset", 130, 150, {"query_offset": 20}),
    ("full mask, empty row", 150, 150, {"mask": random_mask(1, 1, 150, 150, 3, 70)[0, 0]}),
    ("padding mask", 150, 150, {"mask": padding([120], 150)}),
]


@pytest.fixture
def small_blocks(monkeypatch):
    """64-row blocks, so about 150 queries run in three blocks."""
    monkeypatch.setattr(banded_module, "BLOCK_ELEMENTS", 1)
    assert block_rows(150, 150, 1) == 64


@pytest.mark.parametrize(
    ("n_q", "n_k", "options"), [c[1:] for c in BLOCK_CASES], ids=[c[0] for c in BLOCK_CASES]
)
def test_gradcheck_over_several_blocks(small_blocks, n_q, n_k, options):
    inputs = make_inputs(1, 1, n_q, n_k, 2, 2, 3, seed=n_q + n_k)
    assert gradcheck(banded(**options), inputs, eps=1e-6, atol=1e-6, rtol=1e-4, fast_mode=True)


@pytest.mark.parametrize(
    ("n_q", "n_k", "options"), [c[1:] for c in BLOCK_CASES], ids=[c[0] for c in BLOCK_CASES]
)
def test_block_gradients_equal_autograd_through_bucket(small_blocks, n_q, n_k, options):
    inputs = make_inputs(1, 2, n_q, n_k, 4, 3, 5, seed=n_q * n_k)
    out, grads = loss_grads("banded", inputs, options)
    assert is_fused(out)
    want_out, want = loss_grads("bucket", inputs, options)
    torch.testing.assert_close(out, want_out)
    for name, got, expected in zip(("q", "k", "v", "table_k", "table_v"), grads, want, strict=True):
        torch.testing.assert_close(got, expected, msg=f"d/d{name}")


# --- dropout ---


def dropped(p, seed, **options):
    """The fused call with dropout from a generator seeded inside: a deterministic function."""

    def run(*tensors):
        gen = torch.Generator().manual_seed(seed)
        return relative_attention(*tensors, **options, method="banded", dropout_p=p, generator=gen)

    return run


@pytest.mark.parametrize(
    "options", [{}, {"causal": True}, {"mask": padding([6, 4], 6), "query_offset": 1}]
)
def test_gradcheck_with_dropout(options):
    inputs = make_inputs(2, 2, 5, 6, 3, 2, 2, seed=7)
    assert is_fused(dropped(0.3, 11, **options)(*inputs))
    assert gradcheck(dropped(0.3, 11, **options), inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


def test_gradcheck_with_dropout_over_several_blocks(small_blocks):
    inputs = make_inputs(1, 1, 150, 150, 2, 2, 3, seed=8)
    run = dropped(0.2, 12, causal=True)
    assert gradcheck(run, inputs, eps=1e-6, atol=1e-6, rtol=1e-4, fast_mode=True)


@pytest.mark.parametrize("method", ["banded", "bucket"])
def test_dropout_output_is_the_same_with_and_without_gradients(method):
    inputs = make_inputs(2, 2, 9, 9, 4, 3, 2, seed=9)
    options = {"causal": True, "dropout_p": 0.4, "method": method}
    with torch.no_grad():
        plain = relative_attention(*inputs, **options, generator=torch.Generator().manual_seed(3))
    with_grad = relative_attention(*inputs, **options, generator=torch.Generator().manual_seed(3))
    assert with_grad.requires_grad
    torch.testing.assert_close(with_grad.detach(), plain)
    other = relative_attention(*inputs, **options, generator=torch.Generator().manual_seed(4))
    assert not torch.allclose(other.detach(), plain)


@pytest.mark.parametrize("method", ["banded", "bucket"])
@pytest.mark.parametrize("grad", [False, True])
def test_dropout_zeroes_whole_weights_and_rescales_the_rest(method, grad):
    """With v = identity (d_v = n_k) and a zero w^V, z_i is row i of the weights actually used:
    each is either 0 or alpha_ij / (1 - p), about a fraction p of them 0."""
    b, h, n, p = 2, 2, 64, 0.25
    q, k, _, tk, _ = make_inputs(b, h, n, n, 4, 1, 3, seed=10, grad=False)
    v = torch.eye(n, dtype=F64).expand(b, h, n, n).clone()
    tv = torch.zeros(7, n, dtype=F64)
    _, weights = relative_attention(q, k, v, tk, tv, return_weights=True)
    q.requires_grad_(grad)
    gen = torch.Generator().manual_seed(5)
    out = relative_attention(q, k, v, tk, tv, method=method, dropout_p=p, generator=gen).detach()
    kept = out != 0
    torch.testing.assert_close(out[kept], weights[kept] / (1 - p))
    assert 0.2 < 1 - kept.double().mean().item() < 0.3
    gen = torch.Generator().manual_seed(5)
    if not grad:  # the weights returned are the ones the output used
        out2, used = relative_attention(
            q, k, v, tk, tv, method=method, dropout_p=p, generator=gen, return_weights=True
        )
        torch.testing.assert_close(used, out)
        torch.testing.assert_close(out2, out)


def test_dropout_is_unbiased_over_many_seeds():
    """E[z] over the keep-masks is the output without dropout (keep / (1 - p) has mean 1)."""
    inputs = make_inputs(1, 2, 8, 8, 4, 3, 2, seed=11, grad=False)
    exact = relative_attention(*inputs, causal=True)
    runs = 300
    samples = torch.stack(
        [
            relative_attention(
                *inputs, causal=True, dropout_p=0.2, generator=torch.Generator().manual_seed(s)
            )
            for s in range(runs)
        ]
    )
    mean, sem = samples.mean(0), samples.std(0) / runs**0.5
    assert (samples.std(0)[..., 1:, :] > 0).all()  # from the second query on, outputs vary
    assert ((mean - exact).abs() <= 5 * sem + 1e-12).all()


# --- memory kept for the backward ---


def test_fused_path_keeps_no_n_q_by_n_k_tensor_for_backward():
    """n_q, n_k >> d: nothing saved for the backward (by any node of the graph) has n_q * n_k
    elements per (b, h); the unfused bucket path, for contrast, does save such tensors."""
    b, h, n, d = 1, 2, 512, 8
    square = b * h * n * n

    def saved_sizes(method, **options):
        sizes = []

        def pack(t):
            sizes.append(t.numel())
            return t

        inputs = make_inputs(b, h, n, n, d, d, 4, seed=12)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = relative_attention(*inputs, **options, method=method)
        return out, sizes

    query_mask = torch.ones(n, 1, dtype=torch.bool)
    query_mask[3] = False  # (n_q, 1): one query attends to nothing
    for options in ({}, {"causal": True}, {"mask": query_mask, "query_offset": 5}):
        out, sizes = saved_sizes("banded", **options)
        assert is_fused(out)
        assert sizes and max(sizes) <= b * h * n * d < square
        kept = [t for t in out.grad_fn.saved_tensors if t is not None]
        assert kept and all(t.numel() <= b * h * n * d for t in kept)
    _, sizes = saved_sizes("bucket")
    assert max(sizes) >= square


def test_fused_backward_never_builds_an_n_q_by_n_k_tensor():
    """Forward and backward together allocate at most a block of rows at a time."""
    from torch.utils._python_dispatch import TorchDispatchMode

    b, h, n, d = 1, 2, 600, 8
    largest = 0

    class Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            nonlocal largest
            result = func(*args, **(kwargs or {}))
            for t in result if isinstance(result, (tuple, list)) else (result,):
                if isinstance(t, torch.Tensor):
                    largest = max(largest, t.numel())
            return result

    inputs = make_inputs(b, h, n, n, d, d, 4, seed=13)
    with Watch():
        out = relative_attention(*inputs, causal=True, method="banded")
        out.square().sum().backward()
    rows = block_rows(n, n, b * h)
    assert rows < n
    assert 0 < largest <= b * h * rows * n < b * h * n * n
    assert all(t.grad is not None for t in inputs)
