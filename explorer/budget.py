"""A per-request memory budget: estimate what a computation will hold, refuse it before it runs.

The explorer runs on a shared server: every session's reruns compute in one process. Each
computation first asks :func:`plan_compute` for a :class:`Plan`; over the budget it gets a
``ValueError`` that names the parameters, their values, the estimate and the budget, and nothing
is allocated.

Why 256 MiB: a Streamlit Community Cloud app gets at most about 2.7 GB of memory; the server
process with torch, plotly and streamlit loaded holds about 0.35 GB once it has drawn a page.
Eight sessions computing at once at 256 MiB each add 2 GiB: about 2.5 GB in all, under the limit.

The estimate (float32, ``bytes_per_value`` = 4), for ``rows`` query rows of a length-n sequence:

    intermediate   memory_bytes(method, ...)          for ``rows`` rows (einsum, matmul, bucket)
                   + 3 (b, h, n, 2n) copies           skew: Q Er^T, padded, flattened and padded
    index          rows * n int64                     bucket, einsum, matmul: clip(j - i, k) + k
    kept           traces * (b, h, rows, n) float32   logits, weights ... that the caller keeps
"""

from __future__ import annotations

from dataclasses import dataclass

from relpos_core.checks import check_choice, check_int
from relpos_core.memory import MEMORY_METHODS, memory_bytes

REQUEST_BUDGET_BYTES = 256 * 2**20  # 256 MiB per computation (see the module docstring)
BASELINE_METHODS = ("sdpa", "plain")  # attention without relative terms: no intermediate
BUDGET_METHODS = (*MEMORY_METHODS, *BASELINE_METHODS)
SKEW_COPIES = 3  # (b, h, n, 2n)-sized tensors the skew holds: input, padded, flattened + pad
INDEX_BYTES = 8  # int64


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


def format_bytes(count: int) -> str:
    """Binary units, one decimal.

    >>> format_bytes(256 * 2**20), format_bytes(3 * 2**30), format_bytes(1536)
    ('256.0 MiB', '3.0 GiB', '1.5 KiB')
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


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
    intermediate = 0
    if method in ("einsum", "matmul"):
        intermediate = rows * n * d * 4  # a^K for the rows computed, (rows, n, d)
    elif method == "bucket":
        intermediate = memory_bytes(method, rows, d, heads, batch, k=k)  # Q w^T, (b,h,rows,2k+1)
    elif method in MEMORY_METHODS:
        intermediate = memory_bytes(method, n, d, heads, batch, k=k, causal=causal)
    if method == "skew":
        intermediate += SKEW_COPIES * batch * heads * n * 2 * n * 4
    index = rows * n * INDEX_BYTES if method in ("bucket", "einsum", "matmul") else 0
    kept = traces * batch * heads * rows * n * 4
    return intermediate + index + kept


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
            f"{format_bytes(budget)}; choose a smaller n, d or number of heads"
        )
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

    low, high = 0, n_max  # fits(low) or low == 0; the estimate grows with n
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low
