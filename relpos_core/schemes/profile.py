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
import torch.nn.functional as F

from relpos_core.guard import check_fits
from relpos_core.schemes.base import PositionScheme
from relpos_core.validation import check_bool, check_int, check_tensor

# Cells of one block of rows (b·h·rows·n_k). A block's statistics take about six float64 copies
# of it moved by distance, about 50 MB at this size: small enough for a server that shares 690
# MB, large enough that the loop over blocks costs little beside the work.
BLOCK_CELLS = 2**20


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
        """One profile over every batch item and head: (1, 1, m).

        Spreads merge as sum of squared deviations = sum_g n_g (std_g^2 + (mean_g - mean)^2),
        a sum of non-negative parts: no cancellation."""
        count = self.count.sum((0, 1), keepdim=True)
        seen = self.count > 0
        weight = self.count.to(torch.float64)
        mean_of = torch.where(seen, self.mean, 0.0)
        mean = (weight * mean_of).sum((0, 1), keepdim=True) / count.clamp(min=1)
        apart = torch.where(seen, (self.mean - mean) ** 2 + self.std**2, 0.0)
        deviations = (weight * apart).sum((0, 1), keepdim=True)
        inf = float("inf")
        low = torch.where(seen, self.low, inf).amin((0, 1), keepdim=True)
        high = torch.where(seen, self.high, -inf).amax((0, 1), keepdim=True)
        return _finish(self.distance, count, mean, deviations, low, high)

    @property
    def toeplitz_deviation(self) -> float:
        """Max-norm distance to the nearest Toeplitz matrix: max over diagonals of
        (max - min) / 2, whose midpoint is that matrix's value. Exactly 0 for a function of
        j - i, in any dtype."""
        seen = self.count > 0
        if not bool(seen.any()):
            return 0.0
        return float(((self.high - self.low)[seen] / 2).max())


def _finish(distance, count, mean, deviations, low, high) -> DistanceProfile:
    """Spreads from the sums of squared deviations; NaN where a diagonal has no cell."""
    seen = count > 0
    nan = torch.tensor(float("nan"), dtype=torch.float64)
    std = (deviations / count.clamp(min=1).to(torch.float64)).sqrt()
    return DistanceProfile(
        distance,
        count,
        torch.where(seen, mean, nan),
        torch.where(seen, std, nan),
        torch.where(seen, low, nan),
        torch.where(seen, high, nan),
    )


def by_distance(block: torch.Tensor, fill: float) -> torch.Tensor:
    """Rows of ``block`` moved so that columns are distances: (..., R, N) -> (..., R, N+R-1).

    out[..., i, s] = block[..., i, s + i - (R-1)], so column s holds j - i = s - (R-1) for every
    row, and ``fill`` where that key does not exist. Pad, flatten, read back one column wider:
    each row lands one place further left (the skew read the other way), no gather.

    >>> by_distance(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 0.0)  # j - i = -1, 0, 1
    tensor([[0., 1., 2.],
            [3., 4., 0.]])
    """
    *lead, rows, n_k = block.shape
    width = n_k + rows
    padded = F.pad(block, (rows - 1, 1), value=fill)  # (..., R, N+R)
    flat = F.pad(padded.reshape(*lead, rows * width), (0, rows), value=fill)
    return flat.reshape(*lead, rows, width + 1)[..., : n_k + rows - 1]


