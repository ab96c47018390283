"""Relation-aware self-attention (Shaw et al. 2018, eqs. 2-4), traced step by step.

e_ij     = (q_i · k_j + q_i · a^K_ij) / sqrt(d)
alpha_ij = softmax_j(e_ij)        over the keys the mask allows
z_i      = sum_j alpha_ij v_j  +  sum_j alpha_ij a^V_ij
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from relpos_core.banded import choose_method
from relpos_core.checks import check_bool, check_choice, check_same_dtype, check_tensor
from relpos_core.logits import LOGIT_METHODS, relative_logits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.masks import causal_mask
from relpos_core.trace import Trace
from relpos_core.values import relative_values

ATTENTION_METHODS = ("auto", *LOGIT_METHODS)  # "auto": ``banded.choose_method``


@dataclass(frozen=True)
class AttentionTrace(Trace):
    """Every step of one relative attention, [batch, head, query, key] or [.., query, channel]."""

    content_logits: torch.Tensor  # (b,h,i,j)  q_i · k_j
    relative_logits: torch.Tensor  # (b,h,i,j)  q_i · a^K_ij
    scaled_logits: torch.Tensor  # (b,h,i,j)  (content + relative) / sqrt(d)
    masked_logits: torch.Tensor  # (b,h,i,j)  -inf where the mask forbids
    allowed: torch.Tensor  # bool (b,h,i,j), True where a query may attend
    weights: torch.Tensor  # (b,h,i,j)  softmax over j; all-zero rows where nothing is allowed
    content_output: torch.Tensor  # (b,h,i,d)  sum_j alpha_ij v_j
    relative_output: torch.Tensor  # (b,h,i,d)  sum_j alpha_ij a^V_ij
    output: torch.Tensor  # (b,h,i,d)  z_i
    scale: float

    FORMULAS = {
        "content_logits": "q_i · k_j",
        "relative_logits": "q_i · a^K_ij",
        "scaled_logits": "e_ij = (q_i · k_j + q_i · a^K_ij) / sqrt(d)",
        "masked_logits": "e_ij, or -inf where the mask forbids j",
        "allowed": "mask: may query i attend to key j",
        "weights": "alpha_ij = softmax_j(e_ij)",
        "content_output": "sum_j alpha_ij v_j",
        "relative_output": "sum_j alpha_ij a^V_ij",
        "output": "z_i = sum_j alpha_ij (v_j + a^V_ij)",
    }


def masked_softmax(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis restricted to ``allowed``.

    A row with no allowed key gets all-zero weights (so its output is 0), never NaN.
    ``logits`` must be finite (forbid keys through ``allowed``, not -inf); ``allowed`` is bool
    and broadcasts to ``logits``.
    """
    logits = check_tensor("logits", logits, tuple(range(1, 9)))
    if not isinstance(allowed, torch.Tensor) or allowed.dtype != torch.bool:
        got = allowed.dtype if isinstance(allowed, torch.Tensor) else type(allowed).__name__
        raise TypeError(f"allowed must be a bool tensor, got {got}")
    if _broadcast_shape(allowed.shape, logits.shape) != logits.shape:
        raise ValueError(
            f"allowed of shape {tuple(allowed.shape)} does not broadcast to the logits "
            f"{tuple(logits.shape)}"
        )
    masked = logits.masked_fill(~allowed, float("-inf"))
    any_allowed = allowed.any(-1, keepdim=True)
    safe = masked.masked_fill(~any_allowed, 0.0)  # a fully masked row would be all -inf
    return torch.softmax(safe, dim=-1) * any_allowed


def _broadcast_shape(a: torch.Size, b: torch.Size) -> torch.Size | None:
    try:
        return torch.broadcast_shapes(a, b)
    except RuntimeError:
        return None


