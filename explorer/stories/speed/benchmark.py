"""The Speed & memory page's live benchmark: the (method, n) pairs within the memory budget,
timed round robin after a warm-up, under a wall-clock cap, one measurement per server at a time.

Timings are measurements of this server at this moment: they are never cached across sessions;
the page keeps a :class:`BenchResult` in the session's own state.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

from explorer.frame.budget import plan_compute
from relpos_lab import bench

# what the page offers: the baselines and every relative method (the GPU rows need CUDA)
BENCH_METHODS = tuple(m for m in bench.METHODS if m not in bench.GPU_METHODS)
BENCH_NS = (16, 32, 64, 128, 256, 512, 1024, 2048)  # sizes the button may run
BENCH_REPEATS_DEFAULT = 11  # enough for quartiles that say something
BENCH_REPEATS_MAX = 31
WARMUP_CALLS = 3  # at least this many untimed calls per method and n (first calls allocate) ...
WARMUP_SECONDS = 0.05  # ... and at least this long
BENCH_SECONDS = 15.0  # wall-clock cap of one click: later (method, n) pairs are skipped
#: (b, h, n, n) float32 tensors each benchmarked call holds at its peak (see relpos_core.attention):
#: SDPA's CPU kernel and "banded" work in blocks; "plain" keeps logits and weights; the other
#: methods also build the relative term.
BENCH_SQUARES = {"sdpa": 0, "plain": 2, "banded": 0}
BENCH_SQUARES_DEFAULT = 3


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
    """One click's measurements (kept in the session's state only).

    ``rows``: per (method, n) the min, quartiles and max in ms of ``repeats`` timed calls.
    ``load``: the 1-minute load average before and after; ``cores``: CPUs this process may use.
    """

    d: int
    heads: int
    k: int
    repeats: int
    rows: list[dict[str, object]] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[tuple[str, int]] = field(default_factory=list)  # over the time cap
    seconds: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    cores: int = 1


def spread(times_ms: list[float]) -> dict[str, float]:
    """min, q1, median, q3, max of some timings (quartiles as numpy's linear method).

    >>> spread([4.0, 1.0, 3.0, 2.0, 5.0])
    {'min_ms': 1.0, 'q1_ms': 2.0, 'median_ms': 3.0, 'q3_ms': 4.0, 'max_ms': 5.0}
    """
    q1, median, q3 = (float(v) for v in np.percentile(times_ms, [25, 50, 75]))
    return {"min_ms": min(times_ms), "q1_ms": q1, "median_ms": median, "q3_ms": q3,
            "max_ms": max(times_ms)}  # fmt: skip


def load_average() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


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
    """The spread of ``repeats`` forward calls per allowed (method, n), after a warm-up.

    At each n the methods take turns call by call (round robin), so a burst of other work
    slows them alike instead of one method. Over-budget pairs are refused before any input is
    built; a method whose next size would not fit in the time left (about 4x its last time
    per call, the n^2 growth) is skipped, as is everything once ``seconds`` have passed.
    """
    repeats = max(1, min(BENCH_REPEATS_MAX, repeats))
    allowed, refused = plan_benchmark(methods, ns, d, heads, k)
    result = BenchResult(d, heads, k, repeats, refused=refused, cores=usable_cores())
    load_before = load_average()
    start = time.perf_counter()
    last_ms: dict[str, float] = {}
    sizes = list(dict.fromkeys(n for _, n in allowed))
    for done, n in enumerate(sizes):
        left = seconds - (time.perf_counter() - start)
        here = []
        for method in (m for m, size in allowed if size == n):
            expected = 4 * last_ms.get(method, 0.0) * (repeats + WARMUP_CALLS) / 1e3
            if left <= 0 or expected > left:
                result.skipped.append((method, n))
            else:
                here.append(method)
                left -= expected
        if not here:
            continue
        progress(done / len(sizes), f"n = {n}: " + ", ".join(here))
        inputs = bench.make_inputs(n, d, heads, k)
        calls = {method: bench.runner(method, inputs) for method in here}
        for call in calls.values():
            _warm_up(call)
        times: dict[str, list[float]] = {method: [] for method in here}
        for _ in range(repeats):
            for method, call in calls.items():
                tick = time.perf_counter()
                call()
                times[method].append(1e3 * (time.perf_counter() - tick))
        for method in here:
            stats = spread(times[method])
            last_ms[method] = stats["median_ms"]
            result.rows.append({"method": method, "n": n, **stats})
    progress(1.0, "done")
    result.seconds = time.perf_counter() - start
    result.load = (load_before, load_average())
    result.rows.sort(key=lambda row: (methods.index(str(row["method"])), int(row["n"])))  # type: ignore[call-overload]
    return result


def _warm_up(call: Callable[[], object]) -> None:
    """Untimed calls: at least WARMUP_CALLS and at least WARMUP_SECONDS."""
    start = time.perf_counter()
    calls = 0
    while calls < WARMUP_CALLS or time.perf_counter() - start < WARMUP_SECONDS:
        call()
        calls += 1
