"""Every method at the edges of its blocks and of the clip: the definition, forward and backward.

The fast methods cut the rows into pieces (``banded.STRIP_ROWS`` rows to a strip, up to 256
rows to a block, ``regions.BLOCK_ROWS`` rows to a band block) and treat the clip specially where
the band is empty (k = 0: both far parts hold the diagonal) or wider than the sequence (k >= n).
A slip at a piece's last row shows only at lengths one past an edge (k = 0 at n = 33 counted
the last diagonal cell twice), so this sweeps every length around every edge from 1 to 640,
at k = 0, 1, n - 1, n and n + 1, and compares each method with Shaw's equations written out
by a gather of the clipped table: logits, values and attention on every path ``relative_attention``
takes (fused, region split, masked, traced, with a query offset; causal and two-sided), and the
gradients of every input.
"""

from __future__ import annotations

import math

import pytest
import torch

import relpos_core as rc
from relpos_core.methods.banded import STRIP_ROWS
from relpos_core.methods.regions import BLOCK_ROWS, TWO_SIDED_MIN_N

F64 = torch.float64


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread: thousands of small calls, each a parallel region, are faster and
    steadier without a second thread to wait for; the numbers do not depend on it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# every length next to a multiple of the smallest piece (16 rows), to past the 256-row block
EDGES = sorted(
    set(range(1, 6))
    | {e + s for e in range(BLOCK_ROWS, 129, BLOCK_ROWS) for s in (-1, 0, 1)}
    | {e + s for e in range(STRIP_ROWS, 641, STRIP_ROWS) for s in (-1, 0, 1)}
)
assert 256 % STRIP_ROWS == 0  # the strips' edges include the blocks' (256 rows at most)


def clips(n: int) -> list[int]:
    """k = 0 (no band), 1, and the band past the sequence (n); as wide as it (n - 1) too while
    the sequence is a few strips long (past that the two clips take the same route)."""
    return sorted({0, 1, n} | ({n - 1} if 0 < n <= 4 * STRIP_ROWS else set()))


def clipped_pairs(n_q: int, n_k: int, k: int, offset: int) -> torch.Tensor:
    """Eq. 3-4's index clip(j - i, k) + k, written out: int64 (n_q, n_k), queries at offset.."""
    i = torch.arange(n_q)[:, None] + offset
    j = torch.arange(n_k)[None, :]
    return (j - i).clamp(-k, k) + k


