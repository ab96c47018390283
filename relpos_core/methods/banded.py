"""The "banded" method: clipped distances make the relative terms constant off a diagonal band.

With clipping (Shaw et al. 2018, eqs. 3-4) a_ij = w_{clip(j-i, k)}, so in row i

    q_i · a^K_ij = q_i · w_{-k}     for j <= i - k     (left of the band: one constant per row)
                 = q_i · w_{j-i}    for |j - i| < k    (the band: 2k - 1 cells per row)
                 = q_i · w_{+k}     for j >= i + k     (right of the band: one constant per row)

and, for the value term, sum_j alpha_ij a^V_ij only needs the weight mass of each of the 2k+1
distance buckets: the two edge buckets are row sums over the left and right parts, the 2k-1 middle
buckets are single cells of the band. Nothing of size (n, n, d) and no n^2 gather or scatter.

Rows are processed in blocks. For query rows [i0, i1) at positions p0 = offset + i0 .. the key
columns split into
    [0, c0)    left for every row of the block    (c0 = p0 - k + 1, clamped to [0, n_k])
    [c0, c1)   the strip the band crosses          (c1 = p1 + k - 1, clamped to [c0, n_k])
    [c1, n_k)  right for every row of the block
so only the (rows, c1 - c0) strip needs a per-cell bucket index. Exact for any n_q, n_k, k >= 0.
"""

from __future__ import annotations

import torch

from relpos_core.lookup import clip_distance_from_table, relative_index_unguarded

#: Elements of one (b·h, rows, n_k) block at most: 2^23 float32 values = 32 MiB, the L3 of the
#: 2-core CPU this was tuned on.
BLOCK_ELEMENTS = 1 << 23


def block_rows(n_q: int, n_k: int, batch_heads: int = 1) -> int:
    """Query rows per block: 2^23 / (b·h·n_k), between 64 and 256, never more than n_q.

    Every op of a block is one parallel region with a thread barrier; on a machine shared with
    other work a barrier can wait a whole scheduler slice, so few large blocks (still in L3)
    measured far steadier than many small ones, at the same speed when quiet.

    >>> block_rows(1024, 1024, 8), block_rows(4096, 4096, 8), block_rows(10, 10)
    (256, 256, 10)
    """
    rows = BLOCK_ELEMENTS // max(1, batch_heads * n_k)
    return max(1, min(n_q, 256, max(64, rows)))


#: Query rows that share one strip inside a block: the strip is STRIP_ROWS + 2k - 2 columns wide,
#: so a block's per-cell gather and scatter touch rows x (STRIP_ROWS + 2k) cells, not rows^2.
STRIP_ROWS = 32


def strip_columns(p0: int, p1: int, n_k: int, k: int) -> tuple[int, int]:
    """Columns [c0, c1) the band crosses for queries at positions [p0, p1), clamped to [0, n_k].

    Left of c0 is bucket 0 and from c1 on bucket 2k for every row. With k = 0 the band is
    empty and both edges hold the diagonal, so one row p gives c0 = p + 1 > c1 = p: the two
    meet at c1, and the diagonal goes to the right part. Meeting at c0 instead would give the
    diagonal to the left part, and a block whose last row is alone in its piece would then
    count it in both its block's right part and its piece's left part.

    >>> strip_columns(5, 6, 10, 0), strip_columns(5, 7, 10, 0), strip_columns(5, 6, 10, 2)
    ((5, 5), (6, 6), (4, 7))
    """
    c1 = min(p1 + k - 1, n_k)
    return min(max(p0 - k + 1, 0), c1), c1


def strip(
    p0: int, p1: int, n_k: int, k: int, device: torch.device | str | None = None
) -> tuple[int, int, torch.Tensor]:
    """Columns [c0, c1) the band crosses for queries at positions [p0, p1), and their index.

    Left of c0 every row uses bucket 0 (distance <= -k); from c1 on, bucket 2k.
    Returns c0, c1 and int64 (p1 - p0, c1 - c0): clip(j - i, k) + k.

    >>> strip(0, 2, 4, 1)
    (0, 2, tensor([[1, 2],
            [0, 1]]))
    """
    c0, c1 = strip_columns(p0, p1, n_k, k)
    # keys c0.. seen from queries p0..: the key axis starts at c0, so the queries sit at p0 - c0
    return (
        c0,
        c1,
        relative_index_unguarded(p1 - p0, max(c1 - c0, 1), k, p0 - c0, device)[:, : c1 - c0],
    )


class Strips:
    """The strips of a block of rows, STRIP_ROWS rows each, with their indices cached.

    Inner strips (not clipped by the ends of the key sequence) all have the same index, so a
    call builds a handful of small index tensors however long the sequence.
    """

    def __init__(self, n_k: int, k: int, device: torch.device | str | None = None) -> None:
        self.n_k, self.k, self.device = n_k, k, device
        self._index: dict[tuple[int, int, int], torch.Tensor] = {}

    def pieces(self, p0: int, rows: int, n_k: int | None = None):
        """(r0, r1, c0, c1, index) for the row pieces [r0, r1) of the block at position p0."""
        n_k = self.n_k if n_k is None else n_k
        for r0 in range(0, rows, STRIP_ROWS):
            r1 = min(rows, r0 + STRIP_ROWS)
            c0, c1 = strip_columns(p0 + r0, p0 + r1, n_k, self.k)
            key = (p0 + r0 - c0, r1 - r0, c1 - c0)
            if key not in self._index:
                self._index[key] = strip(p0 + r0, p0 + r1, n_k, self.k, self.device)[2]
            yield r0, r1, c0, c1, self._index[key]


