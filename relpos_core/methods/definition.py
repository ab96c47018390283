"""The readable path: Shaw et al. (2018), eqs. 2-4, step by step, around a method's two terms.

e_ij     = (q_i · k_j + q_i · a^K_ij) / sqrt(d)
alpha_ij = softmax_j(e_ij)        over the keys the mask allows
z_i      = sum_j alpha_ij v_j  +  sum_j alpha_ij a^V_ij

Every ``Method`` runs here; a trace keeps each step (``AttentionTrace``, for the explorer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from relpos_core.masks import combine_masks, masked_softmax
from relpos_core.precision import upcast
from relpos_core.trace import Trace
from relpos_core.validation import all_finite, distinct_view

if TYPE_CHECKING:
    from relpos_core.admission import AttentionCall


@dataclass(frozen=True)
class AttentionTrace(Trace):
    """Every step of one relative attention, [batch, head, query, key] or [.., query, channel]."""

    content_logits: torch.Tensor  # (b,h,i,j)  q_i · k_j
    relative_logits: torch.Tensor  # (b,h,i,j)  q_i · a^K_ij
    scaled_logits: torch.Tensor  # (b,h,i,j)  e_ij = (content + relative) / sqrt(d)
    masked_logits: torch.Tensor  # (b,h,i,j)  -inf where the mask forbids
    allowed: torch.Tensor  # bool (b,h,i,j), True where a query may attend
    weights: torch.Tensor  # (b,h,i,j)  softmax over j; all-zero rows where nothing is allowed
    content_output: torch.Tensor  # (b,h,i,d)  sum_j alpha_ij v_j
    relative_output: torch.Tensor  # (b,h,i,d)  sum_j alpha_ij a^V_ij
    output: torch.Tensor  # (b,h,i,d)  z_i
    scale: float
    query_offset: int  # position of query row 0 in the key sequence
    method: str  # the registered method that computed the relative terms

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


def run_steps(method, call: AttentionCall, q, k, v, table_k, table_v):
    """Every step with ``method``'s key and value terms, computed in float32 or float64: the
    ``AttentionTrace`` when the call asks for one, else z (and alpha), in the inputs' dtype."""
    dtype, n_k, offset = q.dtype, k.shape[2], call.query_offset
    q, k, v, table_k, table_v = upcast(q, k, v, table_k, table_v)
    allowed = combine_masks(call.allowed, call.causal, call.shape, offset, max_bytes=call.max_bytes)
    steps = attend(
        q,
        k,
        v,
        method.key_term(q, table_k, n_k, offset),  # (b,h,i,j)
        allowed,
        lambda weights: method.value_term(weights, table_v, offset),
        dropout=_dropout(call.dropout_p, call.generator),
        max_bytes=call.max_bytes,
    )
    steps = {
        name: t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
        for name, t in steps.items()
    }
    if call.trace:
        return AttentionTrace(**steps, query_offset=offset, method=method.name)
    return call.answer(check_finite_output(steps["output"], q, k, v), steps["weights"])


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rel: torch.Tensor,
    allowed: torch.Tensor,
    relative_output: Callable[[torch.Tensor], torch.Tensor],
    dropout: Callable[[torch.Tensor], torch.Tensor] | None = None,
    max_bytes: int | None = None,
) -> dict[str, object]:
    """Eqs. 2-4 once the relative logits ``rel`` (b,h,i,j) and the bool mask are known;
    ``relative_output(weights)`` gives sum_j alpha_ij a^V_ij, (b,h,i,d). Returns the steps.
    ``max_bytes``: the caller's limit, for the softmax's own guard."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    content = q @ k.transpose(-2, -1)  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
    scaled = (content + rel) * scale
    weights = masked_softmax(scaled, allowed, max_bytes=max_bytes)
    used = weights if dropout is None else dropout(weights)
    content_out = used @ v  # (b,h,i,j),(b,h,j,d) -> (b,h,i,d)
    rel_out = relative_output(used)  # (b,h,i,d)
    return {
        "content_logits": content,
        "relative_logits": rel,
        "scaled_logits": scaled,
        "masked_logits": scaled.masked_fill(~allowed, float("-inf")),
        "allowed": allowed,
        "weights": weights if dropout is None else used,
        "content_output": content_out,
        "relative_output": rel_out,
        "output": content_out + rel_out,
        "scale": scale,
    }


def check_finite_output(
    out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """``out``, or a ValueError in words where finite inputs made NaN or inf: q·k, q·a^K or a
    weighted sum of v past the dtype's largest number. A NaN or inf given in q, k or v reaches
    the output, as in torch's own attention. One reduction over the output, after the work; on
    a CPU only (on a GPU the check would wait for the device on every call), and not in a
    compiled graph, which cannot branch on values."""
    if out.device.type != "cpu" or torch.compiler.is_compiling() or all_finite(out):
        return out
    if not all(all_finite(t) for t in (q, k, v)):
        return out  # the caller's NaN or inf, propagated
    largest = max(float(distinct_view(t.detach()).abs().max()) for t in (q, k, v))
    raise ValueError(
        f"relative_attention overflows {out.dtype}: q, k and v are finite but reach "
        f"{largest:.1e} in size, so q·k, q·a^K or a weighted sum of v passes "
        f"{torch.finfo(out.dtype).max:.1e}, the largest {out.dtype} number; scale the inputs "
        "down, or pass float64"
    )


def _dropout(
    p: float, generator: torch.Generator | None
) -> Callable[[torch.Tensor], torch.Tensor] | None:
    if p == 0:
        return None

    def drop(weights: torch.Tensor) -> torch.Tensor:
        where = generator.device if generator is not None else weights.device
        u = torch.rand(weights.shape, generator=generator, dtype=weights.dtype, device=where)
        return weights * (u.to(weights.device) >= p) / (1.0 - p)

    return drop
