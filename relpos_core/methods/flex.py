"""Relative attention for a GPU: FlexAttention off the band, the band in one batched pass.

With clipping (Shaw et al. 2018) the key term is one constant per row off a band of width
2k - 1 (see ``banded``). Split the keys of query i (at position p_i = offset + i, r = j - p_i):

    left    r <= -k        e_ij = q_i · k_j / sqrt(d) + c^L_i,   c^L_i = q_i · w^K_-k / sqrt(d)
    band    -k < r < k     e_ij = (q_i · k_j + q_i · w^K_r) / sqrt(d)
    right   r >= max(k, 1) e_ij = q_i · k_j / sqrt(d) + c^R_i,   c^R_i = q_i · w^K_+k / sqrt(d)

Softmax is blind to a constant per row, so each edge region is plain attention under a mask:
FlexAttention with a block mask (one fused kernel, forward and backward, skipping the blocks
the region does not touch) gives its normalized output O^X_i and log-sum-exp L^X_i; the
constant only moves the log-sum-exp: L^X_i + c^X_i. The band is small: for blocks of B query
rows, the B + 2k - 2 keys their band crosses are gathered as one strided window per block, and
one batched matmul gives every band score. Then, with L_i = log sum_X exp(L^X_i) and
a^X_i = exp(L^X_i - L_i), the weight each region holds,

    z_i = sum_X a^X_i O^X_i  +  a^L_i w^V_-k + a^R_i w^V_+k + sum_{|r|<k} P_{i,p_i+r} w^V_r

where the edge buckets' mass is exactly a^L and a^R, and the middle buckets are the 2k - 1 band
weights P = exp(e - L). Exact; nothing of size (n_q, n_k) is stored; every step is one batched
op whatever n, so the kernels launched per call do not grow with n (FlexAttention twice, the
band and the combination a fixed number more). Autograd differentiates it all (FlexAttention's
backward takes the gradient of its log-sum-exp too). No dropout: the caller runs the blocked
path for that.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from relpos_core.precision import compute_dtype

#: Query rows per band block: the band window of a block is BAND_ROWS + 2k - 2 keys wide.
BAND_ROWS = 64

RegionAttention = Callable[..., tuple[torch.Tensor, torch.Tensor]]

#: Block masks kept for reuse (per shape, region and device): building one is as costly as the
#: attention it steers, and a model calls the same few shapes again and again.
BLOCK_MASKS_KEPT = 32


@dataclass(frozen=True)
class Region:
    """The cells a far region covers: lo <= r <= hi with r = j - (i + offset) (None: unbounded),
    r <= 0 if causal, and where ``allowed`` (a bool (b, h, n_q, n_k) view, or None) is True."""

    lo: int | None
    hi: int | None
    causal: bool
    offset: int
    allowed: torch.Tensor | None = None

    def mask_mod(self, device: torch.device) -> Callable[..., torch.Tensor]:
        """FlexAttention's mask_mod(b, h, i, j) -> bool.

        The bounds travel as one captured tensor, not as Python numbers: compiled FlexAttention
        takes a captured tensor as an input and guards a captured number as a constant, so with
        numbers every region, clip distance and offset would compile a kernel of its own, and
        past torch's recompile limit (8) FlexAttention falls back to its eager form, which
        materializes every score.
        """
        far = 2**30  # past any distance, and inside the int32 index arithmetic of the kernels
        lo, hi = (-far if self.lo is None else self.lo), (far if self.hi is None else self.hi)
        values = (lo, hi, self.offset, int(self.causal))
        # inside a caller's compiled graph the numbers are the graph's constants, as the rest of
        # its shapes are (a captured tensor indexed under create_block_mask's vmap warns there)
        bounds = values if torch.compiler.is_compiling() else torch.tensor(values, device=device)
        allowed = self.allowed

        def mask_mod(b, h, i, j):
            r = j - (i + bounds[2])
            ok = (r >= bounds[0]) & (r <= bounds[1]) & ((r <= 0) | (bounds[3] == 0))
            if allowed is not None:
                ok = ok & allowed[b, h, i, j]
            return ok

        return mask_mod


def flex_available(device: torch.device) -> bool:
    """FlexAttention compiles a fused kernel with a backward only on CUDA (torch 2.13)."""
    return device.type == "cuda"


@functools.cache
def compiled_flex_attention() -> Callable[..., object]:
    """torch's ``flex_attention`` under ``torch.compile``: the fused kernel, with its backward,
    that ``flex_region`` runs on CUDA. One compiled function per process (cached), so every
    caller shares its compilations; call it with ``flex_attention``'s arguments
    (``q, k, v, score_mod=..., block_mask=..., scale=..., return_aux=...``).

    Compiling is lazy: the first call compiles for its shapes, a call with new shapes once more
    with the lengths symbolic (torch's automatic dynamic shapes), so a model that sees many
    lengths stays under torch's recompile limit. Meant for CUDA; on a CPU (torch 2.13) the
    compiled kernel returns no log-sum-exp and has no backward.
    """
    from torch.nn.attention.flex_attention import flex_attention

    return torch.compile(flex_attention)


_block_masks: OrderedDict[tuple, object] = OrderedDict()


def block_mask(region: Region, b: int, h: int, n_q: int, n_k: int, device: torch.device):
    """FlexAttention's BlockMask of ``region``: for a batch and heads of 1 unless ``allowed``
    differs along them; reused while kept (``BLOCK_MASKS_KEPT``) when ``allowed`` is None."""
    from torch.nn.attention.flex_attention import create_block_mask

    allowed = region.allowed
    if allowed is not None or torch.compiler.is_compiling():  # a compiled caller: in its graph
        bb = b if allowed is not None and allowed.stride(0) else 1  # stride 0: broadcast
        hh = h if allowed is not None and allowed.stride(1) else 1
        return create_block_mask(region.mask_mod(device), bb, hh, n_q, n_k, device=device)
    key = (region.lo, region.hi, region.causal, region.offset, n_q, n_k, str(device))
    if key not in _block_masks:  # one (n_q, n_k) bool pass, then kept with its mask_mod
        mod = region.mask_mod(device)
        _block_masks[key] = create_block_mask(mod, 1, 1, n_q, n_k, device=device)
        while len(_block_masks) > BLOCK_MASKS_KEPT:
            _block_masks.popitem(last=False)
    _block_masks.move_to_end(key)
    return _block_masks[key]


def flex_region(q, k, v, region: Region, scale) -> tuple[torch.Tensor, torch.Tensor]:
    """(O (b,h,n_q,d_v), L (b,h,n_q) float32) of attention over the cells of ``region``;
    a row with nothing allowed has O = 0 and L = -inf.

    Compiled on CUDA (inside a caller's compiled graph, traced into it). Elsewhere FlexAttention
    runs eagerly, by its reference implementation (it warns so): torch 2.13's compiled CPU
    kernel returns no log-sum-exp and has no backward.
    """
    from torch.nn.attention.flex_attention import AuxRequest, flex_attention

    b, h, n_q = q.shape[:3]
    mask = block_mask(region, b, h, n_q, k.shape[2], q.device)
    compiled = q.device.type == "cuda" and not torch.compiler.is_compiling()
    run = compiled_flex_attention() if compiled else flex_attention
    out, aux = run(q, k, v, block_mask=mask, scale=scale, return_aux=AuxRequest(lse=True))
    return out, aux.lse


def dense_region(q, k, v, region: Region, scale) -> tuple[torch.Tensor, torch.Tensor]:
    """``flex_region`` by the definition, materializing the (n_q, n_k) scores: what FlexAttention
    computes, for checking the composition on a CPU (whose FlexAttention has no backward)."""
    b, h, n_q, n_k = *q.shape[:3], k.shape[2]
    grid = [torch.arange(s, device=q.device) for s in (b, h, n_q, n_k)]
    keep = region.mask_mod(q.device)
    allowed = keep(*(g.view([-1 if a == i else 1 for a in range(4)]) for i, g in enumerate(grid)))
    ct = compute_dtype(q.dtype)
    s = (q.to(ct) @ k.to(ct).transpose(-2, -1)) * scale  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
    s = s.masked_fill(~allowed.expand(b, h, n_q, n_k), float("-inf"))
    lse = _logsumexp(s, -1)
    p = torch.exp(s - _finite(lse)[..., None])
    return (p @ v.to(ct)).to(v.dtype), lse


def _finite(x: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isfinite(x), x, torch.zeros_like(x))


def _logsumexp(x: torch.Tensor, dim: int) -> torch.Tensor:
    """log sum exp over ``dim``; -inf where every entry is -inf, with zero gradients there
    (torch.logsumexp's would be NaN)."""
    top = _finite(x.amax(dim, keepdim=True)).detach()  # any shift is exact; this one is safe
    total = torch.exp(x - top).sum(dim)
    some = total > 0
    return torch.where(some, top.squeeze(dim) + torch.log(torch.where(some, total, 1)), -math.inf)


def flex_attention_relative(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    region: RegionAttention = flex_region,
) -> torch.Tensor:
    """z (b, h, n_q, d_v) in q's dtype; inputs checked by ``relative_attention``.

    ``allowed`` a bool mask broadcastable to (b, h, n_q, n_k) or None. ``region`` computes
    attention over one masked region: FlexAttention, or ``dense_region`` to check on a CPU.
    The band and the combination run in float32 (float64 for float64 inputs).
    """
    b, h, n_q, d = q.shape
    n_k, d_v = v.shape[-2:]
    kk = (table_k.shape[0] - 1) // 2
    scale = 1.0 / math.sqrt(d)
    if allowed is not None:
        allowed = allowed.expand(b, h, n_q, n_k)

    ct = compute_dtype(q.dtype)  # float32 for half inputs
    per_bucket = (q.to(ct) @ table_k.to(ct).T) * scale  # (b,h,i,2k+1): q_i · w^K_r / sqrt(d)
    out_l, lse_l = region(q, k, v, Region(None, -kk, causal, query_offset, allowed), scale)
    out_r, lse_r = region(q, k, v, Region(max(kk, 1), None, causal, query_offset, allowed), scale)
    lse_l = lse_l + per_bucket[..., 0]
    lse_r = lse_r + per_bucket[..., 2 * kk]
    if kk > 0:
        out_b, lse_b, band_scores = _band(q, k, v, per_bucket, allowed, causal, query_offset, kk)
    else:  # k = 0: every distance is bucket 0, the two edges cover everything
        out_b = lse_b = band_scores = None
    lses = [lse_l, lse_r] + ([lse_b] if lse_b is not None else [])
    lse = _logsumexp(torch.stack(lses), 0)  # (b,h,i); -inf for a row with nothing allowed
    safe = _finite(lse)
    a_l, a_r = torch.exp(lse_l - safe), torch.exp(lse_r - safe)  # the edge buckets' mass
    out = a_l[..., None] * out_l.to(ct) + a_r[..., None] * out_r.to(ct)
    out = out + a_l[..., None] * table_v[0].to(ct) + a_r[..., None] * table_v[-1].to(ct)
    if out_b is not None:
        out = out + torch.exp(lse_b - safe)[..., None] * out_b
        mid = torch.exp(band_scores - safe[..., None])  # (b,h,i,2k-1): P_{i, p_i + r}
        out = out + mid @ table_v[1:-1].to(ct)  # (b,h,i,2k-1),(2k-1,d_v)
    return out.to(q.dtype)


def _band(q, k, v, per_bucket, allowed, causal, query_offset, kk):
    """Attention over the band -k < r < k: (O (b,h,n_q,d_v), L (b,h,n_q), the band's scores
    (b,h,n_q,2k-1) at r = -(k-1)..k-1, -inf where not allowed), in per_bucket's dtype."""
    b, h, n_q, d = q.shape
    n_k, d_v = v.shape[-2:]
    rows = min(BAND_ROWS, n_q)
    blocks = -(-n_q // rows)
    width = rows + 2 * kk - 2  # keys of block t: positions s_t .. s_t + width - 1
    pad_q = blocks * rows - n_q
    # keys padded so every window lies inside; key position c sits at padded index c + k - 1
    right = max(0, query_offset + blocks * rows + kk - 1 - n_k)
    start = query_offset  # window t begins at padded index offset + t·rows
    span = (blocks - 1) * rows + width

    def windows(x):  # (b,h,n_k,c) -> (b,h,blocks,width,c), a strided view of one padded copy
        padded = F.pad(x.to(ct), (0, 0, kk - 1, right))[:, :, start : start + span]
        return padded.unfold(2, width, rows).transpose(-2, -1)

    ct = per_bucket.dtype
    qs = F.pad(q.to(ct), (0, 0, 0, pad_q)).view(b, h, blocks, rows, d)
    scores = qs @ windows(k).transpose(-2, -1) * (1.0 / math.sqrt(d))  # (b,h,t,rows,width)
    device = q.device
    r_row = torch.arange(rows, device=device)
    col = torch.arange(width, device=device)
    rel = col[None, :] - (kk - 1) - r_row[:, None]  # (rows,width): r = j - p_i
    bucket = (rel + kk).clamp(0, 2 * kk)
    pb = F.pad(per_bucket, (0, 0, 0, pad_q)).view(b, h, blocks, rows, 2 * kk + 1)
    scores = scores + pb.gather(-1, bucket.expand(b, h, blocks, rows, width))
    t = torch.arange(blocks, device=device)[:, None, None]
    row_at = t * rows + r_row[None, :, None]  # (t,rows,1) query index
    key_at = query_offset + t * rows - (kk - 1) + col[None, None, :]  # (t,1,width) key index
    ok = (rel.abs() < kk) & (row_at < n_q) & (key_at >= 0) & (key_at < n_k)
    if causal:
        ok = ok & (rel <= 0)
    ok = ok.expand(b, h, blocks, rows, width)
    if allowed is not None:
        rows_i = row_at.clamp(max=n_q - 1).expand(blocks, rows, width)
        keys_j = key_at.clamp(0, n_k - 1).expand(blocks, rows, width)
        ok = ok & allowed[:, :, rows_i, keys_j]
    scores = scores.masked_fill(~ok, float("-inf"))
    lse = _logsumexp(scores, -1)  # (b,h,t,rows)
    p = torch.exp(scores - _finite(lse)[..., None])
    out = (p @ windows(v)).reshape(b, h, blocks * rows, d_v)[:, :, :n_q]
    # the 2k-1 band cells of row r sit at columns r + (k - 1) + (-(k-1)..k-1)
    at = r_row[:, None] + torch.arange(2 * kk - 1, device=device)[None, :]  # (rows, 2k-1)
    band = scores.gather(-1, at.expand(b, h, blocks, rows, 2 * kk - 1))
    band = band.reshape(b, h, blocks * rows, 2 * kk - 1)[:, :, :n_q]
    return out, lse.reshape(b, h, blocks * rows)[:, :, :n_q], band