class _Sums:
    """Running per-diagonal count, mean and sum of squared deviations from the mean, per
    (batch item, head), in float64. A diagonal holding one value gets spread exactly 0, which
    sum(x^2)/n - mean^2 does not give (its rounding is 1e-2 for ALiBi at n = 512 in float32)."""

    def __init__(self, batch: int, heads: int, width: int) -> None:
        shape = (batch, heads, width)
        self.count = torch.zeros(width, dtype=torch.int64)
        self.mean = torch.zeros(shape, dtype=torch.float64)
        self.deviations = torch.zeros(shape, dtype=torch.float64)
        self.low = torch.full(shape, float("inf"), dtype=torch.float64)
        self.high = torch.full(shape, float("-inf"), dtype=torch.float64)

    def add(self, block: torch.Tensor, first: int, allowed: torch.Tensor | None) -> None:
        """block (b, h, R, n_k) whose rows start at diagonal slot ``first`` (the slot of the
        distance j - i = -(R-1) for its last row); allowed bool (R, n_k), None for all.

        The block's own mean and squared deviations per diagonal (in float64), then merged
        with the running ones: for counts n_a, n_b and means a, b, the mean moves by
        (b - a) n_b / n and the deviations gain (b - a)^2 n_a n_b / n. Extremes are exact.
        """
        cells = block.detach()
        rows, n_k = cells.shape[-2:]
        if allowed is None:
            allowed = torch.ones(rows, n_k, dtype=torch.bool, device=cells.device)
        allowed = allowed.to(cells.device)
        at = slice(first, first + n_k + rows - 1)
        present = by_distance(allowed.to(torch.int64), 0)  # (R, W), 1 where a cell exists
        values = by_distance(cells.to(torch.float64).masked_fill(~allowed, 0.0), 0.0)
        count = present.sum(0)  # (W,)
        mean = values.sum(-2) / count.clamp(min=1)  # (b, h, W)
        apart = (values - mean[..., None, :]) * present  # (b, h, R, W), 0 where no cell
        deviations = (apart * apart).sum(-2)
        inf = float("inf")
        low = by_distance(cells.masked_fill(~allowed, inf), inf).amin(-2).cpu().double()
        high = by_distance(cells.masked_fill(~allowed, -inf), -inf).amax(-2).cpu().double()
        count, mean, deviations = count.cpu(), mean.cpu(), deviations.cpu()

        n_a, n_b = self.count[at].to(torch.float64), count.to(torch.float64)
        total = (n_a + n_b).clamp(min=1)
        step = mean - self.mean[..., at]
        self.mean[..., at] += step * (n_b / total)
        self.deviations[..., at] += deviations + step * step * (n_a * n_b / total)
        self.count[at] += count
        torch.minimum(self.low[..., at], low, out=self.low[..., at])
        torch.maximum(self.high[..., at], high, out=self.high[..., at])

    def profile(self, distance: torch.Tensor) -> DistanceProfile:
        count = self.count.expand_as(self.mean).clone()
        return _finish(distance, count, self.mean, self.deviations, self.low, self.high)


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
    check_tensor("term", term, 4, floating=False, finite=False)
    if not term.dtype.is_floating_point:
        raise TypeError(f"term must be a floating-point tensor (b, h, n_q, n_k), got {term.dtype}")
    b, h, n_q, n_k = term.shape
    if min(term.shape) < 1:
        raise ValueError(f"term must hold at least one cell per axis, got {tuple(term.shape)}")
    rows = _block_rows(b, h, n_q, n_k)
    # The blocks need little, but a term larger than memory (an expanded view) could never have
    # been computed whole: it is refused as if it were held, and scheme_profile is the way to
    # profile a term too large to hold (it computes it block by block).
    whole = b * h * n_q * n_k * term.element_size()
    check_fits(
        f"distance_profile of a term of shape {tuple(term.shape)}",
        max(_profile_bytes(b, h, rows, n_k), whole),
        None,
        term.device,
    )
    sums, distance, allowed = _prepare(b, h, n_q, n_k, query_offset, causal)
    for r0 in range(0, n_q, rows):  # blocks of rows: the copies by distance stay block-sized
        r1 = min(n_q, r0 + rows)  # the block's last row sees its most negative j - i at n_q - r1
        sums.add(term[:, :, r0:r1], n_q - r1, None if allowed is None else allowed[r0:r1])
    return sums.profile(distance)


def _block_rows(batch: int, heads: int, n_q: int, n_k: int) -> int:
    """Query rows per block: about ``BLOCK_CELLS`` cells, at least one row."""
    return max(1, min(n_q, BLOCK_CELLS // max(1, batch * heads * n_k)))


def _profile_bytes(batch: int, heads: int, rows: int, n_k: int) -> int:
    """Peak estimate of ``_Sums.add`` on a (b, h, rows, n_k) block: a few float64 copies of the
    block moved by distance, (b, h, rows, n_k + rows), and the int64 (rows, n_k + rows) counts."""
    cells = batch * heads * rows * (n_k + rows)
    return 8 * (6 * cells + 4 * rows * (n_k + rows))


def _prepare(batch: int, heads: int, n_q: int, n_k: int, query_offset: int, causal: bool):
    query_offset = check_int("query_offset", query_offset, 0)
    check_bool("causal", causal)
    low = -(query_offset + n_q - 1)  # the most negative j - i
    distance = torch.arange(low, n_k - query_offset)
    j = torch.arange(n_k)[None, :]
    i = torch.arange(query_offset, query_offset + n_q)[:, None]
    allowed = (j <= i) if causal else None
    return _Sums(batch, heads, distance.numel()), distance, allowed


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
    if not isinstance(scheme, PositionScheme):
        raise TypeError(f"scheme must be a PositionScheme, got {type(scheme).__name__}")
    scheme.check_inputs(q, k, 0)  # at least one query and one key, the scheme's heads and d
    position_only = check_bool("position_only", position_only)
    if position_only:
        q, k = content_free(q), content_free(k)
    b, h, n_q, _ = q.shape
    n_k = k.shape[2]
    sums, distance, allowed = _prepare(b, h, n_q, n_k, 0, causal)
    rows = _block_rows(b, h, n_q, n_k)
    for r0 in range(0, n_q, rows):
        block = scheme.position_term(
            q[:, :, r0 : r0 + rows], k, causal=causal, query_offset=r0, max_bytes=max_bytes
        )
        r1 = r0 + block.shape[-2]  # the block's last row sees j - i = -(r1-1) at slot n_q - r1
        sums.add(block, n_q - r1, None if allowed is None else allowed[r0:r1])
    return sums.profile(distance)