def definition(q, key, v, table_k, table_v, allowed, offset):
    """Shaw et al.'s eqs. 2-4 with a^K_ij, a^V_ij gathered: z (b, h, n_q, d_v), differentiable."""
    index = clipped_pairs(q.shape[-2], key.shape[-2], (table_k.shape[0] - 1) // 2, offset)
    a_k, a_v = table_k[index], table_v[index]  # (i, j, d)
    e = (q @ key.transpose(-2, -1) + torch.einsum("bhid,ijd->bhij", q, a_k)) / math.sqrt(
        q.shape[-1]
    )
    e = e.masked_fill(~allowed, float("-inf"))
    alpha = torch.softmax(e, -1).nan_to_num(0.0)  # a row with nothing allowed: zero weights
    return alpha @ v + torch.einsum("bhij,ijd->bhid", alpha, a_v), alpha


def inputs(n_q: int, n_k: int, k: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(1, 2, n_q, 3), (1, 2, n_k, 3), (1, 2, n_k, 3), (2 * k + 1, 3), (2 * k + 1, 3)]
    return [torch.randn(s, generator=gen, dtype=F64, requires_grad=True) for s in shapes]


def allowed_of(n_q: int, n_k: int, offset: int, causal: bool) -> torch.Tensor:
    """Bool (n_q, n_k): every key, or with ``causal`` the keys j <= the query's position."""
    if not causal:
        return torch.ones(n_q, n_k, dtype=torch.bool)
    return torch.arange(n_k)[None, :] <= torch.arange(n_q)[:, None] + offset


def gradients(out: torch.Tensor, tensors, seed: int) -> list[torch.Tensor]:
    """d(sum(out * g))/d each input, for a fixed random g."""
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
    return torch.autograd.grad((out * g).sum(), tensors)


CLOSE = {"rtol": 1e-9, "atol": 1e-10}
FAST = [m for m in rc.METHOD_NAMES if m != "loop"]  # the loop is the definition, one cell a time


@pytest.mark.parametrize("n", EDGES)
def test_key_and_value_terms_at_every_block_edge(n):
    for k in clips(n):
        q, _, _, table, _ = inputs(n, n, k, seed=n + 7 * k)
        weights = torch.rand(1, 2, n, n, generator=torch.Generator().manual_seed(k), dtype=F64)
        a = table[clipped_pairs(n, n, k, 0)]  # (i, j, d)
        want_logits = torch.einsum("bhid,ijd->bhij", q, a)
        want_values = torch.einsum("bhij,ijd->bhid", weights, a)
        methods = FAST if n > 24 else rc.METHOD_NAMES
        for method in methods:
            where = f"{method}, n = {n}, k = {k}"
            got = rc.relative_logits(q, table, method=method)
            torch.testing.assert_close(got, want_logits, **CLOSE, msg=where)
            got = rc.relative_values(weights, table, method=method)
            torch.testing.assert_close(got, want_values, **CLOSE, msg=where)


def routes(n: int):
    """(n_q, offset, [(label, mask, extra options)]): the routes through relative_attention that
    share one definition. Without a mask the banded method runs its fused loop (two-sided) or
    the region split (causal); a mask, even one True, takes the masked loop; a trace, the key
    and value terms one at a time; an offset, the loop with queries placed among the keys."""
    yield n, 0, [("no mask", None, {}), ("mask of one True", torch.tensor(True), {}),
                 ("traced", None, {"trace": True})]  # fmt: skip
    if n > 1:
        yield n - n // 2, n // 2, [("query offset", None, {})]


@pytest.mark.parametrize("n", EDGES)
def test_attention_and_its_gradients_at_every_block_edge(n):
    """The banded method (what "auto" runs) on each of its routes, every k, both directions."""
    for k in clips(n):
        for causal in (False, True):
            for n_q, offset, calls in routes(n):
                tensors = inputs(n_q, n, k, seed=3 * n + k)
                want, alpha = definition(*tensors, allowed_of(n_q, n, offset, causal), offset)
                want_grads = gradients(want, tensors, n)
                for label, mask, extra in calls:
                    options = {"causal": causal, "query_offset": offset, "mask": mask, **extra}
                    where = f"{label}, n = {n}, k = {k}, causal = {causal}"
                    got = rc.relative_attention(*tensors, method="banded", **options)
                    if extra.get("trace"):
                        torch.testing.assert_close(got.weights, alpha, **CLOSE, msg=where)
                        got = got.output
                    torch.testing.assert_close(got, want, **CLOSE, msg=where)
                    for name, mine, theirs in zip(
                        "q k v table_k table_v".split(),
                        gradients(got, tensors, n),
                        want_grads,
                        strict=True,
                    ):
                        torch.testing.assert_close(mine, theirs, **CLOSE, msg=f"d{name}: {where}")


@pytest.mark.parametrize("n", [n for n in EDGES if n <= 66] + EDGES[-2:])
@pytest.mark.parametrize("method", ["einsum", "matmul", "skew", "bucket"])
def test_every_other_method_attends_by_the_definition(n, method):
    """Forward and gradients of the unfused methods, which cut nothing into blocks: the short
    lengths, every clip, and the longest."""
    for k in clips(n):
        tensors = inputs(n, n, k, seed=5 * n + k)
        for causal in (False, True):
            want, _ = definition(*tensors, allowed_of(n, n, 0, causal), 0)
            got = rc.relative_attention(*tensors, method=method, causal=causal)
            where = f"{method}, n = {n}, k = {k}, causal = {causal}"
            torch.testing.assert_close(got, want, **CLOSE, msg=where)
            for mine, theirs in zip(
                gradients(got, tensors, k), gradients(want, tensors, k), strict=True
            ):
                torch.testing.assert_close(mine, theirs, **CLOSE, msg=where)


@pytest.mark.parametrize("n", [TWO_SIDED_MIN_N - 1, TWO_SIDED_MIN_N, TWO_SIDED_MIN_N + 1])
def test_the_two_sided_region_split_at_its_threshold(n):
    """Two-sided attention splits into regions from TWO_SIDED_MIN_N on: k = 0 and 1 there."""
    for k in (0, 1):
        tensors = [t.detach()[:, :1].requires_grad_() if t.dim() == 4 else t for t in
                   inputs(n, n, k, seed=n + k)]  # fmt: skip
        want, _ = definition(*tensors, allowed_of(n, n, 0, False), 0)
        got = rc.relative_attention(*tensors)
        where = f"n = {n}, k = {k}"
        torch.testing.assert_close(got, want, **CLOSE, msg=where)
        for mine, theirs in zip(
            gradients(got, tensors, k), gradients(want, tensors, k), strict=True
        ):
            torch.testing.assert_close(mine, theirs, **CLOSE, msg=where)
