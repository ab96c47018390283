"""The relative value term  z^rel_i = sum_j alpha_ij a^V_ij  (Shaw et al. 2018, eq. 3).

Same five methods as the key term (see ``logits``), run in the other direction: the weights
are summed into the 2k+1 distance buckets (or the 2L-1 skew distances) and multiplied by w^V.
"""

from __future__ import annotations

import torch

from relpos_core.banded import banded_values
from relpos_core.checks import check_choice, check_same_dtype, check_tensor
from relpos_core.logits import LOGIT_METHODS, skew_embeddings
from relpos_core.lookup import clip_distance_from_table, gather_relative, relative_index
from relpos_core.skew import absolute_to_relative_unmasked


def relative_values(
    weights: torch.Tensor, table: torch.Tensor, method: str = "bucket"
) -> torch.Tensor:
    """sum_j weights_ij w^V_{clip(j-i,k)}: (b, h, n_q, n_k), (2k+1, d) -> (b, h, n_q, d).

    Axis meaning of the result: [batch, head, query_position, channel].

    >>> w = torch.tensor([[-1.0], [0.0], [1.0]])  # k = 1: w^V_r = r
    >>> relative_values(torch.full((1, 1, 2, 2), 0.5), w)[0, 0].flatten()
    tensor([ 0.5000, -0.5000])
    """
    method = check_choice("method", method, LOGIT_METHODS)
    weights = check_tensor("weights", weights, 4)
    table = check_tensor("table", table, 2)
    check_same_dtype(weights=weights, table=table)
    k = clip_distance_from_table(table)
    n_q, n_k = weights.shape[-2:]
    if method == "loop":
        out = weights.new_zeros(*weights.shape[:-1], table.shape[1])
        for i in range(n_q):
            for j in range(n_k):
                w = table[max(-k, min(k, j - i)) + k]  # (d,)
                out[..., i, :] += weights[..., i, j, None] * w
        return out
    if method == "einsum":
        a_v = gather_relative(table, relative_index(n_q, n_k, k))  # (i,j,d)
        return torch.einsum("bhij,ijd->bhid", weights, a_v)  # -> (b,h,i,d)
    if method == "matmul":
        b, h = weights.shape[:2]
        a_v = gather_relative(table, relative_index(n_q, n_k, k))  # (i,j,d)
        w_t = weights.permute(2, 0, 1, 3).reshape(n_q, b * h, n_k)  # (i,b*h,j)
        out = (w_t @ a_v).reshape(n_q, b, h, -1)  # (i,b*h,j),(i,j,d) -> (i,b,h,d)
        return out.permute(1, 2, 0, 3)  # (b,h,i,d)
    if method == "skew":
        if n_q != n_k:
            raise ValueError(f"method 'skew' needs n_q == n_k, got n_q={n_q}, n_k={n_k}")
        rel = absolute_to_relative_unmasked(weights)  # (b,h,L,2L-1), [.., i, j-i+L-1]
        return rel @ skew_embeddings(table, n_q)  # (b,h,L,2L-1),(2L-1,d) -> (b,h,L,d)
    if method == "banded":
        return banded_values(weights, table)  # edge buckets as row sums, no n^2 scatter
    index = relative_index(n_q, n_k, k).expand_as(weights)
    buckets = weights.new_zeros(*weights.shape[:-1], 2 * k + 1)
    buckets.scatter_add_(-1, index, weights)  # (b,h,i,2k+1): weight mass per distance
    return buckets @ table  # (b,h,i,2k+1),(2k+1,d) -> (b,h,i,d)
