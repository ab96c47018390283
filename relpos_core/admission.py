"""One attention call, checked and admitted before any work: every argument in its range, the
method chosen (``methods.pick_method``), and the call's estimated peak memory within the limit
(``guard.check_fits``).

``relative_attention`` asks :func:`admit_call` first and then runs the chosen method.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from relpos_core.guard import check_fits
from relpos_core.lookup import clip_distance_from_table
from relpos_core.masks import mask_cells, user_mask
from relpos_core.memory import attention_bytes
from relpos_core.methods import BANDED, Kernel, Method, pick_method
from relpos_core.methods.regions import regions_apply
from relpos_core.precision import HALF_DTYPES, compute_itemsize
from relpos_core.validation import (
    check_bool,
    check_generator,
    check_int,
    check_max_bytes,
    check_real,
    check_same_dtype,
    check_tensor,
)


@dataclass(frozen=True)
class AttentionCall:
    """A call's checked arguments and what runs it: a method step by step, or a kernel."""

    method: Method | Kernel
    allowed: torch.Tensor | None  # the caller's mask, bool and 4-D (None: every key)
    shape: tuple[int, int, int, int]  # (b, h, n_q, n_k)
    causal: bool
    query_offset: int
    trace: bool
    return_weights: bool
    dropout_p: float
    generator: torch.Generator | None
    max_bytes: int | None
    why: str  # why this method: the name asked for, or what "auto" weighed

    def answer(self, out: torch.Tensor, weights: torch.Tensor | None):
        """What ``relative_attention`` returns without a trace: z, or (z, alpha) if asked."""
        return (out, weights) if self.return_weights else out


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


def admit_call(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    *,
    mask: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    method: str,
    trace: bool,
    return_weights: bool,
    dropout_p: float,
    generator: torch.Generator | None,
    max_bytes: int | None,
) -> AttentionCall:
    """``relative_attention``'s arguments checked (a ValueError naming the argument, its range
    and its value), its method chosen, and its memory admitted: a call whose estimate is above
    ``max_bytes`` (None: the device's memory) is refused before it allocates."""
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
    asked = dict(masked=mask is not None, trace=trace, weights=return_weights,
                 dropout=dropout_p > 0)  # fmt: skip
    chosen, why = pick_method(method, q, v, query_offset, grad=grad, **asked)
    kk = clip_distance_from_table(table_k)
    need = attention_bytes(
        chosen, (b, h, n_q, n_k, d, d_v), kk, itemsize=compute_itemsize(q.dtype), trace=trace,
        return_weights=return_weights, grad=grad, causal=causal,
        mask_cells=cells, dropout=dropout_p > 0,
        region_split=chosen is BANDED
        and regions_apply(q, k, v, table_k, mask, causal, query_offset, dropout_p),
    )  # fmt: skip
    if q.dtype in HALF_DTYPES:  # the float32 copies of q, k, v
        need += 4 * (q.numel() + k.numel() + v.numel())
    check_fits(
        f"relative_attention with method {chosen.name!r}, q {tuple(q.shape)}, "
        f"k {tuple(k.shape)}, max_relative_position {kk}",
        need, max_bytes, q.device,
    )  # fmt: skip
    if trace:  # a pass over q, k and v, paid only for the step-by-step view
        for name, t in (("q", q), ("k", k), ("v", v)):
            check_tensor(name, t, 4)
    return AttentionCall(
        method=chosen,
        allowed=user_mask(mask, shape),  # bool, 4-D: every broadcastable rank on every path
        shape=shape,
        causal=causal,
        query_offset=query_offset,
        trace=trace,
        return_weights=return_weights,
        dropout_p=dropout_p,
        generator=generator,
        max_bytes=max_bytes,
        why=why,
    )


def which_method(q, k, v, table_k, table_v, **kwargs) -> tuple[str, str]:
    """(the method ``relative_attention`` runs for these arguments, why), without running it:
    what ``methods.pick_method`` decided, once the call is admitted.

    >>> q = torch.zeros(1, 1, 4, 16)
    >>> which_method(q, q, q, torch.zeros(3, 16), torch.zeros(3, 16))[1]
    'not the Triton kernel: the Triton kernel runs on CUDA under auto, got a cpu tensor'
    """
    defaults = dict(mask=None, causal=False, query_offset=0, method="auto", trace=False)
    defaults |= dict(return_weights=False, dropout_p=0.0, generator=None, max_bytes=None)
    call = admit_call(q, k, v, table_k, table_v, **{**defaults, **kwargs})
    return call.method.name, call.why