def combine_masks(
    mask: torch.Tensor | None,
    causal: bool,
    shape: tuple[int, int, int, int],
    first_query: int = 0,
) -> torch.Tensor:
    """Broadcast a user mask (True = attend) and the causal mask to bool ``shape``.

    The rows are the queries at positions ``first_query`` onwards (0: the whole sequence).
    """
    check_bool("causal", causal)
    allowed = torch.ones((), dtype=torch.bool)
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
        if _broadcast_shape(mask.shape, torch.Size(shape)) != shape:  # must not grow the logits
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the logits {shape}"
            )
        allowed = mask if mask.dtype == torch.bool else mask != 0
    if causal:
        allowed = allowed & causal_mask(shape[-2], shape[-1], first=first_query)
    return allowed.expand(shape)


def relative_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    method: str = "auto",
) -> AttentionTrace:
    """Relative attention with every intermediate: q (b,h,n_q,d), k and v (b,h,n_k,d),
    tables (2k+1, d). ``mask`` (bool or 0/1, broadcastable to (b,h,n_q,n_k), True = attend).

    A query with no key to attend to gets zero weights and a zero output (documented, not NaN).
    ``method`` picks how the key and value terms are computed (see ``logits``); "auto" runs
    ``banded.choose_method``. The trace is the same whichever method runs.

    >>> q = k = v = torch.zeros(1, 1, 2, 1)
    >>> w = torch.zeros(3, 1)
    >>> relative_attention(q, k, v, w, w, causal=True).weights[0, 0]
    tensor([[1.0000, 0.0000],
            [0.5000, 0.5000]])
    """
    method = check_choice("method", method, ATTENTION_METHODS)
    q = check_tensor("q", q, 4)
    k = check_tensor("k", k, 4)
    v = check_tensor("v", v, 4)
    table_k = check_tensor("table_k", table_k, 2)
    table_v = check_tensor("table_v", table_v, 2)
    check_same_dtype(q=q, k=k, v=v, table_k=table_k, table_v=table_v)
    clip_distance_from_table(table_k, "table_k")
    clip_distance_from_table(table_v, "table_v")
    b, h, n_q, d = q.shape
    n_k = k.shape[-2]
    if method == "auto":
        method = choose_method(n_q, n_k)
    if k.shape[:2] != (b, h) or k.shape[-1] != d:
        raise ValueError(
            f"k must have shape (b, h, n_k, d) = ({b}, {h}, n_k, {d}), got {tuple(k.shape)}"
        )
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"v must have shape (b, h, n_k, d_v) = ({b}, {h}, {n_k}, d_v), got {tuple(v.shape)}"
        )
    if table_k.shape[1] != d:
        raise ValueError(
            f"table_k width must equal the head dim of q ({d}), got {tuple(table_k.shape)}"
        )
    if table_v.shape[1] != v.shape[-1]:
        raise ValueError(
            f"table_v width must equal the value dim ({v.shape[-1]}), got {tuple(table_v.shape)}"
        )
    return attend(
        q,
        k,
        v,
        relative_logits(q, table_k, n_k, method=method),  # (b,h,i,j)
        combine_masks(mask, causal, (b, h, n_q, n_k)),
        lambda weights: relative_values(weights, table_v, method=method),
    )


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rel: torch.Tensor,
    allowed: torch.Tensor,
    relative_output: Callable[[torch.Tensor], torch.Tensor],
) -> AttentionTrace:
    """Eqs. 2-4 once the relative logits ``rel`` (b,h,i,j) and the bool mask are known;
    ``relative_output(weights)`` gives sum_j alpha_ij a^V_ij, (b,h,i,d)."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    content = q @ k.transpose(-2, -1)  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
    scaled = (content + rel) * scale
    weights = masked_softmax(scaled, allowed)
    content_out = weights @ v  # (b,h,i,j),(b,h,j,d) -> (b,h,i,d)
    rel_out = relative_output(weights)  # (b,h,i,d)
    return AttentionTrace(
        content_logits=content,
        relative_logits=rel,
        scaled_logits=scaled,
        masked_logits=scaled.masked_fill(~allowed, float("-inf")),
        allowed=allowed,
        weights=weights,
        content_output=content_out,
        relative_output=rel_out,
        output=content_out + rel_out,
        scale=scale,
    )
