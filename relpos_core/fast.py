"""Relative attention for speed: only the output (optionally the weights), no trace.

``relative_attention`` keeps five (b, h, n_q, n_k) tensors for display; this entry point keeps
none. With ``method="banded"`` (what "auto" picks) it runs the whole attention one block of query
rows at a time (see ``banded``):

    S     = (Q_blk / sqrt(d)) K^T                         (b·h, rows, n_k), into a reused buffer
    S    += Q_blk (w^K - w^K_{-k}) / sqrt(d) by bands    right constant, gather on the strip
    A     = softmax(S), in place (masked; causal blocks stop at column i1)
    Z_blk = A V,  M_blk = bucket mass of A               Z = cat(Z_blk) + cat(M_blk) w^V

Softmax is blind to a constant per row, so the left constant q_i · w_{-k} is subtracted from every
cell instead of added to the left part, and the right edge bucket is 1 minus the others.
Each block's slab stays in cache and is reused, so peak memory is O(b h n k + n d) plus one block
(up to 32 MiB at the benchmark shapes), not O(b h n^2); nothing of size (n, n, d) is ever built. The
other methods run the unblocked ops of ``relative_attention`` without keeping its intermediates.
"""

from __future__ import annotations

import math

import torch

from relpos_core.attention import combine_masks, masked_softmax
from relpos_core.banded import block_rows, choose_method, strip, strip_columns
from relpos_core.checks import check_bool, check_choice, check_same_dtype, check_tensor
from relpos_core.logits import LOGIT_METHODS, relative_logits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.values import relative_values

FAST_METHODS = ("auto", *(m for m in LOGIT_METHODS if m != "loop"))

_softmax_out = torch.ops.aten._softmax.out


def _check(q, k, v, table_k, table_v) -> None:
    for name, t in (("q", q), ("k", k), ("v", v), ("table_k", table_k), ("table_v", table_v)):
        check_tensor(name, t, 2 if name.startswith("table") else 4)
    check_same_dtype(q=q, k=k, v=v, table_k=table_k, table_v=table_v)
    b, h, _, d = q.shape
    if k.shape[:2] != (b, h) or k.shape[-1] != d:
        raise ValueError(
            f"k must have shape (b, h, n_k, d) = ({b}, {h}, n_k, {d}), got {tuple(k.shape)}"
        )
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"v must have shape (b, h, n_k, d_v) = ({b}, {h}, {k.shape[2]}, d_v), "
            f"got {tuple(v.shape)}"
        )
    clip_distance_from_table(table_k, "table_k")
    if table_k.shape[1] != d:
        raise ValueError(
            f"table_k width must equal the head dim of q ({d}), got {tuple(table_k.shape)}"
        )
    if table_v.shape != (table_k.shape[0], v.shape[-1]):
        raise ValueError(
            f"table_v must have shape ({table_k.shape[0]}, {v.shape[-1]}) (same k as table_k, "
            f"width = value dim), got {tuple(table_v.shape)}"
        )


