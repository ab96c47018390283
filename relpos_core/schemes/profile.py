"""Is a position term a function of j - i alone? Its statistics along every diagonal.

For a term t (b, h, n_q, n_k), the cells with the same distance r = j - i form one diagonal. The
profile holds each diagonal's count, mean, spread and extremes per head; a Toeplitz term (one
value per diagonal) has low = mean = high everywhere, and ``toeplitz_deviation``, the largest
|t_ij - mean of its diagonal|, measures how far a term is from one. ``scheme_profile`` builds
the profile in blocks of query rows, so n = 4096 never holds an (n, n) tensor per head at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from relpos_core.checks import check_bool, check_int
from relpos_core.schemes.base import PositionScheme

BLOCK_CELLS = 2**22  # cells of one block of rows (b·h·rows·n_k), 32 MB in float64


@dataclass(frozen=True)
class DistanceProfile:
    """Per matrix (batch item, head) and distance r = j - i: cells, mean, standard deviation,
    min and max (float64).

    ``distance`` (m,) runs over every r the sequence has; a diagonal with no allowed cell has
    count 0 and NaN statistics. ``pooled`` merges every batch item and head.
    """

    distance: torch.Tensor  # (m,) int64
    count: torch.Tensor  # (b, h, m) int64
    mean: torch.Tensor  # (b, h, m)
    std: torch.Tensor  # (b, h, m)
    low: torch.Tensor  # (b, h, m)
    high: torch.Tensor  # (b, h, m)

    def pooled(self) -> DistanceProfile:
        """One profile over every batch item and head: (1, 1, m)."""
        count = self.count.sum((0, 1), keepdim=True)
        seen = self.count > 0
        weight = self.count.to(torch.float64)
        mean_of = torch.where(seen, self.mean, 0.0)
        total = (weight * mean_of).sum((0, 1), keepdim=True)
        squares = (weight * (torch.where(seen, self.std, 0.0) ** 2 + mean_of**2)).sum(
            (0, 1), keepdim=True
        )
        inf = float("inf")
        low = torch.where(seen, self.low, inf).amin((0, 1), keepdim=True)
        high = torch.where(seen, self.high, -inf).amax((0, 1), keepdim=True)
        return _finish(self.distance, count, total, squares, low, high)

    @property
    def toeplitz_deviation(self) -> float:
        """max |t_ij - mean of its diagonal| over every matrix and allowed cell."""
        seen = self.count > 0
        if not bool(seen.any()):
            return 0.0
        spread = torch.maximum(self.high - self.mean, self.mean - self.low)
        return float(spread[seen].max())


def _finish(distance, count, total, squares, low, high) -> DistanceProfile:
    """Means and spreads from per-diagonal sums; NaN where a diagonal has no cell."""
    seen = count > 0
    nan = torch.tensor(float("nan"), dtype=torch.float64)
    cells = count.clamp(min=1).to(torch.float64)
    mean = total / cells
    var = (squares / cells - mean * mean).clamp(min=0)
    return DistanceProfile(
        distance,
        count,
        torch.where(seen, mean, nan),
        torch.where(seen, var.sqrt(), nan),
        torch.where(seen, low, nan),
        torch.where(seen, high, nan),
    )


class _Sums:
    """Running per-diagonal sums of blocks of a term, per (batch item, head), in float64."""

    def __init__(self, batch: int, heads: int, width: int) -> None:
        shape = (batch, heads, width)
        self.count = torch.zeros(width, dtype=torch.int64)
        self.total = torch.zeros(shape, dtype=torch.float64)
        self.squares = torch.zeros(shape, dtype=torch.float64)
        self.low = torch.full(shape, float("inf"), dtype=torch.float64)
        self.high = torch.full(shape, float("-inf"), dtype=torch.float64)

    def add(self, block: torch.Tensor, slot: torch.Tensor, allowed: torch.Tensor) -> None:
        """block (b, h, rows, n_k); slot int64 and allowed bool (rows, n_k)."""
        allowed = allowed.cpu()
        cells = block.detach().to("cpu", torch.float64)[:, :, allowed]  # (b, h, c)
        index = slot.cpu()[allowed]  # (c,)
        self.count.index_add_(0, index, torch.ones_like(index))
        self.total.index_add_(2, index, cells)
        self.squares.index_add_(2, index, cells * cells)
        spread = index.expand_as(cells)
        self.low.scatter_reduce_(2, spread, cells, reduce="amin")
        self.high.scatter_reduce_(2, spread, cells, reduce="amax")

    def profile(self, distance: torch.Tensor) -> DistanceProfile:
        count = self.count.expand_as(self.total).clone()
        return _finish(distance, count, self.total, self.squares, self.low, self.high)


def distance_profile(
    term: torch.Tensor, query_offset: int = 0, causal: bool = False
) -> DistanceProfile:
    """The profile of one term (b, h, n_q, n_k) whose row 0 is the query at ``query_offset``;
    with ``causal`` only the cells j <= i count.

    >>> t = torch.tensor([[[[0.0, 1.0], [2.0, 0.0]]]])  # diagonal 0 holds 0 and 0
    >>> p = distance_profile(t)
    >>> p.distance.tolist(), p.mean.tolist(), p.toeplitz_deviation
    ([-1, 0, 1], [[[2.0, 0.0, 1.0]]], 0.0)
    """
    b, h, n_q, n_k = term.shape
    sums, distance, slot, allowed = _prepare(b, h, n_q, n_k, query_offset, causal)
    sums.add(term, slot, allowed)
    return sums.profile(distance)


def _prepare(batch: int, heads: int, n_q: int, n_k: int, query_offset: int, causal: bool):
    query_offset = check_int("query_offset", query_offset, 0)
    check_bool("causal", causal)
    low = -(query_offset + n_q - 1)  # the most negative j - i
    distance = torch.arange(low, n_k - query_offset)
    j = torch.arange(n_k)[None, :]
    i = torch.arange(query_offset, query_offset + n_q)[:, None]
    slot = j - i - low  # (n_q, n_k)
    allowed = (j <= i) if causal else torch.ones(n_q, n_k, dtype=torch.bool)
    return _Sums(batch, heads, distance.numel()), distance, slot, allowed


def content_free(x: torch.Tensor) -> torch.Tensor:
    """Every position given the same vector, the mean over positions: (b,h,n,d) -> (b,h,n,d).

    A scheme's position term on content-free queries and keys is its position-only part.
    """
    return x.mean(dim=-2, keepdim=True).expand_as(x)


def scheme_profile(
    scheme: PositionScheme,
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    causal: bool = False,
    position_only: bool = False,
    max_bytes: int | None = None,
) -> DistanceProfile:
    """The profile of ``scheme``'s position term for queries q (b,h,n_q,d) at positions
    0..n_q-1 and keys k, built over blocks of query rows.

    ``position_only`` replaces q and k by :func:`content_free` ones first: what is left is the
    part of the term that position alone decides, a function of j - i for every scheme here.
    """
    check_bool("position_only", position_only)
    if position_only:
        q, k = content_free(q), content_free(k)
    b, h, n_q, _ = q.shape
    n_k = k.shape[2]
    sums, distance, slot, allowed = _prepare(b, h, n_q, n_k, 0, causal)
    rows = max(1, min(n_q, BLOCK_CELLS // max(1, b * h * n_k)))
    for r0 in range(0, n_q, rows):
        block = scheme.position_term(
            q[:, :, r0 : r0 + rows], k, causal=causal, query_offset=r0, max_bytes=max_bytes
        )
        sums.add(block, slot[r0 : r0 + rows], allowed[r0 : r0 + rows])
    return sums.profile(distance)
