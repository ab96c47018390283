"""DeBERTa read at every distance r = j - i: the row of the relative table P each distance
reads (distances sharing a row share a bucket), and the position terms a query and a key get
from the rows of P^K and P^Q read that way."""

from __future__ import annotations

import math

import torch

from relpos_core.by_distance import distances
from relpos_core.schemes.deberta.maths import check_buckets, relative_rows
from relpos_core.validation import check_int, check_tensor


def deberta_rows_by_distance(
    n: int, position_buckets: int, max_relative_positions: int, table_rows: int | None = None
) -> torch.Tensor:
    """c = clamp(bucket(i - j) + span, 0, 2 span - 1) for every r = j - i of ``distances(n)``:
    int64 (2n - 1,). DeBERTa's relative position is i - j, so r reads bucket(-r). With
    ``table_rows``, a table of that many rows is checked to be the 2 span these settings read.

    >>> deberta_rows_by_distance(3, 0, 1).tolist()  # no buckets, span 1: rows 0..1
    [1, 1, 1, 0, 0]
    >>> deberta_rows_by_distance(6, 4, 5).tolist()  # 4 buckets: |r| <= 2 exact, then log
    [7, 7, 7, 6, 5, 4, 3, 2, 1, 1, 0]
    """
    buckets, top = check_buckets(position_buckets, max_relative_positions)
    if table_rows is not None and table_rows != 2 * (buckets or top):
        what = f"position_buckets = {buckets}" if buckets else f"max_relative_positions = {top}"
        raise ValueError(
            f"the relative table has {table_rows} rows; {what} reads 2 span = "
            f"{2 * (buckets or top)} rows"
        )
    m = distances(n).numel()  # 2n - 1 keys around one query at position n - 1
    return relative_rows(1, m, n - 1, position_buckets, max_relative_positions)[0]


def disentangled_terms(
    q: torch.Tensor,
    k: torch.Tensor,
    key_by_distance: torch.Tensor | None,
    query_by_distance: torch.Tensor | None,
    divisor_terms: int,
) -> dict[str, torch.Tensor]:
    """c2p = q_i · P^K[c(i, j)] and p2c = k_j · P^Q[c(i, j)], each over sqrt(f d) with f =
    ``divisor_terms`` (1 + the number of position terms the model adds), from the rows read at
    each distance (h, 2n - 1, d) (``None``: the term is absent); q, k are (h, n, d).
    Returns (h, n, n) per term present.

    >>> v = torch.tensor([[[1.0], [2.0], [3.0]]])  # one head, d = 1, r = -1, 0, 1
    >>> disentangled_terms(torch.ones(1, 2, 1), torch.ones(1, 2, 1), v, None, 1)["c2p"].tolist()
    [[[2.0, 3.0], [1.0, 2.0]]]
    """
    check_tensor("q", q, 3)
    check_tensor("k", k, 3)
    n = q.shape[1]
    if k.shape != q.shape:
        raise ValueError(f"q and k must have one shape (h, n, d), got {q.shape} and {k.shape}")
    check_int("divisor_terms", divisor_terms, 1, 3)
    r = torch.arange(n)[None, :] - torch.arange(n)[:, None] + n - 1  # (i, j) -> j - i + n - 1
    scale = 1.0 / math.sqrt(divisor_terms * q.shape[-1])
    out = {}
    if key_by_distance is not None:
        by_query = q @ key_by_distance.to(q.dtype).transpose(-2, -1)  # (h,i,d),(h,d,m) -> (h,i,m)
        out["c2p"] = by_query.gather(-1, r.expand(q.shape[0], -1, -1)) * scale
    if query_by_distance is not None:
        by_key = k @ query_by_distance.to(k.dtype).transpose(-2, -1)  # (h,j,d),(h,d,m) -> (h,j,m)
        out["p2c"] = by_key.gather(-1, r.T.expand(k.shape[0], -1, -1)).transpose(-2, -1) * scale
    return out