def add_by_bucket(
    out: torch.Tensor,
    per_bucket: torch.Tensor,
    p0: int,
    k: int,
    shift: bool = False,
    strips: Strips | None = None,
) -> torch.Tensor:
    """out[.., i, j] += per_bucket[.., i, clip(j - i, k) + k] for queries at positions p0..

    out (.., rows, n_k), per_bucket (.., rows, 2k+1). With ``shift`` the left constant
    per_bucket[.., 0] is left out everywhere (for a softmax, which ignores it): the left part
    is untouched and the others get their difference to it, which ``per_bucket`` must already
    hold. In place; returns ``out``. The two constant parts of the whole block take one op
    each; only the block's strip is walked piece by piece.
    """
    rows, n_k = out.shape[-2:]
    strips = Strips(n_k, k, out.device) if strips is None else strips
    b0, b1 = strip_columns(p0, p0 + rows, n_k, k)
    if not shift:
        out[..., :b0] += per_bucket[..., :1]
    out[..., b1:] += per_bucket[..., 2 * k :]
    for r0, r1, c0, c1, index in strips.pieces(p0, rows, n_k):
        piece, p = out[..., r0:r1, :], per_bucket[..., r0:r1, :]
        if not shift and c0 > b0:
            piece[..., b0:c0] += p[..., :1]
        if b1 > c1:
            piece[..., c1:b1] += p[..., 2 * k :]
        if c1 > c0:
            piece[..., c0:c1] += p.gather(-1, index.expand(*p.shape[:-1], -1))
    return out


def bucket_mass(
    weights: torch.Tensor,
    p0: int,
    k: int,
    strips: Strips | None = None,
    rows_sum_to_one: bool = False,
) -> torch.Tensor:
    """Weight per distance bucket for the queries at positions p0.. of ``weights`` (.., rows, n_k).

    Returns (.., rows, 2k+1): bucket 0 sums j <= i - k, bucket 2k sums j >= i + k, the others
    are single cells of the band. With ``rows_sum_to_one`` the right edge is 1 minus the others
    (one pass less; only for rows of a softmax with nothing masked).

    >>> bucket_mass(torch.ones(1, 3), 0, 1)  # query 0 over keys 0, 1, 2 with k = 1
    tensor([[0., 1., 2.]])
    """
    *lead, rows, n_k = weights.shape
    strips = Strips(n_k, k, weights.device) if strips is None else strips
    b0, b1 = strip_columns(p0, p0 + rows, n_k, k)
    buckets = weights.new_zeros(*lead, rows, 2 * k + 1)
    buckets[..., 0] = weights[..., :b0].sum(-1)  # left of the whole block's strip
    if not rows_sum_to_one:  # += : with k = 0 both edges are bucket 0
        buckets[..., 2 * k] += weights[..., b1:].sum(-1)
    for r0, r1, c0, c1, index in strips.pieces(p0, rows, n_k):
        piece, mass = weights[..., r0:r1, :], buckets[..., r0:r1, :]
        if c1 > c0:
            mass.scatter_add_(-1, index.expand(*lead, -1, -1), piece[..., c0:c1])
        if c0 > b0:
            mass[..., 0] += piece[..., b0:c0].sum(-1)
        if b1 > c1 and not rows_sum_to_one:
            mass[..., 2 * k] += piece[..., c1:b1].sum(-1)
    if rows_sum_to_one:
        buckets[..., 2 * k] = 1 - buckets[..., : 2 * k].sum(-1) if k else 1.0
    return buckets


def banded_logits(
    q: torch.Tensor, table: torch.Tensor, n_k: int, query_offset: int = 0
) -> torch.Tensor:
    """q_i · a^K_ij by bands: (b, h, n_q, d), (2k+1, d) -> (b, h, n_q, n_k).

    Writes each cell once: a broadcast of Q w_{-k} and Q w_{+k} plus a gather on the strip.
    Differentiable (every write is an indexed copy autograd records).
    """
    k = clip_distance_from_table(table)
    *lead, n_q, _ = q.shape
    per_bucket = q @ table.T  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
    blocks = []
    rows = block_rows(n_q, n_k, per_bucket[..., 0, 0].numel())
    for i0 in range(0, n_q, rows):
        p = per_bucket[..., i0 : i0 + rows, :]
        block = p.new_zeros(*lead, p.shape[-2], n_k)
        blocks.append(add_by_bucket(block, p, query_offset + i0, k))
    return torch.cat(blocks, dim=-2)


def banded_values(
    weights: torch.Tensor, table: torch.Tensor, query_offset: int = 0
) -> torch.Tensor:
    """sum_j weights_ij w^V_{clip(j-i,k)} by bands: (b,h,n_q,n_k), (2k+1,d) -> (b,h,n_q,d)."""
    k = clip_distance_from_table(table)
    n_q, n_k = weights.shape[-2:]
    rows = block_rows(n_q, n_k, weights[..., 0, 0].numel())
    blocks = [
        bucket_mass(weights[..., i0 : i0 + rows, :], query_offset + i0, k) @ table
        for i0 in range(0, n_q, rows)
    ]
    return torch.cat(blocks, dim=-2)  # (b,h,i,2k+1),(2k+1,d) -> (b,h,i,d) per block
