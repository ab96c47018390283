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

from relpos_core.banded_attention import banded_attention
from relpos_core.checks import (
    all_finite,
    check_bool,
    check_generator,
    check_int,
    check_max_bytes,
    check_real,
    check_same_dtype,
    check_tensor,
    distinct_view,
)
from relpos_core.flex import flex_attention_relative
from relpos_core.guard import check_fits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.masks import combine_masks, mask_cells, masked_softmax, user_mask
from relpos_core.memory import attention_bytes
from relpos_core.methods import FLEX, METHOD_NAMES, choose_method, get_method
from relpos_core.precision import HALF_DTYPES, compute_itemsize, no_autocast, upcast
from relpos_core.regions import regions_apply
from relpos_core.trace import Trace

ATTENTION_METHODS = ("auto", *METHOD_NAMES)  # "auto": ``methods.choose_method``


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


def check_attention_inputs(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    finite: bool = True,
) -> None:
    """Shapes and dtypes of one call: q (b,h,n_q,d), k (b,h,n_k,d), v (b,h,n_k,d_v), tables.

    ``finite=False`` skips the pass over q, k and v that looks for NaN and inf (the tables,
    small, are always checked).
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, 4, finite=finite)
    for name, t in (("table_k", table_k), ("table_v", table_v)):
        check_tensor(name, t, 2)
    check_same_dtype(q=q, k=k, v=v, table_k=table_k, table_v=table_v)
    b, h, n_q, d = q.shape
    if n_q < 1 or d < 1:
        raise ValueError(
            f"q must hold at least one query and one channel (b, h, n_q >= 1, d >= 1), "
            f"got {tuple(q.shape)}"
        )
    if k.shape[:2] != (b, h) or k.shape[-1] != d:
        raise ValueError(
            f"k must have shape (b, h, n_k, d) = ({b}, {h}, n_k, {d}), got {tuple(k.shape)}"
        )
    if k.shape[2] < 1:
        raise ValueError(f"k must hold at least one key (n_k >= 1), got {tuple(k.shape)}")
    if v.shape[:3] != k.shape[:3] or v.shape[-1] < 1:
        raise ValueError(
            f"v must have shape (b, h, n_k, d_v) = ({b}, {h}, {k.shape[2]}, d_v >= 1), "
            f"got {tuple(v.shape)}"
        )
    kk = clip_distance_from_table(table_k, "table_k")
    if table_k.shape[1] != d:
        raise ValueError(
            f"table_k width must equal the head dim of q ({d}), got {tuple(table_k.shape)}"
        )
    if table_v.shape != (2 * kk + 1, v.shape[-1]):
        raise ValueError(
            f"table_v must have shape ({2 * kk + 1}, {v.shape[-1]}) (same k as table_k, "
            f"width = value dim), got {tuple(table_v.shape)}"
        )
    devices = {t.device for t in (q, k, v, table_k, table_v)}
    if len(devices) > 1:
        raise ValueError(
            f"q, k, v and the tables must be on one device, got {sorted(map(str, devices))}"
        )


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
    trace = check_bool("trace", trace)
    check_attention_inputs(q, k, v, table_k, table_v, finite=False)  # finite: after the guard
    causal = check_bool("causal", causal)
    return_weights = check_bool("return_weights", return_weights)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    dropout_p = check_real("dropout_p", dropout_p, 0, 1, high_open=True)
    generator = check_generator("generator", generator)
    max_bytes = check_max_bytes(max_bytes)
    if trace and (return_weights or dropout_p > 0):
        raise ValueError(
            "trace=True returns every step, the weights before any dropout included; "
            f"return_weights and dropout_p apply to trace=False (got return_weights="
            f"{return_weights}, dropout_p={dropout_p})"
        )
    b, h, n_q, d = q.shape
    n_k, d_v = v.shape[-2:]
    shape = (b, h, n_q, n_k)
    cells = mask_cells(mask, shape)  # checked, but converted only once the call fits
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v, table_k, table_v))
    if method == "auto":
        chosen = choose_method(
            n_q, n_k, query_offset, trace=trace, grad=grad, device=q.device,
            dropout=dropout_p > 0, weights=return_weights,
        )  # fmt: skip
    else:
        chosen = get_method(method)
        reason = chosen.unsupported(n_q, n_k, query_offset)
        if reason:
            raise ValueError(f"method {method!r} cannot run here: {reason}")
    kk = clip_distance_from_table(table_k)
    dtype = q.dtype
    need = attention_bytes(
        chosen, (b, h, n_q, n_k, d, d_v), kk, itemsize=compute_itemsize(dtype), trace=trace,
        return_weights=return_weights, grad=grad, causal=causal,
        mask_cells=cells, dropout=dropout_p > 0,
        region_split=chosen.name == "banded"
        and regions_apply(q, k, v, table_k, mask, causal, query_offset, dropout_p),
    )  # fmt: skip
    if dtype in HALF_DTYPES:  # the float32 copies of q, k, v
        need += 4 * (q.numel() + k.numel() + v.numel())
    check_fits(
        f"relative_attention with method {chosen.name!r}, q {tuple(q.shape)}, "
        f"k {tuple(k.shape)}, max_relative_position {kk}",
        need, max_bytes, q.device,
    )  # fmt: skip
    if trace:  # a pass over q, k and v, paid only for the step-by-step view
        for name, t in (("q", q), ("k", k), ("v", v)):
            check_tensor(name, t, 4)
    allowed = user_mask(mask, shape)  # bool, 4-D: every broadcastable rank on every path
    with no_autocast(q.device):  # float32 stays float32 inside, under torch.autocast too
        if chosen is FLEX:  # FlexAttention takes half inputs itself, statistics in float32
            return flex_attention_relative(
                q, k, v, table_k, table_v, allowed, causal, query_offset
            ).to(dtype)
        q, k, v, table_k, table_v = upcast(q, k, v, table_k, table_v)
        if chosen.fused and not trace and not (grad and return_weights):
            result = banded_attention(
                q, k, v, table_k, table_v, allowed, causal, query_offset,
                return_weights=return_weights, dropout_p=dropout_p, generator=generator,
            )  # fmt: skip
            if return_weights:
                out, weights = (t.to(dtype) for t in result)
                return check_finite_output(out, q, k, v), weights
            return check_finite_output(result.to(dtype), q, k, v)
        allowed = combine_masks(allowed, causal, shape, query_offset, max_bytes=max_bytes)
        steps = attend(
            q,
            k,
            v,
            chosen.key_term(q, table_k, n_k, query_offset),  # (b,h,i,j)
            allowed,
            lambda weights: chosen.value_term(weights, table_v, query_offset),
            dropout=_dropout(dropout_p, generator),
            max_bytes=max_bytes,
        )
    steps = {
        name: t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
        for name, t in steps.items()
    }  # the inputs' dtype out
    if trace:
        return AttentionTrace(**steps, query_offset=query_offset, method=chosen.name)
    out = check_finite_output(steps["output"], q, k, v)
    return (out, steps["weights"]) if return_weights else out


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
