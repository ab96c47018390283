"""The relative value term  z^rel_i = sum_j alpha_ij a^V_ij  (Shaw et al. 2018, eq. 3).

Same registry of methods as the key term (see ``relpos_core.methods``), run in the other
direction: the weights are summed into the 2k+1 distance buckets (or the 2L-1 skew distances)
and multiplied by w^V.
"""

from __future__ import annotations

import torch

from relpos_core.checks import check_int, check_same_dtype, check_tensor
from relpos_core.lookup import clip_distance_from_table
from relpos_core.methods import get_method
from relpos_core.precision import no_autocast, upcast


def relative_values(
    weights: torch.Tensor, table: torch.Tensor, method: str = "bucket", query_offset: int = 0
) -> torch.Tensor:
    """sum_j weights_ij w^V_{clip(j-i,k)}: (b, h, n_q, n_k), (2k+1, d) -> (b, h, n_q, d).

    Axis meaning of the result: [batch, head, query_position, channel].

    >>> w = torch.tensor([[-1.0], [0.0], [1.0]])  # k = 1: w^V_r = r
    >>> relative_values(torch.full((1, 1, 2, 2), 0.5), w)[0, 0].flatten()
    tensor([ 0.5000, -0.5000])
    """
    chosen = get_method(method)
    weights = check_tensor("weights", weights, 4)
    table = check_tensor("table", table, 2)
    check_same_dtype(weights=weights, table=table)
    clip_distance_from_table(table)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    n_q, n_k = weights.shape[-2:]
    if n_q < 1 or n_k < 1:
        raise ValueError(f"weights must hold at least one query and one key, got {n_q}x{n_k}")
    reason = chosen.unsupported(n_q, n_k, query_offset)
    if reason:
        raise ValueError(f"method {method!r} cannot run here: {reason}")
    with no_autocast(weights.device):  # half: per-bucket sums in float32, the dtype out
        return chosen.value_term(*upcast(weights, table), query_offset).to(weights.dtype)
