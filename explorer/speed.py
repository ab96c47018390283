"""The Speed & memory page's glue: memory curves from ``memory_bytes``, a bounded live benchmark.

Memory curves are formulas, so they are cached like every other view. Timings are measurements
of this server at this moment: they are never cached across sessions; the page keeps them in the
session's own state.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from explorer.budget import plan_compute
from explorer.controls import md_escape
from relpos_core import logits_bytes, memory_bytes
from relpos_lab import bench

MEMORY_NS = 2 ** np.arange(4, 17)  # n = 16 .. 65536
BENCH_NS = (16, 32, 64, 128, 256, 512, 1024, 2048)  # sizes the button may run
BENCH_REPEATS_MAX = 5
BENCH_SECONDS = 12.0  # wall-clock cap of one click: later (method, n) pairs are skipped
#: (b, h, n, n) float32 tensors each benchmarked call holds at its peak (see relpos_core.attention):
#: SDPA's CPU kernel and "banded" work in blocks; "plain" keeps logits and weights; the other
#: methods also build the relative term.
BENCH_SQUARES = {"sdpa": 0, "plain": 2, "banded": 0}
BENCH_SQUARES_DEFAULT = 3
MUSIC_TRANSFORMER = {"n": 2048, "d": 512}  # Huang et al. 2018, Sec. 3.4.1


@st.cache_data(max_entries=16, show_spinner=False)
def memory_curves(d: int, heads: int, k: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Legend name -> (n, bytes) for every method's intermediate and the fp32 logits floor."""
    ns = MEMORY_NS.astype(np.float64)
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for method in ("einsum", "matmul", "skew", "bucket", "banded", "loop"):
        values = [
            memory_bytes(method, int(n), d, heads, max_relative_position=k) for n in MEMORY_NS
        ]
        curves[method] = (ns, np.array(values, dtype=np.float64))
    causal = [memory_bytes("skew", int(n), d, heads, causal=True) for n in MEMORY_NS]
    curves["skew (causal)"] = (ns, np.array(causal, dtype=np.float64))
    floor = [logits_bytes(int(n), heads) for n in MEMORY_NS]
    curves["fp32 logits (b, h, n, n)"] = (ns, np.array(floor, dtype=np.float64))
    return curves


def music_transformer_points() -> list[tuple[str, float, float]]:
    """(label, n, bytes): the materialized a^K and the causal skew's Er at L = 2048, D = 512."""
    n, d = MUSIC_TRANSFORMER["n"], MUSIC_TRANSFORMER["d"]
    a_k = memory_bytes("einsum", n, d)
    e_r = memory_bytes("skew", n, d, causal=True)
    return [
        (f"Music Transformer a^K: {a_k / 1e9:.1f} GB", n, a_k),
        (f"Music Transformer skew Er: {e_r / 1e6:.1f} MB", n, e_r),
    ]


def bench_squares(method: str) -> int:
    return BENCH_SQUARES.get(method, BENCH_SQUARES_DEFAULT)


@dataclass(frozen=True)
class Refusal:
    method: str
    n: int
    message: str


def plan_benchmark(
    methods: tuple[str, ...], ns: tuple[int, ...], d: int, heads: int, k: int
) -> tuple[list[tuple[str, int]], list[Refusal]]:
    """(method, n) pairs within the memory budget, and the refused ones with the reason."""
    allowed, refused = [], []
    for n in ns:
        for method in methods:
            try:
                plan_compute(
                    "benchmark", method, n, d, heads, k=k, causal=False,
                    traces=bench_squares(method),
                )  # fmt: skip
            except ValueError as error:
                refused.append(Refusal(method, n, str(error)))
            else:
                allowed.append((method, n))
    return allowed, refused


@dataclass
class BenchResult:
    """One click's measurements (kept in the session's state only)."""

    d: int
    heads: int
    k: int
    repeats: int
    rows: list[dict[str, object]] = field(default_factory=list)  # method, n, median_ms
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)  # over the time cap
    seconds: float = 0.0


@st.cache_resource(show_spinner=False)
def measurement_lock() -> threading.Lock:
    """One measurement at a time per server: two at once would only time each other."""
    return threading.Lock()


@contextlib.contextmanager
def exclusive_measurement() -> Iterator[bool]:
    """Yield True while holding the server's measurement lock, False if another session has it."""
    lock = measurement_lock()
    if not lock.acquire(blocking=False):
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def run_benchmark(
    methods: tuple[str, ...],
    ns: tuple[int, ...],
    d: int,
    heads: int,
    k: int,
    repeats: int,
    progress: Callable[[float, str], None],
    seconds: float = BENCH_SECONDS,
) -> BenchResult:
    """Median ms of ``repeats`` forward calls (after one warm-up) per allowed (method, n).

    Over-budget pairs are refused before any input is built; once ``seconds`` have passed, or
    when a method's next size would not fit in the time left (about 4x its last time per call,
    the n^2 growth), the remaining pairs are skipped.
    """
    repeats = max(1, min(BENCH_REPEATS_MAX, repeats))
    allowed, refused = plan_benchmark(methods, ns, d, heads, k)
    result = BenchResult(d, heads, k, repeats, refused=refused)
    start = time.perf_counter()
    last_ms: dict[str, float] = {}
    inputs_n, inputs = -1, None
    for done, (method, n) in enumerate(allowed):
        left = seconds - (time.perf_counter() - start)
        expected = 4 * last_ms.get(method, 0.0) * (repeats + 1) / 1e3
        if left <= 0 or expected > left:
            result.skipped.append((method, n))
            continue
        progress(done / max(1, len(allowed)), f"{method} at n = {n}")
        if n != inputs_n:
            inputs, inputs_n = bench.make_inputs(n, d, heads, k), n
        call = bench.runner(method, inputs)
        call()  # warm-up
        times = []
        for _ in range(repeats):
            tick = time.perf_counter()
            call()
            times.append(1e3 * (time.perf_counter() - tick))
        last_ms[method] = statistics.median(times)
        result.rows.append({"method": method, "n": n, "median_ms": last_ms[method]})
    progress(1.0, "done")
    result.seconds = time.perf_counter() - start
    return result


def refusal_text(refused: list[Refusal]) -> str:
    """One line per method: the sizes refused and the first reason."""
    by_method: dict[str, list[Refusal]] = {}
    for item in refused:
        by_method.setdefault(item.method, []).append(item)
    lines = []
    for method, items in by_method.items():
        sizes = ", ".join(str(item.n) for item in items)
        lines.append(f"- **{method}** refused at n = {sizes}: {md_escape(items[0].message)}")
    return "\n".join(lines)


def result_table(result: BenchResult) -> dict[str, list[str]]:
    """Columns for st.dataframe: method, then one column per n with the median ms as text, or
    why that size was not measured ("over budget", "time cap")."""
    cells: dict[tuple[str, int], str] = {}
    for row in result.rows:
        cells[(str(row["method"]), int(row["n"]))] = f"{float(row['median_ms']):.3g}"  # type: ignore[call-overload, arg-type]
    for item in result.refused:
        cells[(item.method, item.n)] = "over budget"
    for method, n in result.skipped:
        cells[(method, n)] = "time cap"
    methods = list(dict.fromkeys(m for m, _ in cells))
    ns = sorted({n for _, n in cells})
    table = {"method": methods}
    for n in ns:
        table[f"n = {n}"] = [cells.get((m, n), "") for m in methods]
    return table
