"""Relation-aware self-attention (Shaw et al. 2018, eqs. 2-4): the one attention call.

e_ij     = (q_i · k_j + q_i · a^K_ij) / sqrt(d)
alpha_ij = softmax_j(e_ij)        over the keys the mask allows
z_i      = sum_j alpha_ij v_j  +  sum_j alpha_ij a^V_ij

``relative_attention(..., trace=True)`` returns every step as a frozen ``AttentionTrace`` (for
the explorer); ``trace=False`` returns only the output (and the weights if asked), as fast as the
method allows, with gradients. Both run the same registered method's key and value terms.

float16 and bfloat16 inputs are computed in float32 and the results returned in their dtype
(``relpos_core.precision``); autocast is off inside.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from relpos_core.admission import AttentionCall, admit_call, check_attention_inputs
from relpos_core.banded_attention import banded_attention
from relpos_core.flex import flex_attention_relative
from relpos_core.masks import combine_masks, masked_softmax
from relpos_core.methods import FLEX, METHOD_NAMES, TRITON
from relpos_core.precision import no_autocast, upcast
from relpos_core.trace import Trace
from relpos_core.triton_attention import triton_attention
from relpos_core.validation import all_finite, distinct_view

ATTENTION_METHODS = ("auto", *METHOD_NAMES)  # "auto": ``methods.choose_method``
__all__ = [
    "ATTENTION_METHODS",
    "AttentionTrace",
    "attend",
    "check_attention_inputs",
    "check_finite_output",
    "relative_attention",
]


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


def relative_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    query_offset: int = 0,
    method: str = "auto",
    trace: bool = False,
    return_weights: bool = False,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
    max_bytes: int | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor] | AttentionTrace:
    """Relative attention: q (b,h,n_q,d), k (b,h,n_k,d), v (b,h,n_k,d_v), tables (2k+1, d) and
    (2k+1, d_v) with k = max_relative_position -> z (b, h, n_q, d_v).

    mask            bool, or 0/1 numbers, broadcastable to (b, h, n_q, n_k) from any rank 0-4
                    (a key mask (n_k,), a (n_q, n_k) pattern, ...); True = attend.
    causal          query i sees keys j <= i (positions, so with the offset below).
    query_offset    position of query row 0 among the keys: 0 for self-attention; n_k - n_q for
                    tensor2tensor's convention (queries at the last positions, as when decoding
                    with a key/value cache); any row block of a longer sequence.
    method          a registered method or "auto" (``methods.choose_method``): all are exact.
                    "triton": the fused Triton kernel (``triton_attention``; CUDA, or a CPU
                    under TRITON_INTERPRET=1), which "auto" takes on CUDA where it applies;
                    ``admission.which_method`` says what runs and why.
    trace           True: an ``AttentionTrace`` of every step. False: z, or (z, alpha) with
                    ``return_weights``, holding no (b, h, n_q, n_k) tensor on the banded path
                    (with or without gradients) unless the weights are asked for.
    dropout_p       dropout on the weights (training); from ``generator`` or the global RNG.
    max_bytes       refuse (ValueError, with the estimate) a call whose estimated peak memory
                    (``memory.attention_bytes``, with the backward when q, k, v or a table
                    needs gradients) is above this int; None: the device's total memory. Pass
                    a larger number to run a method the estimate thinks too big for the machine.

    A query with no key to attend to gets zero weights and a zero output (not NaN). With
    ``trace=True`` a NaN or inf in q, k or v is refused; the fast path lets it propagate, as
    torch's own attention does, rather than pay a pass over the inputs. Finite inputs whose
    logits overflow the dtype are refused in words on both paths (on a CPU: a GPU is not
    waited for to look).

    >>> q = k = v = torch.zeros(1, 1, 2, 1)
    >>> w = torch.zeros(3, 1)
    >>> relative_attention(q, k, v, w, w, causal=True, trace=True).weights[0, 0]
    tensor([[1.0000, 0.0000],
            [0.5000, 0.5000]])
    >>> relative_attention(q[:, :, 1:], k, v, w, w, query_offset=1, causal=True).shape
    torch.Size([1, 1, 1, 1])
    """
    call = admit_call(
        q, k, v, table_k, table_v, mask=mask, causal=causal, query_offset=query_offset,
        method=method, trace=trace, return_weights=return_weights, dropout_p=dropout_p,
        generator=generator, max_bytes=max_bytes,
    )  # fmt: skip
    with no_autocast(q.device):  # float32 stays float32 inside, under torch.autocast too
        if call.fast:  # one kernel, no step kept: FlexAttention, or the fused banded loop
            out, weights = _fast(call, q, k, v, table_k, table_v)
        else:  # eqs. 2-4 step by step: the method's key term, the softmax, its value term
            steps = _steps(call, q, k, v, table_k, table_v)
            if call.trace:
                return AttentionTrace(**steps, query_offset=query_offset, method=call.method.name)
            out, weights = check_finite_output(steps["output"], q, k, v), steps["weights"]
    return (out, weights) if call.return_weights else out


def _fast(
    call: AttentionCall, q, k, v, table_k, table_v
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(z, alpha or None) from one kernel, in the inputs' dtype."""
    dtype = q.dtype
    if call.method is TRITON:  # half inputs into the kernel, statistics and output sums in fp32
        out = triton_attention(q, k, v, table_k, table_v, call.causal, call.query_offset)
        return check_finite_output(out, q, k, v), None  # in words on a CPU (the interpreter)
    if call.method is FLEX:  # FlexAttention takes half inputs itself, statistics in float32
        out = flex_attention_relative(
            q, k, v, table_k, table_v, call.allowed, call.causal, call.query_offset
        )
        return out.to(dtype), None
    q, k, v, table_k, table_v = upcast(q, k, v, table_k, table_v)
    result = banded_attention(
        q, k, v, table_k, table_v, call.allowed, call.causal, call.query_offset,
        return_weights=call.return_weights, dropout_p=call.dropout_p, generator=call.generator,
    )  # fmt: skip
    out, weights = result if call.return_weights else (result, None)
    out = check_finite_output(out.to(dtype), q, k, v)
    return out, None if weights is None else weights.to(dtype)


def _steps(call: AttentionCall, q, k, v, table_k, table_v) -> dict[str, object]:
    """Every step of eqs. 2-4 with the chosen method's key and value terms, computed in
    float32 or float64 and returned in the inputs' dtype."""
    dtype, n_k = q.dtype, k.shape[2]
    q, k, v, table_k, table_v = upcast(q, k, v, table_k, table_v)
    allowed = combine_masks(
        call.allowed, call.causal, call.shape, call.query_offset, max_bytes=call.max_bytes
    )
    method, offset = call.method, call.query_offset
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
    return {
        name: t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
        for name, t in steps.items()
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
