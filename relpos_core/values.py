"""The relative value term  z^rel_i = sum_j alpha_ij a^V_ij  (Shaw et al. 2018, eq. 3).

Same registry of methods as the key term (see ``relpos_core.methods``), run in the other
direction: the weights are summed into the 2k+1 distance buckets (or the 2L-1 skew distances)
and multiplied by w^V.
"""

from __future__ import annotations

import torch

from relpos_core.guard import check_fits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.methods import Sizes, get_method
from relpos_core.precision import HALF_DTYPES, compute_itemsize, no_autocast, upcast
from relpos_core.validation import check_int, check_max_bytes, check_same_dtype, check_tensor


def relative_values(
    weights: torch.Tensor,
    table: torch.Tensor,
    method: str = "bucket",
    query_offset: int = 0,
    *,
    max_bytes: int | None = None,
) -> torch.Tensor:
    """sum_j weights_ij w^V_{clip(j-i,k)}: (b, h, n_q, n_k), (2k+1, d) -> (b, h, n_q, d).

    Axis meaning of the result: [batch, head, query_position, channel]. ``max_bytes`` as in
    ``relative_attention`` (None: the device's memory).

    >>> w = torch.tensor([[-1.0], [0.0], [1.0]])  # k = 1: w^V_r = r
    >>> relative_values(torch.full((1, 1, 2, 2), 0.5), w)[0, 0].flatten()
    tensor([ 0.5000, -0.5000])
    """
    chosen = get_method(method)
    weights = check_tensor("weights", weights, 4)
    table = check_tensor("table", table, 2)
    check_same_dtype(weights=weights, table=table)
    k = clip_distance_from_table(table)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    n_q, n_k = weights.shape[-2:]
    if n_q < 1 or n_k < 1:
        raise ValueError(f"weights must hold at least one query and one key, got {n_q}x{n_k}")
    reason = chosen.unsupported(n_q, n_k, query_offset)
    if reason:
        raise ValueError(f"method {method!r} cannot run here: {reason}")
    b, h = weights.shape[:2]
    s = Sizes.of((b, h, n_q, n_k, table.shape[1], table.shape[1]), k, compute_itemsize(table.dtype))
    need = chosen.term_bytes(s).value
    half = weights.dtype in HALF_DTYPES
    if half or not weights.is_contiguous():  # a float32 or contiguous copy of the weights
        need += s.square
    if half:  # the table's copy, the result's cast back
        need += s.tables + weights.element_size() * b * h * n_q * table.shape[1]
    check_fits(
        f"relative_values with method {chosen.name!r}, weights {tuple(weights.shape)}",
        need,
        check_max_bytes(max_bytes),
        weights.device,
    )
    with no_autocast(weights.device):  # half: per-bucket sums in float32, the dtype out
        return chosen.value_term(*upcast(weights, table), query_offset).to(weights.dtype)