def relative_attention_output(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    method: str = "auto",
    return_weights: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """z_i = sum_j alpha_ij (v_j + a^V_ij): q (b,h,n_q,d), k (b,h,n_k,d), v (b,h,n_k,d_v),
    tables (2k+1, d) and (2k+1, d_v) -> (b, h, n_q, d_v).

    Same arguments and result as ``relative_attention(...).output`` (a query with nothing to
    attend to gets 0). With ``return_weights`` also returns alpha, (b, h, n_q, n_k).

    >>> q = k = v = torch.zeros(1, 1, 2, 1)
    >>> w = torch.zeros(3, 1)
    >>> relative_attention_output(q, k, v, w, w, causal=True, return_weights=True)[1][0, 0]
    tensor([[1.0000, 0.0000],
            [0.5000, 0.5000]])
    """
    method = check_choice("method", method, FAST_METHODS)
    _check(q, k, v, table_k, table_v)
    check_bool("causal", causal)
    b, h, n_q, d = q.shape
    n_k = k.shape[-2]
    allowed = None
    if mask is not None:
        allowed = combine_masks(mask, False, (b, h, n_q, n_k))  # validated, broadcast view
    if method == "auto":
        method = choose_method(n_q, n_k)
    if method == "banded":
        return _banded_attention(q, k, v, table_k, table_v, allowed, causal, return_weights)
    scale = 1.0 / math.sqrt(d)
    logits = q @ k.transpose(-2, -1)  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
    logits += relative_logits(q, table_k, n_k, method=method)
    logits *= scale
    weights = masked_softmax(logits, combine_masks(mask, causal, (b, h, n_q, n_k)))
    del logits
    out = weights @ v + relative_values(weights, table_v, method=method)  # (b,h,i,d_v)
    return (out, weights) if return_weights else out


def _banded_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    return_weights: bool,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    b, h, n_q, d = q.shape
    n_k, d_v = v.shape[-2:]
    bh = b * h
    kk = clip_distance_from_table(table_k)
    q = (q * (1.0 / math.sqrt(d))).reshape(bh, n_q, d)  # scale once, on n·d values
    keys_t = k.reshape(bh, n_k, d).transpose(1, 2)  # (bh,d,j)
    values = v.reshape(bh, n_k, d_v)
    shifted = q @ (table_k - table_k[:1]).T  # (bh,i,d),(d,2k+1) -> (bh,i,2k+1), scaled
    content, masses = [], []  # per block; joined once at the end (fewer ops, each with a barrier)
    weights = q.new_zeros(b, h, n_q, n_k) if return_weights else None
    rows = block_rows(n_q, n_k, bh)
    logits_buf = q.new_empty(bh * rows * n_k)  # reused by every block
    indices: dict[tuple[int, int, int], torch.Tensor] = {}  # strip index, same for inner blocks
    for i0 in range(0, n_q, rows):
        i1 = min(n_q, i0 + rows)
        cols = min(n_k, i1) if causal else n_k  # causal: keys beyond the block's last row are out
        size = bh * (i1 - i0) * cols
        s = logits_buf[:size].view(bh, i1 - i0, cols)
        torch.bmm(q[:, i0:i1], keys_t[..., :cols], out=s)  # (bh,rows,d),(bh,d,j) -> (bh,rows,j)
        c0, c1 = strip_columns(i0, i1, cols, kk)
        key = (c0 - i0, i1 - i0, c1 - c0)
        if key not in indices:
            indices[key] = strip(i0, i1, cols, kk)[2].expand(bh, i1 - i0, c1 - c0)
        index = indices[key]  # (bh,rows,c1-c0): clip(j-i, k) + k
        # Softmax ignores a constant per row, so q_i · w_{-k} (left of the band) is left out and
        # the band and the right part get their difference to it.
        p = shifted[:, i0:i1]  # (bh,rows,2k+1)
        s[..., c1:] += p[..., 2 * kk :]  # right of the band: q_i · (w_{+k} - w_{-k})
        s[..., c0:c1] += p.gather(-1, index)
        blocked = _blocked(allowed, causal, i0, i1, cols, (b, h))
        if blocked is not None:
            s.view(b, h, i1 - i0, cols).masked_fill_(blocked, float("-inf"))
        a = _softmax_out(s, -1, False, out=s)  # in place: each row is read before written
        if allowed is not None:  # a row with nothing allowed is NaN: make it all zeros
            a.nan_to_num_(nan=0.0)
        mass = a.new_zeros(bh, i1 - i0, 2 * kk + 1)  # weight per distance bucket
        mass.scatter_add_(-1, index, a[..., c0:c1])  # the strip, cell by cell
        mass[..., 0] += a[..., :c0].sum(-1)  # left of the strip: distance <= -k
        if allowed is not None:  # else the right edge is what the others leave of 1, below
            mass[..., 2 * kk] += a[..., c1:].sum(-1)
        masses.append(mass)
        content.append(a @ values[:, :cols])  # (bh,rows,j),(bh,j,d_v) -> (bh,rows,d_v)
        if weights is not None:
            weights[..., i0:i1, :cols] = a.view(b, h, i1 - i0, cols)
    out = torch.cat(content, 1).view(bh * n_q, d_v)
    mass = torch.cat(masses, 1).view(bh * n_q, 2 * kk + 1)
    if allowed is None:  # every softmax row sums to 1: right of the strip, distance >= k
        mass[:, 2 * kk] += 1 - mass.sum(-1)
    out.addmm_(mass, table_v)  # += (bucket mass) w^V, (bh·i,2k+1),(2k+1,d_v)
    out = out.view(b, h, n_q, d_v)
    return (out, weights) if weights is not None else out


def _blocked(
    allowed: torch.Tensor | None, causal: bool, i0: int, i1: int, cols: int, bh: tuple[int, int]
) -> torch.Tensor | None:
    """Bool (b|1, h|1, rows|1, cols): True where rows [i0, i1) may not attend; None if all may."""
    blocked = None
    if allowed is not None:
        blocked = ~allowed[..., i0:i1, :cols]
    if causal and cols > i0 + 1:
        upper = torch.arange(cols)[None, :] > torch.arange(i0, i1)[:, None]  # j > i
        blocked = upper if blocked is None else blocked | upper
    return blocked
