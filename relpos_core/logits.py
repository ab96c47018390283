"""The relative key term  S_rel[b, h, i, j] = q_i · a^K_ij  (Shaw et al. 2018, eq. 4).

``relative_logits`` runs any method of the registry (``relpos_core.methods``); every method is
exact against the loop definition. ``trace_matmul_logits`` shows tensor2tensor's steps one by one.
Unscaled: the caller adds the content term and scales by 1/sqrt(d).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from relpos_core.guard import check_fits
from relpos_core.lookup import clip_distance_from_table, gather_relative, relative_index_unguarded
from relpos_core.methods import INDEX_BYTES, METHOD_NAMES, Method, Sizes, get_method
from relpos_core.precision import HALF_DTYPES, compute_itemsize, no_autocast, upcast
from relpos_core.trace import Trace
from relpos_core.validation import check_int, check_max_bytes, check_same_dtype, check_tensor

LOGIT_METHODS = METHOD_NAMES


def check_key_term_inputs(
    q: torch.Tensor, table: torch.Tensor, n_k: int | None, query_offset: int
) -> tuple[int, int]:
    """(n_q, n_k) once q (b, h, n_q, d) and the (2k+1, d) table are checked."""
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
    if n_q < 1 or q.shape[-1] < 1:
        raise ValueError(f"q must hold at least one query and one channel, got {tuple(q.shape)}")
    n_k = n_q if n_k is None else check_int("n_k (number of keys)", n_k, 1)
    check_int("query_offset (position of the first query)", query_offset, 0)
    return n_q, n_k


def key_term_bytes(method: Method, q: torch.Tensor, table: torch.Tensor, n_k: int) -> int:
    """Peak of ``method``'s key term for q (b, h, n_q, d) and n_k keys: its own model, with the
    float32 copies of half inputs and the result's cast back to their dtype."""
    b, h, n_q, d = q.shape
    k = clip_distance_from_table(table)
    s = Sizes.of((b, h, n_q, n_k, d, d), k, compute_itemsize(q.dtype))
    need = method.term_bytes(s).key
    half = q.dtype in HALF_DTYPES
    if half or not q.is_contiguous():  # a float32 or contiguous copy of q
        need += s.queries
    if half:  # the table's copy, the result's cast back
        need += s.tables + q.element_size() * b * h * n_q * n_k
    return need


def relative_logits(
    q: torch.Tensor,
    table: torch.Tensor,
    n_k: int | None = None,
    method: str = "bucket",
    query_offset: int = 0,
    *,
    max_bytes: int | None = None,
) -> torch.Tensor:
    """q_i · a^K_ij for every head: (b, h, n_q, d), (2k+1, d) -> (b, h, n_q, n_k).

    Axis meaning of the result: [batch, head, query_position, key_position], the queries at
    positions query_offset.. . ``n_k`` defaults to n_q. ``method`` names a registered method.
    ``max_bytes`` as in ``relative_attention`` (None: the device's memory).

    >>> q = torch.ones(1, 1, 2, 1)
    >>> w = torch.tensor([[-1.0], [0.0], [1.0]])  # k = 1
    >>> relative_logits(q, w, method="skew")[0, 0]
    tensor([[ 0.,  1.],
            [-1.,  0.]])
    """
    chosen = get_method(method)
    n_q, n_k = check_key_term_inputs(q, table, n_k, query_offset)
    reason = chosen.unsupported(n_q, n_k, query_offset)
    if reason:
        raise ValueError(f"method {method!r} cannot run here: {reason}")
    check_fits(
        f"relative_logits with method {chosen.name!r}, q {tuple(q.shape)}, n_k = {n_k}",
        key_term_bytes(chosen, q, table, n_k),
        check_max_bytes(max_bytes),
        q.device,
    )
    with no_autocast(q.device):  # half inputs: float32 inside, the inputs' dtype out
        return chosen.key_term(*upcast(q, table), n_k, query_offset).to(q.dtype)


@dataclass(frozen=True)
class MatmulTrace(Trace):
    """tensor2tensor's _relative_attention_inner for the key term, step by step."""

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
    q: torch.Tensor,
    table: torch.Tensor,
    n_k: int | None = None,
    query_offset: int = 0,
    *,
    max_bytes: int | None = None,
) -> MatmulTrace:
    """The relative key term by transpose -> reshape -> matmul -> reshape -> transpose.

    Every intermediate is returned for display; ``.result`` equals ``relative_logits``.
    ``max_bytes`` as in ``relative_attention`` (None: the device's memory).
    """
    n_q, n_k = check_key_term_inputs(q, table, n_k, query_offset)
    b, h, _, d = q.shape
    pairs = n_q * n_k
    check_fits(  # the index (two while clipped), a^K, the reshaped queries and the product
        f"trace_matmul_logits with q {tuple(q.shape)}, n_k = {n_k} (a ({n_q}, {n_k}, {d}) a^K)",
        2 * INDEX_BYTES * pairs + q.element_size() * (pairs * d + q.numel() + b * h * pairs),
        check_max_bytes(max_bytes),
        q.device,
    )
    k = clip_distance_from_table(table)
    a_k = gather_relative(table, relative_index_unguarded(n_q, n_k, k, query_offset, table.device))
    q_t = q.permute(2, 0, 1, 3)  # (i,b,h,d)
    q_t_r = q_t.reshape(n_q, b * h, d)  # (i,b*h,d)
    product = q_t_r @ a_k.transpose(1, 2)  # (i,b*h,d),(i,d,j) -> (i,b*h,j)
    product_r = product.reshape(n_q, b, h, n_k)  # (i,b,h,j)
    result = product_r.permute(1, 2, 0, 3)  # (b,h,i,j)
    return MatmulTrace(q, a_k, q_t, q_t_r, product, product_r, result)
