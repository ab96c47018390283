"""Shaw's clipped relative attention as three regions joined in one softmax.

With a table clipped at k, every key more than k before query i reads w_-k and every key more
than k after it reads w_+k. Off the band |j - i| <= k the relative logit is one constant per
row and region:

    left   j <= i - k - 1:  e_ij = q_i·k_j/√d + c^L_i,      c^L_i = q_i·w^K_-k/√d
    band   |j - i| <= k:    e_ij = (q_i·k_j + q_i·w^K_(j-i))/√d
    right  j >= i + k + 1:  e_ij = q_i·k_j/√d + c^R_i,      c^R_i = q_i·w^K_+k/√d

so each far region is plain attention on a shifted triangle: the left one is causal attention
of queries k+1.. on keys ..n-k-2, the right one the same on the reversed sequences. The CPU
flash kernel computes each with its output o^X and its rows' log-sum-exp λ^X. A far region
then acts as one more key of row i, with logit λ^X_i + c^X_i and value o^X_i + w^V_±k: one
softmax over the 2k + 1 band cells and the (one or two) far columns gives every weight,

    P_i = softmax(e_i,i-k .. e_i,i+k, λ^L_i + c^L_i, λ^R_i + c^R_i)
    z_i = Σ_r P_ir (v_(i+r) + w^V_r) + P_iL (o^L_i + w^V_-k) + P_iR (o^R_i + w^V_+k)

The band is O(n k d): every (b, h) sequence laid end to end, cut into blocks of R rows that
read their own rows' keys and the k before them (and after them, two-sided), one batched
matmul over a strided view, then a strided view of its diagonals.

The backward is FlashAttention's, D_i = g_i·z_i, with P kept from the forward (n (2k + 3)
numbers, against n² for the full weights): on the band dS_ir = P_ir (g_i·(v_(i+r) + w^V_r) - D_i);
a far column's dS is the gradient of its constant c^X_i; the far regions' own gradients come
from the flash kernel's backward, handed z less the region's value row w^V_±k (so its D is the
true one less g_i·w^V_±k, which that row adds to every dP_ij of the region) and the row's
log-sum-exp less c^X (so the weights it rebuilds are the true ones).

Self-attention only (n_q = n_k, no offset), without a mask or dropout, on the CPU:
``banded_attention`` runs this where it applies and its blocked loop elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator

import torch
import torch.nn.functional as F

from relpos_core.lookup import clip_distance_from_table

_flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
_flash_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward

BLOCK_ROWS = 16  # rows per band block (at least k): small blocks, little work off the band
# Without a causal mask both far regions are triangles, and the flash kernel skips masked work
# only in blocks of 512 keys: two triangles cost about 1.5 full products at n = 1024, where the
# split and the blocked loop take the same time (2 cores, float32, h 8, d 64, k 16); from there
# on the split is faster (1.7x SDPA against 1.9x at n = 1536) and runs far fewer ops.
TWO_SIDED_MIN_N = 1024


def regions_apply(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    dropout_p: float,
) -> bool:
    """Whether ``region_attention`` computes this call: self-attention on the CPU in float32 or
    float64, one head size for q, k and v, no mask, no dropout, a far region to hand to the flash
    kernel (k + 1 < n), and causal or at least TWO_SIDED_MIN_N long.

    >>> q = torch.zeros(1, 2, 8, 4)
    >>> table = torch.zeros(5, 4)  # k = 2
    >>> regions_apply(q, q, q, table, None, True, 0, 0.0)
    True
    >>> regions_apply(q, q, q, table, None, True, 0, 0.1)  # dropout: the blocked loop
    False
    >>> regions_apply(q, q, q, table, None, False, 0, 0.0)  # two-sided, short: the same
    False
    """
    n = q.shape[-2]
    return (
        allowed is None
        and query_offset == 0
        and dropout_p == 0
        and k.shape[-2] == n
        and v.shape[-1] == q.shape[-1]  # the flash kernel's one head size
        and q.device.type == "cpu"
        and q.dtype in (torch.float32, torch.float64)
        and clip_distance_from_table(table_k) + 1 < n
        and (causal or n >= TWO_SIDED_MIN_N)
        and not torch.compiler.is_compiling()
    )


def region_bytes(
    b: int, h: int, n: int, d: int, d_v: int, k: int, itemsize: int, grad: bool
) -> int:
    """An upper bound of the peak of ``region_attention`` (and its backward with ``grad``),
    measured at n = 48 to 8192, k = 4 to 200 and checked by tests/test_memory_bound.py: the blocks'
    (rows, rows + 2k) products, a few (b·h·n, 2k + 3) band tensors (the logits, P, in the
    backward dP and dS), and copies of the (b·h·n, d) vectors: the keys' and values' zero-edged
    copies, slices and flips for the far regions and their outputs, and in the backward the
    gradients and the flash kernel's own accumulators."""
    rows = max(BLOCK_ROWS, k)
    n_pad = (-(-b * h * n // rows) + 1) * rows + 2 * k
    window = n_pad * (rows + 2 * k) * itemsize
    band = n_pad * (2 * k + 3) * itemsize
    vector = n_pad * max(d, d_v) * itemsize
    row = n_pad * 8
    if grad:
        return 2 * window + 5 * band + 28 * vector + 6 * row
    return window + 3 * band + 8 * vector + 4 * row


def region_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    causal: bool,
) -> torch.Tensor:
    """z (b, h, n, d_v) of Shaw's attention with tables clipped at k (see the module docstring)."""
    return _RegionAttention.apply(q, k, v, table_k, table_v, causal)


class _Band:
    """The band of every (b, h) sequence laid end to end: N = b·h·n rows in blocks of R.

    Block t's rows [tR, (t + 1)R) reach the key rows [tR - k, (t + 1)R + k) of the same layout
    (causal: to (t + 1)R), a strided view of one zero-edged copy. A
    cell whose key lies outside the row's own sequence (another head's, or past an edge) is
    masked by ``bias``; its key is finite, so its weight is exactly zero.
    """

    def __init__(self, b: int, h: int, n: int, kk: int, causal: bool, like: torch.Tensor):
        self.b, self.h, self.n, self.kk = b, h, n, kk
        self.rows = max(BLOCK_ROWS, kk)
        self.total = b * h * n
        self.blocks = -(-self.total // self.rows)
        self.cols = kk + 1 if causal else 2 * kk + 1  # diagonals r = -k .. 0 (or k)
        self.width = self.rows + self.cols - 1  # keys a block reads
        self.far = 1 if causal else 2  # far columns: left (and right)
        self.bias = _edge_bias(n, kk, causal, like.dtype, like.device)

    def flat(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h, n, e) -> (blocks, rows, e), zero rows past the end."""
        e, padded = x.shape[-1], self.blocks * self.rows
        if padded == self.total:
            return x.reshape(self.blocks, self.rows, e)  # a view when x is contiguous
        return F.pad(x.reshape(self.total, e), (0, 0, 0, padded - self.total)).view(
            self.blocks, self.rows, e
        )

    def keyed(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h, n, e) -> (blocks, width, e): each block's keys, a view of one padded copy."""
        e, kk = x.shape[-1], self.kk
        buf = x.new_empty(self.blocks * self.rows + self.cols - 1, e)
        buf[:kk].zero_()
        buf[kk + self.total :].zero_()
        buf[kk : kk + self.total].view(self.b, self.h, self.n, e).copy_(x)
        return buf.as_strided((self.blocks, self.width, e), (self.rows * e, e, 1))

    def diagonals(self, full: torch.Tensor) -> torch.Tensor:
        """(blocks, rows, width) contiguous -> the view [t, i, r + k] = [t, i, i + r + k]."""
        s = full.stride()
        shape, strides = (self.blocks, self.rows, self.cols), (s[0], s[1] + 1, 1)
        return full.as_strided(shape, strides, full.storage_offset())

    def spill(self, wins: torch.Tensor) -> torch.Tensor:
        """Each block's (width, e) key rows summed back onto the keys: (b, h, n, e)."""
        e, rows = wins.shape[-1], self.rows
        pieces = -(-self.width // rows)
        out = wins.new_zeros(self.blocks + pieces, rows, e)
        for u in range(pieces):  # block t's key rows u·R.. are row block t + u of the copy
            part = wins[:, u * rows : (u + 1) * rows]
            out[u : u + self.blocks, : part.shape[1]] += part
        return out.view(-1, e)[self.kk : self.kk + self.total].view(self.b, self.h, self.n, e)

    def rows_of(self, x: torch.Tensor) -> torch.Tensor:
        """(blocks, rows, e) -> (b, h, n, e) view of the real rows."""
        e = x.shape[-1]
        return x.view(-1, e)[: self.total].view(self.b, self.h, self.n, e)

    def columns(self, table: torch.Tensor) -> torch.Tensor:
        """The table row each column reads: w_-k .. w_(cols-k-1), then w_-k (and w_+k)."""
        ends = [table[:1], table[-1:]][: self.far]
        return torch.cat([table[: self.cols], *ends])


@functools.lru_cache(maxsize=16)
def _edge_bias(n: int, kk: int, causal: bool, dtype, device) -> torch.Tensor:
    """(n, cols): -inf where row i's diagonal r reaches outside 0..n-1, else 0 (read only)."""
    i = torch.arange(n, device=device)[:, None]
    r = torch.arange(-kk, (1 if causal else kk + 1), device=device)
    outside = (i + r < 0) | (i + r >= n)
    return torch.zeros(n, r.numel(), dtype=dtype, device=device).masked_fill_(
        outside, float("-inf")
    )


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run the band's ops on one thread, the flash kernel on all of torch's.

    The forward's band is a dozen small ops. On a CPU that other processes also use, each
    parallel op waits for its slowest thread, and a thread the scheduler has set aside costs a
    time slice: with a process spinning on each of 2 cores, the causal forward at n = 1024 took
    125 ms on two threads and 38 ms with the band on one (SDPA: 24 ms); on a quiet machine one
    thread costs the call 5-10%. (The backward's band is larger and keeps torch's threads: one
    thread cost it 15% quiet and gained nothing busy at n = 1024.) torch's thread count belongs
    to the calling thread, so no other thread sees the change.
    """
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _unit_last(x: torch.Tensor) -> torch.Tensor:
    """x with unit stride along its last dimension, which the CPU flash kernel assumes (it reads
    a transposed, expanded or step-sliced head as if it were contiguous there)."""
    return x if x.stride(-1) == 1 else x.contiguous()


def _far(q, k, v, kk: int, scale: float, right: bool):
    """The left (or right) region's flash attention: (o, λ) for queries k+1.. (or ..n-k-2)."""
    m = q.shape[-2] - kk - 1
    if not right:
        args = (_unit_last(x) for x in (q[:, :, kk + 1 :], k[:, :, :m], v[:, :, :m]))
        return _flash(*args, 0.0, True, scale=scale)
    with _one_thread():  # copies: beside busy processes, three took 23 ms on two threads, 2 on one
        args = [
            _unit_last(x[:, :, s].flip(2))
            for x, s in ((q, slice(m)), (k, slice(kk + 1, None)), (v, slice(kk + 1, None)))
        ]
    o, lam = _flash(*args, 0.0, True, scale=scale)
    with _one_thread():
        return o.flip(2), lam.flip(2)


def _far_rows(kk: int, n: int, right: bool) -> slice:
    """The rows with a far region on the left (from k + 1) or on the right (to n - k - 2)."""
    return slice(0, max(n - kk - 1, 0)) if right else slice(kk + 1, None)


class _RegionAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, table_k, table_v, causal):
        b, h, n, d = q.shape
        kk = clip_distance_from_table(table_k)
        scale = 1.0 / math.sqrt(d)
        band = _Band(b, h, n, kk, causal, q)
        cols = band.cols
        m = max(n - kk - 1, 0)  # rows with a far region on each side
        outs = [_far(q, k, v, kk, scale, right) for right in (False, True)[: band.far] if m]
        with _one_thread():  # the band's small ops (see _one_thread)
            qf = band.flat(q)
            full = torch.baddbmm(
                qf.new_empty(()), qf, band.keyed(k).transpose(1, 2), beta=0, alpha=scale
            )  # (blocks, rows, width): q_i · k_j / √d
            s = qf @ (band.columns(table_k) * scale).T  # q_i · w_r / √d; c^L (and c^R) at the end
            s[..., :cols] += band.diagonals(full)
            e = band.rows_of(s)  # (b, h, n, cols + far)
            e[..., :cols] += band.bias
            for t in range(band.far):
                column, rows = e[..., cols + t], _far_rows(kk, n, t == 1)
                column[:, :, slice(m, None) if t else slice(0, n - m)] = float("-inf")  # none
                if m:
                    column[:, :, rows] += outs[t][1]  # λ^X + c^X
            p = torch.softmax(s, -1)  # a padded row's cells are all finite: no NaN
            band.diagonals(full.zero_()).copy_(p[..., :cols])
            zf = torch.baddbmm(p @ band.columns(table_v), full, band.keyed(v))
            z, weights = band.rows_of(zf), band.rows_of(p)
            for t, (o, _) in enumerate(outs):
                rows = _far_rows(kk, n, t == 1)
                z[:, :, rows].addcmul_(weights[:, :, rows, cols + t, None], o)
        ctx.causal = causal
        ctx.save_for_backward(q, k, v, table_k, table_v, zf, p, *(t for out in outs for t in out))
        return z

    @staticmethod
    def backward(ctx, g):
        q, k, v, table_k, table_v, zf, p, *outs = ctx.saved_tensors
        b, h, n, d = q.shape
        kk, causal = clip_distance_from_table(table_k), ctx.causal
        scale = 1.0 / math.sqrt(d)
        band = _Band(b, h, n, kk, causal, q)
        cols = band.cols
        gf = band.flat(g)
        d_z = (gf * zf).sum(-1, keepdim=True)  # D_i = g_i · z_i (0 on padded rows)
        full = torch.bmm(gf, band.keyed(v).transpose(1, 2))  # g_i · v_j
        d_p = gf @ band.columns(table_v).T  # g_i · w^V_r; g_i · w^V_±k on the far columns
        d_p[..., :cols] += band.diagonals(full)
        gv = band.rows_of(d_p)
        for t in range(len(outs) // 2):
            o, rows = outs[2 * t], _far_rows(kk, n, t == 1)
            gv[:, :, rows, cols + t] += (g[:, :, rows] * o).sum(-1)  # g_i · o^X_i
        d_s = d_p.sub_(d_z).mul_(p)  # dS; on a far column, the gradient of its c^X
        spread = band.diagonals(full.zero_())
        spread.copy_(d_s[..., :cols])
        d_q = torch.baddbmm(d_s @ band.columns(table_k), full, band.keyed(k)).mul_(scale)
        qf = band.flat(q)
        d_k = band.spill(full.transpose(1, 2) @ qf).mul_(scale)
        d_table_k = _fold(d_s.flatten(0, 1).T @ qf.flatten(0, 1), band, table_k)
        spread.copy_(p[..., :cols])
        d_v = band.spill(full.transpose(1, 2) @ gf)
        d_table_v = _fold(p.flatten(0, 1).T @ gf.flatten(0, 1), band, table_v)
        d_q = band.rows_of(d_q)
        weights = band.rows_of(p)
        for t in range(len(outs) // 2):
            o, lam = outs[2 * t], outs[2 * t + 1]
            right = t == 1
            rows, keys = _far_rows(kk, n, right), _far_rows(kk, n, not right)
            with _one_thread():
                # Λ - c^X = λ^X - log P_iX: the flash kernel then rebuilds the true weights
                lse = lam - weights[:, :, rows, cols + t].log()
                args = [g[:, :, rows], q[:, :, rows], k[:, :, keys], v[:, :, keys]]
                args += [band.rows_of(zf)[:, :, rows] - table_v[-t], lse]
                if right:  # the right region ran on reversed sequences
                    args = [x.flip(2) for x in args]
                args = [_unit_last(x) for x in args]
            grads = _flash_backward(*args, 0.0, True, scale=scale)
            with _one_thread():
                if right:
                    grads = [x.flip(2) for x in grads]
                d_q[:, :, rows] += grads[0]
                d_k[:, :, keys] += grads[1]
                d_v[:, :, keys] += grads[2]
        return d_q, d_k, d_v, d_table_k.mul_(scale), d_table_v, None


def _fold(per_column: torch.Tensor, band: _Band, table: torch.Tensor) -> torch.Tensor:
    """(cols + far, e) gradients of the columns -> (2k + 1, e) of the table rows they read."""
    out = torch.zeros_like(table)
    out[: band.cols] = per_column[: band.cols]
    out[0] += per_column[band.cols]
    if band.far == 2:
        out[-1] += per_column[band.cols + 1]
    return out
