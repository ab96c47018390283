"""The Speed & memory page's glue: memory curves from ``memory_bytes``, a bounded live benchmark.

Memory curves are formulas, so they are cached like every other view. Timings are measurements
of this server at this moment: they are never cached across sessions; the page keeps them in the
session's own state.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.frame.budget import plan_compute
from explorer.frame.downloads import Labelled
from explorer.frame.memory import cached
from explorer.frame.widgets import md_escape
from relpos_core import logits_bytes, memory_bytes
from relpos_lab import bench

# what the page offers: the baselines and every relative method (the GPU rows need CUDA)
BENCH_METHODS = tuple(m for m in bench.METHODS if m not in bench.GPU_METHODS)

MEMORY_NS = 2 ** np.arange(4, 17)  # n = 16 .. 65536
BENCH_NS = (16, 32, 64, 128, 256, 512, 1024, 2048)  # sizes the button may run
BENCH_REPEATS_DEFAULT = 11  # enough for quartiles that say something
BENCH_REPEATS_MAX = 31
WARMUP_CALLS = 3  # at least this many untimed calls per method and n (first calls allocate) ...
WARMUP_SECONDS = 0.05  # ... and at least this long
BENCH_SECONDS = 15.0  # wall-clock cap of one click: later (method, n) pairs are skipped
WIDE_SPREAD = 0.5  # interquartile range above this fraction of the median: a noisy measurement
#: (b, h, n, n) float32 tensors each benchmarked call holds at its peak (see relpos_core.attention):
#: SDPA's CPU kernel and "banded" work in blocks; "plain" keeps logits and weights; the other
#: methods also build the relative term.
BENCH_SQUARES = {"sdpa": 0, "plain": 2, "banded": 0}
BENCH_SQUARES_DEFAULT = 3
MUSIC_TRANSFORMER = {"n": 2048, "d": 512}  # Huang et al. 2018, Sec. 3.4.1


# The loop's flat line is the least memory and the most time: say so where it is drawn.
MEMORY_LABELS = {"loop": "loop (one pair at a time: least memory, n² Python steps)"}


@cached(16)
def memory_curves(d: int, heads: int, k: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Legend name -> (n, bytes) for every method's intermediate and the fp32 logits floor."""
    ns = MEMORY_NS.astype(np.float64)
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for method in ("einsum", "matmul", "skew", "bucket", "banded", "loop"):
        values = [
            memory_bytes(method, int(n), d, heads, max_relative_position=k) for n in MEMORY_NS
        ]
        curves[MEMORY_LABELS.get(method, method)] = (ns, np.array(values, dtype=np.float64))
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


def noise_notes(result: BenchResult) -> list[str]:
    """Why these numbers may not be this machine's best: load, and wide spreads."""
    notes = []
    busy = max(result.load)
    if busy > result.cores:
        notes.append(
            f"The machine was busy: load average {busy:.1f} on {result.cores} core(s), so other "
            "work shared the CPU while this ran; the times are slower and noisier than usual."
        )
    wide = [
        f"{row['method']} at n = {row['n']}"
        for row in result.rows
        if float(row["q3_ms"]) - float(row["q1_ms"]) > WIDE_SPREAD * float(row["median_ms"])  # type: ignore[arg-type]
    ]
    if wide:
        listed = ", ".join(wide[:3]) + (f" and {len(wide) - 3} more" if len(wide) > 3 else "")
        notes.append(
            f"Wide spread (interquartile range above {WIDE_SPREAD:.0%} of the median) in "
            f"{len(wide)} of {len(result.rows)} measurements: {listed}. Compare methods only "
            "where their bars do not overlap, or measure again."
        )
    return notes


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
    """Columns for the results table: method, then one column per n with ``median (q1-q3)`` in ms,
    or why that size was not measured ("over budget", "time cap")."""
    cells: dict[tuple[str, int], str] = {}
    for row in result.rows:
        q1, median, q3 = (float(row[f]) for f in ("q1_ms", "median_ms", "q3_ms"))  # type: ignore[arg-type]
        cells[(str(row["method"]), int(row["n"]))] = f"{median:.3g} ({q1:.3g}-{q3:.3g})"  # type: ignore[call-overload]
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


def timing_curves(result: BenchResult) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Method -> (n, median ms) for the timing chart."""
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for row in result.rows:
        xs, ys = curves.setdefault(str(row["method"]), ([], []))
        xs.append(float(row["n"]))  # type: ignore[arg-type]
        ys.append(float(row["median_ms"]))  # type: ignore[arg-type]
    return {m: (np.array(x), np.array(y)) for m, (x, y) in curves.items()}


def add_spread_bars(fig: go.Figure, result: BenchResult) -> None:
    """Error bars from the first to the third quartile on each method's median curve."""
    for trace in fig.data:
        rows = [row for row in result.rows if row["method"] == trace.name]
        if not rows:
            continue
        median = np.array([float(r["median_ms"]) for r in rows])  # type: ignore[arg-type]
        trace.error_y = {
            "type": "data",
            "symmetric": False,
            "array": np.array([float(r["q3_ms"]) for r in rows]) - median,  # type: ignore[arg-type]
            "arrayminus": median - np.array([float(r["q1_ms"]) for r in rows]),  # type: ignore[arg-type]
            "thickness": 1.2,
            "width": 3,
        }


def download_arrays(
    curves: dict[str, tuple[np.ndarray, np.ndarray]], result: BenchResult | None
) -> dict[str, Labelled]:
    """The memory curves and this session's timings, labelled for explorer.frame.downloads."""
    names = list(curves)
    ns = next(iter(curves.values()))[0]
    arrays = {
        "memory_bytes": Labelled(
            np.stack([curves[name][1] for name in names], axis=1).astype(np.int64),
            "bytes of each method's position-dependent intermediate (memory_bytes)",
            rows=[str(int(n)) for n in ns],
            cols=names,
            corner="n \\ method",
        )
    }
    if result is not None and result.rows:
        fields = ("min_ms", "q1_ms", "median_ms", "q3_ms", "max_ms")
        arrays["timings_ms"] = Labelled(
            np.array([[float(row[f]) for f in fields] for row in result.rows]),  # type: ignore[arg-type]
            f"ms per forward pass over {result.repeats} repeats, load average "
            f"{result.load[0]:.1f} -> {result.load[1]:.1f} on {result.cores} core(s)",
            rows=[f"{row['method']} n={row['n']}" for row in result.rows],
            cols=list(fields),
            corner="method n \\ statistic",
        )
    return arrays
