"""Shaw's clipped relative attention as three regions joined by their log-sum-exps.

With a table clipped at k, every key more than k before query i reads w_-k and every key more
than k after it reads w_+k. Off the band |j - i| <= k the relative logit is one constant per
row and region:

    left   j <= i - k - 1:  e_ij = q_i·k_j/√d + c^L_i,      c^L_i = q_i·w^K_-k/√d
    band   |j - i| <= k:    e_ij = (q_i·k_j + q_i·w^K_(j-i))/√d
    right  j >= i + k + 1:  e_ij = q_i·k_j/√d + c^R_i,      c^R_i = q_i·w^K_+k/√d

so each far region is plain attention on a shifted triangle: the left one is causal attention
of queries k+1.. on keys ..n-k-2, the right one the same on the reversed sequences. The CPU
flash kernel computes each with its rows' log-sum-exp λ; the band is
O(n k d): one batched matmul per block of rows and a strided view of its diagonals. With
Λ_i = log(exp λ^L_i + exp λ^B_i + exp λ^R_i), m^X_i = exp(λ^X_i - Λ_i) and
P_ir = exp(e_i,i+r - Λ_i) on the band:

    z_i = m^L_i (o^L_i + w^V_-k) + m^R_i (o^R_i + w^V_+k) + Σ_r P_ir (v_(i+r) + w^V_r)

The backward is FlashAttention's, D_i = g_i·z_i: the far regions go through the flash kernel's
own backward, handed z less the region's value row w^V_±k (so its D is the true one less
g_i·w^V_±k, which is what that row adds to every dP_ij of the region) and Λ less c^X (so the
weights it rebuilds are the true ones); each constant c^X_i then takes
dc^X_i = Σ_(j in X) dS_ij = g_i·z^X_i - D_i m^X_i, z^X_i the region's part of z_i.

Self-attention only (n_q = n_k, no offset), without a mask or dropout, on the CPU:
``banded_attention`` runs this where it applies and its blocked loop elsewhere.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from relpos_core.lookup import clip_distance_from_table

_flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
_flash_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward

BLOCK_ROWS = 64  # query rows per band block; at least 2k, so a window overlaps only the next
# Without a causal mask both far regions are triangles, and the flash kernel skips masked work
# only in blocks of 512 keys: two triangles cost about 1.6 full products at n = 1024 (the
# blocked loop is then faster) and about 1.2 at n = 4096 (2 cores, float32, h 8, d 64, k 16).
TWO_SIDED_MIN_N = 2048


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
    measured at n = 48 to 8192 (tests/test_memory_bound.py): the band's windows
    (b·h·n_pad·(rows + 2k)), a few (b·h·n_pad, 2k+1) band tensors, and copies of the
    (b·h·n, d) vectors: slices, flips and pads for the far regions, their outputs and parts,
    and in the backward the gradients and the flash kernel's own accumulators."""
    rows = max(BLOCK_ROWS, 2 * k)
    n_pad = -(-n // rows) * rows
    window = b * h * n_pad * (rows + 2 * k) * itemsize
    band = b * h * n_pad * (2 * k + 1) * itemsize
    vector = b * h * n_pad * max(d, d_v) * itemsize
    row = b * h * n_pad * 8
    if grad:
        return 2 * window + 6 * band + 28 * vector + 6 * row
    return window + 4 * band + 10 * vector + 6 * row


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
    """The band |j - i| <= k in blocks of ``rows`` query rows: block t's rows reach the keys
    [t·rows - k, (t + 1)·rows + k), a window of rows + 2k keys of the sequence padded by k."""

    def __init__(self, b: int, h: int, n: int, kk: int, causal: bool, like: torch.Tensor):
        self.b, self.h, self.n, self.kk = b, h, n, kk
        self.rows = max(BLOCK_ROWS, 2 * kk)
        self.blocks = -(-n // self.rows)
        self.n_pad = self.blocks * self.rows
        self.width = self.rows + 2 * kk
        i = torch.arange(self.n_pad, device=like.device)[:, None]
        r = torch.arange(-kk, kk + 1, device=like.device)
        outside = (i + r < 0) | (i + r >= n) | (i >= n)
        if causal:
            outside |= r > 0
        self.bias = like.new_zeros(self.n_pad, 2 * kk + 1).masked_fill_(outside, float("-inf"))

    def rows_of(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h, n, e) -> (b, h, blocks, rows, e), zero rows past n."""
        x = F.pad(x, (0, 0, 0, self.n_pad - self.n))
        return x.view(self.b, self.h, self.blocks, self.rows, x.shape[-1])

    def windows(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h, n, e) -> (b, h, blocks, e, width): each block's keys, a view of the padded x."""
        x = F.pad(x, (0, 0, self.kk, self.n_pad - self.n + self.kk))
        return x.unfold(2, self.width, self.rows)

    def diagonals(self, full: torch.Tensor) -> torch.Tensor:
        """Contiguous (b, h, blocks, rows, width) -> the view [.., t, r + k] = [.., t, t+r+k].

        (A strided view: row t starts one column further right than row t - 1.)
        """
        strides = full.stride()
        shape = (*full.shape[:-1], 2 * self.kk + 1)
        return full.as_strided(shape, (*strides[:-2], strides[-2] + 1, 1), full.storage_offset())

    def gather(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """[i, r + k] = a_i · x_(i+r), (b, h, n_pad, 2k+1); x is read as zero outside 0..n-1."""
        full = self.rows_of(a) @ self.windows(x)  # (b, h, blocks, rows, width)
        return self.diagonals(full).reshape(self.b, self.h, self.n_pad, -1)

    def spread(self, band: torch.Tensor) -> torch.Tensor:
        """(b, h, n_pad, 2k+1) -> (b, h, blocks, rows, width), zero off the band."""
        full = band.new_zeros(self.b, self.h, self.blocks, self.rows, self.width)
        self.diagonals(full).copy_(band.view(self.b, self.h, self.blocks, self.rows, -1))
        return full

    def apply(self, band: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """out_i = Σ_r band[i, r + k] x_(i+r), (b, h, n, e)."""
        out = self.spread(band) @ self.windows(x).transpose(-1, -2)
        return out.view(self.b, self.h, self.n_pad, -1)[:, :, : self.n]

    def apply_transposed(self, band: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """out_j = Σ_(i, r: i + r = j) band[i, r + k] x_i, (b, h, n, e)."""
        wins = self.spread(band).transpose(-1, -2) @ self.rows_of(x)  # (b,h,blocks,width,e)
        e = x.shape[-1]
        out = x.new_zeros(self.b, self.h, self.n_pad + self.rows, e)  # padded key positions
        own = out[:, :, : self.n_pad].view(self.b, self.h, self.blocks, self.rows, e)
        own += wins[..., : self.rows, :]  # block t's first rows keys: its own span
        if self.kk:  # its last 2k keys: the start of block t + 1's span
            spill = out[:, :, self.rows :].view(self.b, self.h, self.blocks, self.rows, e)
            spill[..., : 2 * self.kk, :] += wins[..., self.rows :, :]
        return out[:, :, self.kk : self.kk + self.n]


def _band_logits(band: _Band, q, k, table_k, scale: float) -> torch.Tensor:
    """e on the band, (b, h, n_pad, 2k+1), -inf outside the sequence (and ahead if causal)."""
    s = band.gather(q, k)
    s += band.rows_of(q).reshape(band.b, band.h, band.n_pad, -1) @ table_k.T
    return s.mul_(scale).add_(band.bias)


def _far(q, k, v, kk: int, scale: float, right: bool):
    """The left (or right) region's flash attention: (o, λ) for queries k+1.. (or ..n-k-2)."""
    m = q.shape[-2] - kk - 1
    if not right:
        return _flash(q[:, :, kk + 1 :], k[:, :, :m], v[:, :, :m], 0.0, True, scale=scale)
    o, lam = _flash(
        q[:, :, :m].flip(2), k[:, :, kk + 1 :].flip(2), v[:, :, kk + 1 :].flip(2), 0.0, True,
        scale=scale,
    )  # fmt: skip
    return o.flip(2), lam.flip(2)


class _RegionAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, table_k, table_v, causal):
        b, h, n, d = q.shape
        kk, m = clip_distance_from_table(table_k), n - clip_distance_from_table(table_k) - 1
        scale = 1.0 / math.sqrt(d)
        band = _Band(b, h, n, kk, causal, q)
        s = _band_logits(band, q, k, table_k, scale)
        edges = (q @ table_k[[0, -1]].T).mul_(scale)  # (b, h, n, 2): c^L, c^R
        far = {"left": (slice(kk + 1, None), 0)}
        if not causal:
            far["right"] = (slice(0, m), -1)
        lams = [s.logsumexp(-1)[:, :, :n]]
        outs = {}
        for side, (rows, edge) in far.items():
            o, lam = _far(q, k, v, kk, scale, side == "right")
            full = q.new_full((b, h, n), float("-inf"))
            full[:, :, rows] = lam + edges[:, :, rows, edge]
            lams.append(full)
            outs[side] = o
        lse = torch.stack(lams).logsumexp(0)  # Λ: every row has at least its own key
        p = s.sub_(F.pad(lse, (0, band.n_pad - n))[..., None]).exp_()  # band weights
        z = band.apply(p, v) + p[:, :, :n] @ table_v
        parts = []
        for t, (side, (rows, edge)) in enumerate(far.items()):
            mass = (lams[t + 1][:, :, rows] - lse[:, :, rows]).exp_()  # m^X
            part = (outs[side] + table_v[edge]).mul_(mass[..., None])  # z^X
            z[:, :, rows] += part
            parts += [mass, part]
        ctx.causal, ctx.kk = causal, kk
        ctx.save_for_backward(q, k, v, table_k, table_v, z, lse, edges, *parts)
        return z

    @staticmethod
    def backward(ctx, g):
        q, k, v, table_k, table_v, z, lse, edges, *parts = ctx.saved_tensors
        causal, kk = ctx.causal, ctx.kk
        b, h, n, d = q.shape
        m, scale = n - kk - 1, 1.0 / math.sqrt(d)
        g = g.contiguous()
        band = _Band(b, h, n, kk, causal, q)
        d_z = (g * z).sum(-1)  # D_i = g_i · z_i
        pad = (0, band.n_pad - n)
        p = _band_logits(band, q, k, table_k, scale).sub_(F.pad(lse, pad)[..., None]).exp_()
        d_p = band.gather(g, v)
        d_p += band.rows_of(g).reshape(b, h, band.n_pad, -1) @ table_v.T
        d_s = d_p.sub_(F.pad(d_z, pad)[..., None]).mul_(p)  # 0 off the band and past n
        d_q = (band.apply(d_s, k) + d_s[:, :, :n] @ table_k).mul_(scale)
        d_k = band.apply_transposed(d_s, q).mul_(scale)
        d_v = band.apply_transposed(p, g)
        d_table_k = torch.einsum("bhir,bhid->rd", d_s[:, :, :n], q).mul_(scale)
        d_table_v = torch.einsum("bhir,bhie->re", p[:, :, :n], g)
        far = [(slice(kk + 1, None), slice(0, m), 0)]
        if not causal:
            far.append((slice(0, m), slice(kk + 1, None), -1))
        for (rows, keys, edge), mass, part in zip(far, parts[0::2], parts[1::2], strict=True):
            args = [t[:, :, rows] for t in (g, q)] + [t[:, :, keys] for t in (k, v)]
            args.append((z - table_v[edge])[:, :, rows])
            args.append((lse - edges[..., edge])[:, :, rows].contiguous())
            if edge == -1:  # the right region ran on reversed sequences
                args = [t.flip(2) for t in args]
            grads = _flash_backward(*args, 0.0, True, scale=scale)  # strided inputs are read
            if edge == -1:
                grads = [t.flip(2) for t in grads]
            d_q[:, :, rows] += grads[0]
            d_k[:, :, keys] += grads[1]
            d_v[:, :, keys] += grads[2]
            d_c = (g[:, :, rows] * part).sum(-1) - d_z[:, :, rows] * mass  # dc^X
            d_q[:, :, rows] += d_c[..., None] * (scale * table_k[edge])
            d_table_k[edge] += torch.einsum("bhi,bhid->d", d_c, q[:, :, rows]).mul_(scale)
            d_table_v[edge] += torch.einsum("bhi,bhie->e", mass, g[:, :, rows])
        return d_q, d_k, d_v, d_table_k, d_table_v, None
