"""A per-request memory budget: estimate what a computation will hold, refuse it before it runs.

The explorer runs on a shared server: every session's reruns compute in one process. Each
computation first asks :func:`plan_compute` for a :class:`Plan`; over the budget it gets a
``ValueError`` that names the parameters, their values, the estimate and the budget, and nothing
is allocated.

Why 256 MiB: a Streamlit Community Cloud app gets at most about 2.7 GB of memory; the server
process with torch, plotly and streamlit loaded holds about 0.35 GB once it has drawn a page.
Eight sessions computing at once at 256 MiB each add 2 GiB: about 2.5 GB in all, under the limit.

The estimate (float32), for ``rows`` query rows of a length-n sequence, reads the method's own
memory model in ``relpos_core.methods`` (the skew always runs all n rows):

    intermediate   method.position_bytes(rows, n, ...)   a^K, Er, Q w^T ... (Huang's comparison)
    working        method.working_bytes(rows, n, ...)    its index, skew copies, banded block
    kept           traces * (b, h, rows, n) float32      logits, weights ... that the caller keeps
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from explorer.frame.memory import admit
from relpos_core import METHOD_NAMES, format_bytes, get_method
from relpos_core.validation import check_choice, check_int

REQUEST_BUDGET_BYTES = 256 * 2**20  # 256 MiB per computation (see the module docstring)
BASELINE_METHODS = ("sdpa", "plain")  # attention without relative terms: no intermediate
BUDGET_METHODS = (*METHOD_NAMES, *BASELINE_METHODS)
FLOAT32 = 4


@dataclass(frozen=True)
class Plan:
    """A computation that fits: what it is, its sizes, its estimate and the budget it fits in."""

    what: str
    method: str
    n: int
    rows: int
    d: int
    heads: int
    batch: int
    k: int
    traces: int
    bytes: int
    budget: int


def estimate_bytes(
    method: str,
    n: int,
    d: int,
    heads: int = 1,
    batch: int = 1,
    *,
    k: int,
    causal: bool = False,
    rows: int | None = None,
    traces: int = 1,
) -> int:
    """Peak bytes of ``method`` for query rows ``rows`` (default n) of n, keeping ``traces``
    (b, h, rows, n) float32 tensors. See the module docstring for the formula.

    >>> estimate_bytes("bucket", 4, 2, k=1, traces=1)  # Q w^T 4*3*4 + index 16*8 + kept 16*4
    240
    """
    method = check_choice("method", method, BUDGET_METHODS)
    n = check_int("n (sequence length)", n, 1)
    d = check_int("d (head dim)", d, 1)
    heads = check_int("heads", heads, 1)
    batch = check_int("batch", batch, 1)
    k = check_int("k (clip distance)", k, 0)
    rows = n if rows is None or method == "skew" else check_int("rows", rows, 1, n)
    traces = check_int("traces", traces, 0)
    bh = batch * heads
    intermediate = 0
    if method not in BASELINE_METHODS:
        chosen = get_method(method)
        intermediate = chosen.position_bytes(rows, n, d, bh, k, causal) * FLOAT32
        intermediate += chosen.working_bytes(rows, n, d, bh, k, FLOAT32)
    kept = traces * bh * rows * n * FLOAT32
    return intermediate + kept


def plan_compute(
    what: str,
    method: str,
    n: int,
    d: int,
    heads: int = 1,
    batch: int = 1,
    *,
    k: int,
    causal: bool = False,
    rows: int | None = None,
    traces: int = 1,
    budget: int = REQUEST_BUDGET_BYTES,
) -> Plan:
    """A :class:`Plan` if ``method`` fits in ``budget``; else ``ValueError`` naming the values.

    >>> plan_compute("demo", "banded", 4096, 64, 8, k=16, traces=0).bytes < REQUEST_BUDGET_BYTES
    True
    >>> plan_compute("demo", "einsum", 2048, 512, k=16)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: demo: method 'einsum' with n (sequence length) = 2048, d (head dim) = 512, ...
    """
    need = estimate_bytes(method, n, d, heads, batch, k=k, causal=causal, rows=rows, traces=traces)
    rows = n if rows is None or method == "skew" else rows
    if need > budget:
        raise ValueError(
            f"{what}: method {method!r} with n (sequence length) = {n}, d (head dim) = {d}, "
            f"heads = {heads}, batch = {batch}, k = {k}"
            + (f", {rows} query rows" if rows != n else "")
            + f" needs about {format_bytes(need)}, more than the per-request memory budget of "
            f"{format_bytes(budget)}; choose a smaller n"
        )
    admit(what, need)  # and within what the whole process may still use
    return Plan(what, method, n, rows, d, heads, batch, k, traces, need, budget)


def largest_n(
    method: str,
    d: int,
    heads: int = 1,
    batch: int = 1,
    *,
    k: int,
    causal: bool = False,
    traces: int = 1,
    budget: int = REQUEST_BUDGET_BYTES,
    n_max: int = 2**20,
) -> int:
    """The largest n <= ``n_max`` whose estimate fits in ``budget`` (0 if not even n = 1).

    >>> largest_n("einsum", 512, k=16)  # n^2 * (2048 + 8 + 4) bytes <= 256 MiB
    360
    """

    def fits(n: int) -> bool:
        need = estimate_bytes(method, n, d, heads, batch, k=k, causal=causal, traces=traces)
        return need <= budget

    return largest_fitting(fits, 0, n_max)


def largest_fitting(fits: Callable[[int], bool], low: int, high: int) -> int:
    """The largest x in [low, high] with ``fits(x)``, by bisection; ``fits`` must hold up to
    some x and fail beyond (an estimate that grows with x). Returns ``low`` when nothing above
    it fits.

    >>> largest_fitting(lambda x: x * x <= 50, 0, 100)
    7
    """
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def plan_scheme(
    what: str,
    scheme,
    n_q: int,
    n_k: int,
    *,
    traces: int = 0,
    budget: int = REQUEST_BUDGET_BYTES,
) -> int:
    """The bytes a position scheme (``relpos_core.schemes``) needs for n_q queries over n_k
    keys, by its own ``logit_bytes``, plus ``traces`` kept (h, n_q, n_k) float32 tensors;
    ``ValueError`` naming the values when that is over ``budget``.

    >>> from relpos_core.schemes import make_scheme
    >>> alibi = make_scheme("alibi", heads=1, head_dim=4)
    >>> plan_scheme("demo", alibi, 2, 2)  # 4 cells x (2 terms + 2) x 4 B + 4 int64 distances
    96
    """
    need = scheme_bytes(scheme, n_q, n_k, traces)
    if need > budget:
        raise ValueError(
            f"{what}: the {scheme.name} scheme with heads = {scheme.heads}, head dim = "
            f"{scheme.head_dim}, {n_q} queries over n (keys) = {n_k} needs about "
            f"{format_bytes(need)}, more than the per-request memory budget of "
            f"{format_bytes(budget)}; choose a smaller n"
        )
    admit(what, need)
    return need


def rows_within_budget(
    scheme, n_k: int, rows_max: int, *, traces: int = 0, budget: int = REQUEST_BUDGET_BYTES
) -> int:
    """The most query rows (at most ``rows_max``, at least 1) over n_k keys that fit ``budget``
    by :func:`plan_scheme`'s estimate; a block of 1 row may still be refused by it."""
    return largest_fitting(
        lambda rows: scheme_bytes(scheme, rows, n_k, traces) <= budget, 1, max(1, rows_max)
    )


def scheme_bytes(scheme, n_q: int, n_k: int, traces: int = 0) -> int:
    """A scheme's own ``logit_bytes`` for n_q queries over n_k keys (batch 1), plus ``traces``
    kept (h, n_q, n_k) float32 tensors."""
    return scheme.logit_bytes(n_q, n_k) + traces * scheme.heads * n_q * n_k * FLOAT32
