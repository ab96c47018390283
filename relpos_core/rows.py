"""Relative attention for a block of query rows at any position: the trace of a window, exactly.

Each row of attention depends only on its own query, every key and the distances j - i, so the
rows [first, first + m) of ``relative_attention(q, k, v, ...)`` are computed from those m queries
alone. The distances are offset by ``first``: clip(j - i, k) + k with i = first + row, which the
methods in ``logits`` (queries always at 0..n_q-1) cannot express. Cost O(m n) instead of O(n^2).

    per_bucket = q w^K                          (b,h,m,2k+1)
    S_rel[i,j] = per_bucket[i, clip(j - i, k) + k]
    alpha      = masked softmax of (q k^T + S_rel) / sqrt(d)
    z_i        = alpha v + (weight mass per bucket) w^V
"""

from __future__ import annotations

import torch

from relpos_core.attention import AttentionTrace, attend, combine_masks
from relpos_core.checks import check_int, check_same_dtype, check_tensor
from relpos_core.lookup import clip_distance_from_table


def block_index(first: int, rows: int, n_k: int, k: int) -> torch.Tensor:
    """clip(j - i, k) + k for queries i in [first, first + rows) and keys j in [0, n_k).

    >>> block_index(2, 2, 4, 1)
    tensor([[0, 0, 1, 2],
            [0, 0, 0, 1]])
    """
    first = check_int("first (first query position)", first, 0)
    rows = check_int("rows", rows, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    k = check_int("k (clip distance)", k, 0)
    distance = torch.arange(n_k)[None, :] - torch.arange(first, first + rows)[:, None]  # (i,j)
    return distance.clamp(-k, k) + k


def relative_attention_rows(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    first: int = 0,
    mask: torch.Tensor | None = None,
    causal: bool = False,
) -> AttentionTrace:
    """``relative_attention(...)`` restricted to query rows [first, first + m).

    q (b,h,m,d) holds the queries at positions first..first+m-1; k, v (b,h,n_k,d); tables
    (2k+1, d). ``mask`` (True = attend) broadcasts to (b, h, m, n_k): a key mask (.., 1, n_k)
    as it is, or the rows [first, first + m) of a full one. Every field of the returned trace
    equals the same rows of the full trace.

    >>> q = k = v = torch.zeros(1, 1, 3, 1)
    >>> w = torch.zeros(3, 1)
    >>> relative_attention_rows(q[:, :, 1:], k, v, w, w, first=1, causal=True).weights[0, 0]
    tensor([[0.5000, 0.5000, 0.0000],
            [0.3333, 0.3333, 0.3333]])
    """
    q = check_tensor("q", q, 4)
    k = check_tensor("k", k, 4)
    v = check_tensor("v", v, 4)
    table_k = check_tensor("table_k", table_k, 2)
    table_v = check_tensor("table_v", table_v, 2)
    check_same_dtype(q=q, k=k, v=v, table_k=table_k, table_v=table_v)
    b, h, m, d = q.shape
    n_k = k.shape[-2]
    if k.shape[:2] != (b, h) or k.shape[-1] != d or v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"k and v must have shape ({b}, {h}, n_k, {d}) and ({b}, {h}, n_k, d_v), "
            f"got {tuple(k.shape)} and {tuple(v.shape)}"
        )
    kk = clip_distance_from_table(table_k)
    if table_k.shape[1] != d or table_v.shape != (2 * kk + 1, v.shape[-1]):
        raise ValueError(
            f"tables must have shapes ({2 * kk + 1}, {d}) and ({2 * kk + 1}, {v.shape[-1]}), "
            f"got {tuple(table_k.shape)} and {tuple(table_v.shape)}"
        )
    index = block_index(first, m, n_k, kk).expand(b, h, m, n_k)  # (b,h,i,j)

    def relative_output(weights: torch.Tensor) -> torch.Tensor:
        buckets = weights.new_zeros(b, h, m, 2 * kk + 1).scatter_add_(-1, index, weights)
        return buckets @ table_v  # (b,h,i,2k+1),(2k+1,d) -> (b,h,i,d)

    return attend(
        q,
        k,
        v,
        (q @ table_k.T).gather(-1, index),  # (b,h,i,2k+1) -> (b,h,i,j)
        combine_masks(mask, causal, (b, h, m, n_k), first_query=first),
        relative_output,
    )
