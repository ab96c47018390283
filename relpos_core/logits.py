"""The relative key term  S_rel[b, h, i, j] = q_i · a^K_ij  (Shaw et al. 2018, eq. 4), five ways.

All methods are exact against each other; they differ in what they materialize:

  loop    the definition, Python loops over (i, j)                  reference only
  einsum  a^K gathered to (n_q, n_k, d), one einsum (seed 001)       O(n^2 d)
  matmul  tensor2tensor's transpose -> reshape -> matmul (seed 000)  O(n^2 d)
  skew    Q Er^T over all 2L-1 distances, then the skew (Huang)      O(L d)     n_q = n_k only
  bucket  Q w^T over the 2k+1 buckets, then gather by index          O(n k + n^2)
  banded  Q w^T; two per-row constants off the band, gather on it    O(n k)     (see ``banded``)

Unscaled: the caller adds the content term and scales by 1/sqrt(d).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from relpos_core.banded import banded_logits
from relpos_core.checks import check_choice, check_int, check_same_dtype, check_tensor
from relpos_core.lookup import clip_distance_from_table, gather_relative, relative_index
from relpos_core.skew import skew_unmasked
from relpos_core.trace import Trace

LOGIT_METHODS = ("loop", "einsum", "matmul", "skew", "bucket", "banded")


def skew_embeddings(table: torch.Tensor, length: int) -> torch.Tensor:
    """Er for the two-sided skew: row c holds w_{clip(c - (L-1), k)}, c in 0..2L-2.

    (2k+1, d) -> (2L-1, d). With L - 1 <= k this is a slice of the table, else edge rows repeat.

    >>> skew_embeddings(torch.arange(3.0)[:, None], 3).flatten()  # k = 1, L = 3
    tensor([0., 0., 1., 2., 2.])
    """
    table = check_tensor("table", table, 2)
    length = check_int("length (sequence length L)", length, 1)
    k = clip_distance_from_table(table)
    distances = torch.arange(-(length - 1), length)
    return table[distances.clamp(-k, k) + k]  # (2L-1, d)


def _check_inputs(q: torch.Tensor, table: torch.Tensor, n_k: int | None) -> tuple[int, int]:
    q = check_tensor("q", q, 4)
    table = check_tensor("table", table, 2)
    check_same_dtype(q=q, table=table)
    clip_distance_from_table(table)
    if table.shape[1] != q.shape[-1]:
        raise ValueError(
            f"table width must equal the head dim of q ({q.shape[-1]}), "
            f"got table of shape {tuple(table.shape)}"
        )
    n_q = q.shape[-2]
    n_k = n_q if n_k is None else check_int("n_k (number of keys)", n_k, 1)
    if n_q < 1:
        raise ValueError(f"q must hold at least one query position, got shape {tuple(q.shape)}")
    return n_q, n_k


def relative_logits(
    q: torch.Tensor, table: torch.Tensor, n_k: int | None = None, method: str = "bucket"
) -> torch.Tensor:
    """q_i · a^K_ij for every head: (b, h, n_q, d), (2k+1, d) -> (b, h, n_q, n_k).

    Axis meaning of the result: [batch, head, query_position, key_position]. ``n_k`` defaults
    to n_q. ``method`` is one of LOGIT_METHODS; "skew" needs n_q == n_k.

    >>> q = torch.ones(1, 1, 2, 1)
    >>> w = torch.tensor([[-1.0], [0.0], [1.0]])  # k = 1
    >>> relative_logits(q, w, method="skew")[0, 0]
    tensor([[ 0.,  1.],
            [-1.,  0.]])
    """
    method = check_choice("method", method, LOGIT_METHODS)
    n_q, n_k = _check_inputs(q, table, n_k)
    k = clip_distance_from_table(table)
    if method == "loop":
        return _logits_loop(q, table, n_k)
    if method == "einsum":
        a_k = gather_relative(table, relative_index(n_q, n_k, k))  # (i,j,d)
        return torch.einsum("bhid,ijd->bhij", q, a_k)  # (b,h,i,d),(i,j,d) -> (b,h,i,j)
    if method == "matmul":
        return trace_matmul_logits(q, table, n_k).result
    if method == "skew":
        if n_q != n_k:
            raise ValueError(f"method 'skew' needs n_q == n_k, got n_q={n_q}, n_k={n_k}")
        e_r = skew_embeddings(table, n_q)  # (2L-1, d)
        return skew_unmasked(q @ e_r.T)  # (b,h,L,2L-1) -> (b,h,L,L)
    if method == "banded":
        return banded_logits(q, table, n_k)
    per_bucket = q @ table.T  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
    index = relative_index(n_q, n_k, k).expand(*q.shape[:-2], n_q, n_k)
    return per_bucket.gather(-1, index)  # (b,h,i,j)


def _logits_loop(q: torch.Tensor, table: torch.Tensor, n_k: int) -> torch.Tensor:
    """The definition: e_ij = q_i · w_{clip(j - i, k)}, one (i, j) pair at a time."""
    k = clip_distance_from_table(table)
    n_q = q.shape[-2]
    out = q.new_zeros(*q.shape[:-2], n_q, n_k)
    for i in range(n_q):
        for j in range(n_k):
            w = table[max(-k, min(k, j - i)) + k]  # (d,)
            out[..., i, j] = (q[..., i, :] * w).sum(-1)
    return out


@dataclass(frozen=True)
class MatmulTrace(Trace):
    """tensor2tensor's _relative_attention_inner, step by step (seed 000's six steps)."""

    q: torch.Tensor  # (b, h, n_q, d)
    a_k: torch.Tensor  # (n_q, n_k, d)
    q_t: torch.Tensor  # (n_q, b, h, d)
    q_t_r: torch.Tensor  # (n_q, b*h, d)
    product: torch.Tensor  # (n_q, b*h, n_k)
    product_r: torch.Tensor  # (n_q, b, h, n_k)
    result: torch.Tensor  # (b, h, n_q, n_k)

    FORMULAS = {
        "q": "1. queries Q, (b, h, n_q, d)",
        "a_k": "a^K_ij = w_clip(j-i,k), (n_q, n_k, d)",
        "q_t": "2. transpose -> (n_q, b, h, d)",
        "q_t_r": "3. reshape -> (n_q, b·h, d)",
        "product": "4. matmul with a^K transposed per query: (n_q, b·h, d) @ (n_q, d, n_k)",
        "product_r": "5. reshape -> (n_q, b, h, n_k)",
        "result": "6. transpose -> (b, h, n_q, n_k)",
    }


def trace_matmul_logits(
    q: torch.Tensor, table: torch.Tensor, n_k: int | None = None
) -> MatmulTrace:
    """The relative key term by transpose -> reshape -> matmul -> reshape -> transpose.

    Every intermediate is returned for display; ``.result`` equals ``relative_logits``.
    """
    n_q, n_k = _check_inputs(q, table, n_k)
    b, h, _, d = q.shape
    a_k = gather_relative(table, relative_index(n_q, n_k, clip_distance_from_table(table)))
    q_t = q.permute(2, 0, 1, 3)  # (i,b,h,d)
    q_t_r = q_t.reshape(n_q, b * h, d)  # (i,b*h,d)
    product = q_t_r @ a_k.transpose(1, 2)  # (i,b*h,d),(i,d,j) -> (i,b*h,j)
    product_r = product.reshape(n_q, b, h, n_k)  # (i,b,h,j)
    result = product_r.permute(1, 2, 0, 3)  # (b,h,i,j)
    return MatmulTrace(q, a_k, q_t, q_t_r, product, product_r, result)
