"""The "banded" method: clipped distances make the relative terms constant off a diagonal band.

With clipping (Shaw et al. 2018, eq. 3-4) a_ij = w_{clip(j-i, k)}, so in row i

    q_i · a^K_ij = q_i · w_{-k}     for j <= i - k     (left of the band: one constant per row)
                 = q_i · w_{j-i}    for |j - i| < k    (the band: 2k - 1 cells per row)
                 = q_i · w_{+k}     for j >= i + k     (right of the band: one constant per row)

and, for the value term, sum_j alpha_ij a^V_ij only needs the weight mass of each of the 2k+1
distance buckets: the two edge buckets are row sums over the left and right parts, the 2k-1 middle
buckets are single cells of the band. Nothing of size (n, n, d) and no n^2 gather or scatter.

Rows are processed in blocks. For query rows [i0, i1) the key columns split into
    [0, c0)    left for every row of the block    (c0 = i0 - k + 1, clamped to [0, n_k])
    [c0, c1)   the strip the band crosses          (c1 = i1 + k - 1, clamped to [c0, n_k])
    [c1, n_k)  right for every row of the block
so only the (rows, c1 - c0) strip needs a per-cell bucket index. Exact for any n_q, n_k, k >= 0.
"""

from __future__ import annotations

import torch

from relpos_core.lookup import clip_distance_from_table

#: Elements of one (b·h, rows, n_k) block at most: 2^23 float32 values = 32 MiB, the L3 of the
#: 2-core CPU this was tuned on.
BLOCK_ELEMENTS = 1 << 23


def choose_method(n_q: int, n_k: int) -> str:
    """The exact method "auto" runs: "banded" for every shape.

    Measured on a 2-core CPU (``python -m relpos_lab.bench``), the lean banded attention is the
    fastest exact method at every n tried, 64 to 4096 (1.5-2.2x SDPA; bucket 7-14x, skew 18-37x),
    and the least memory-hungry; in the traced ``relative_attention`` it ties with bucket. It
    works for any n_q, n_k and k, where the skew needs n_q == n_k.

    >>> choose_method(1024, 1024)
    'banded'
    """
    return "banded"


def block_rows(n_q: int, n_k: int, batch_heads: int = 1) -> int:
    """Query rows per block: 2^23 / (b·h·n_k), between 64 and 256, never more than n_q.

    Every op of a block is one parallel region with a thread barrier; on a machine shared with
    other work a barrier can wait a whole scheduler slice, so few large blocks (still in L3)
    measured far steadier than many small ones (see ``bench``), at the same speed when quiet.

    >>> block_rows(1024, 1024, 8), block_rows(4096, 4096, 8), block_rows(10, 10)
    (256, 256, 10)
    """
    rows = BLOCK_ELEMENTS // max(1, batch_heads * n_k)
    return max(1, min(n_q, 256, max(64, rows)))


def strip_columns(i0: int, i1: int, n_k: int, k: int) -> tuple[int, int]:
    """Columns [c0, c1) the band crosses for query rows [i0, i1), clamped to [0, n_k]."""
    c0 = min(max(i0 - k + 1, 0), n_k)
    return c0, max(min(i1 + k - 1, n_k), c0)


def strip(i0: int, i1: int, n_k: int, k: int) -> tuple[int, int, torch.Tensor]:
    """Columns [c0, c1) the band crosses for query rows [i0, i1), and their bucket index.

    Left of c0 every row of the block uses bucket 0 (distance <= -k); from c1 on, bucket 2k.
    Returns c0, c1 and int64 (i1 - i0, c1 - c0): clip(j - i, k) + k.

    >>> strip(0, 2, 4, 1)
    (0, 2, tensor([[1, 2],
            [0, 1]]))
    """
    c0, c1 = strip_columns(i0, i1, n_k, k)
    distance = torch.arange(c0, c1)[None, :] - torch.arange(i0, i1)[:, None]  # (i,j)
    return c0, c1, distance.clamp(-k, k) + k


def banded_logits(q: torch.Tensor, table: torch.Tensor, n_k: int) -> torch.Tensor:
    """q_i · a^K_ij by bands: (b, h, n_q, d), (2k+1, d) -> (b, h, n_q, n_k).

    Writes each cell once: a broadcast of Q w_{-k} and Q w_{+k} plus a gather on the strip.
    """
    k = clip_distance_from_table(table)
    *lead, n_q, _ = q.shape
    per_bucket = q @ table.T  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
    out = q.new_empty(*lead, n_q, n_k)
    rows = block_rows(n_q, n_k, per_bucket[..., 0, 0].numel())
    for i0 in range(0, n_q, rows):
        i1 = min(n_q, i0 + rows)
        c0, c1, index = strip(i0, i1, n_k, k)
        p = per_bucket[..., i0:i1, :]  # (b,h,rows,2k+1)
        block = out[..., i0:i1, :]
        block[..., :c0] = p[..., :1]  # left: q_i · w_{-k}
        block[..., c1:] = p[..., 2 * k :]  # right: q_i · w_{+k}
        block[..., c0:c1] = p.gather(-1, index.expand(*lead, *index.shape))
    return out


def bucket_mass(weights: torch.Tensor, i0: int, k: int) -> torch.Tensor:
    """Weight per distance bucket for the query rows i0.. of ``weights`` (.., rows, n_k).

    Returns (.., rows, 2k+1): bucket 0 sums j <= i - k, bucket 2k sums j >= i + k, the others
    are single cells of the band.
    """
    *lead, rows, n_k = weights.shape
    c0, c1, index = strip(i0, i0 + rows, n_k, k)
    buckets = weights.new_zeros(*lead, rows, 2 * k + 1)
    buckets.scatter_add_(-1, index.expand(*lead, *index.shape), weights[..., c0:c1])
    buckets[..., 0] += weights[..., :c0].sum(-1)
    buckets[..., 2 * k] += weights[..., c1:].sum(-1)  # += : with k = 0 both edges are bucket 0
    return buckets


def banded_values(weights: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """sum_j weights_ij w^V_{clip(j-i,k)} by bands: (b,h,n_q,n_k), (2k+1,d) -> (b,h,n_q,d)."""
    k = clip_distance_from_table(table)
    *lead, n_q, n_k = weights.shape
    out = weights.new_empty(*lead, n_q, table.shape[1])
    rows = block_rows(n_q, n_k, weights[..., 0, 0].numel())
    for i0 in range(0, n_q, rows):
        i1 = min(n_q, i0 + rows)
        out[..., i0:i1, :] = bucket_mass(weights[..., i0:i1, :], i0, k) @ table
    return out
