"""Which method runs, and why: decided in one function, ``pick_method``.

A call names a method or asks for "auto". Either way the answer is one object with one way to
run: a ``Method`` (the definition step by step around its two terms) or a ``Kernel`` (the whole
attention in one pass). A method with a kernel runs it when the call keeps no step: no trace,
and no weights that need gradients (``fused_or_steps``). ``admission.which_method`` reports the
decision without running it.
"""

from __future__ import annotations

import torch

from relpos_core.methods.base import Kernel, Method
from relpos_core.methods.exact import Banded, Bucket, Einsum, Loop, Matmul, Skew
from relpos_core.methods.flex import flex_available
from relpos_core.methods.kernels import FLEX, TRITON
from relpos_core.methods.triton_attention import triton_unsupported
from relpos_core.validation import check_bool, check_device, check_int

METHODS: dict[str, Method] = {
    m.name: m for m in (Loop(), Einsum(), Matmul(), Skew(), Bucket(), Banded())
}
METHOD_NAMES = tuple(METHODS)
AUTO_ORDER = ("banded", "bucket", "skew", "einsum", "matmul", "loop")  # fastest first
ASKABLE = ("auto", *METHOD_NAMES, "triton")  # what ``relative_attention(method=...)`` takes


def get_method(name: object) -> Method:
    """The registered method called ``name`` (ValueError naming the choices otherwise)."""
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(f"method must be one of auto, {', '.join(METHOD_NAMES)}; got {name!r}")
    return METHODS[name]


def pick_method(
    asked: str, q: torch.Tensor, v: torch.Tensor, query_offset: int, *,
    grad: bool, masked: bool, trace: bool, weights: bool, dropout: bool,
) -> tuple[Method | Kernel, str]:  # fmt: skip
    """(what runs, why) for a call asking for ``asked`` with q (b,h,n_q,d), v (b,h,n_k,d_v).

    By name: that method (a ValueError where it cannot run these shapes). "auto": the Triton
    kernel on CUDA where it applies, outside a compiled graph; else ``choose_method``'s answer.
    Then a method with a kernel runs the kernel when the call keeps no step."""
    if asked not in ASKABLE:
        raise ValueError(f"method must be one of {', '.join(ASKABLE)}; got {asked!r}")
    n_q, n_k = q.shape[2], v.shape[2]
    asks = dict(masked=masked, trace=trace, weights=weights, dropout=dropout)
    if asked == "auto":
        reason = triton_unsupported(q, v, **asks)
        if reason is None and torch.compiler.is_compiling():  # FlexAttention traces into it
            reason = "a torch.compile graph keeps FlexAttention's path, which traces into it"
        if q.device.type == "cuda" and reason is None:
            return TRITON, "the Triton kernel: CUDA, and nothing it does not cover"
        if q.device.type != "cuda":
            reason = f"the Triton kernel runs on CUDA under auto, got a {q.device.type} tensor"
        chosen = choose_method(
            n_q, n_k, query_offset, trace=trace, grad=grad, device=q.device, dropout=dropout,
            weights=weights,
        )  # fmt: skip
        why = f"not the Triton kernel: {reason}"
    else:
        chosen = TRITON if asked == "triton" else get_method(asked)
        why = "asked by name"
        if chosen is TRITON:
            reason = triton_unsupported(q, v, **asks)
        else:
            reason = chosen.unsupported(n_q, n_k, query_offset)
        if reason:
            raise ValueError(f"method {asked!r} cannot run here: {reason}")
    return fused_or_steps(chosen, trace=trace, grad=grad, weights=weights), why


def fused_or_steps(
    chosen: Method | Kernel, *, trace: bool, grad: bool, weights: bool
) -> Method | Kernel:
    """A method's kernel where it has one and the call keeps no step (no trace, and no
    returned weights that autograd must differentiate); else ``chosen`` itself."""
    kernel = chosen.kernel if isinstance(chosen, Method) else None
    if kernel is not None and not trace and not (grad and weights):
        return kernel
    return chosen


def choose_method(
    n_q: int,
    n_k: int,
    query_offset: int = 0,
    *,
    trace: bool = False,
    grad: bool = False,
    device: torch.device | str | None = None,
    dropout: bool = False,
    weights: bool = False,
) -> Method | Kernel:
    """What "auto" runs short of the Triton kernel (which needs the dtype, head sizes and mask
    this does not see): on CUDA the fast call (no ``trace``, ``dropout`` or returned
    ``weights``) runs ``FLEX``, banded's kernel there, whose launches do not grow with n; else
    the first method of AUTO_ORDER that can do what is asked.

    Measured on a 2-core CPU (``python -m relpos_lab.bench``), banded is the fastest exact
    method at every n tried and the least memory-hungry, and it supports every shape, offset,
    trace and gradient, so it is the answer today; the scan keeps "auto" honest if a method
    with limits is ever put first.

    >>> choose_method(1024, 1024).name, choose_method(1024, 1024, device="cuda").name
    ('banded', 'flex')
    """
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    trace, grad, dropout, weights = (
        check_bool(name, value)
        for name, value in (
            ("trace", trace),
            ("grad", grad),
            ("dropout", dropout),
            ("weights", weights),
        )
    )
    device = check_device("device", device)
    if flex_available(torch.device("cpu") if device is None else device):
        if not (trace or dropout or weights):
            return FLEX
    for name in AUTO_ORDER:
        method = METHODS[name]
        if method.unsupported(n_q, n_k, query_offset) is None:
            if (method.can_trace or not trace) and (method.has_grad or not grad):
                return method
    raise AssertionError("the loop definition supports everything")
