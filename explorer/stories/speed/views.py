"""The Speed & memory page's glue: memory curves from ``memory_bytes``, and a live benchmark's
result (``benchmark``) read out as words, a table, curves and a download.

Memory curves are formulas, so they are cached like every other view. Timings are measurements
of this server at this moment: they are never cached across sessions; the page keeps them in the
session's own state.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from explorer.frame.downloads import Labelled
from explorer.frame.memory import cached
from explorer.frame.widgets import md_escape
from explorer.stories.speed.benchmark import BenchResult, Refusal
from relpos_core import logits_bytes, memory_bytes

MEMORY_NS = 2 ** np.arange(4, 17)  # n = 16 .. 65536
WIDE_SPREAD = 0.5  # interquartile range above this fraction of the median: a noisy measurement
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
    """(label, n, bytes): the materialized a^K and the causal skew's Er at n = 2048 and
    d_model = 512 (the paper's width, every head together)."""
    n, d = MUSIC_TRANSFORMER["n"], MUSIC_TRANSFORMER["d"]
    a_k = memory_bytes("einsum", n, d)
    e_r = memory_bytes("skew", n, d, causal=True)
    return [
        (f"Music Transformer a^K: {a_k / 1e9:.1f} GB", n, a_k),
        (f"Music Transformer skew Er: {e_r / 1e6:.1f} MB", n, e_r),
    ]


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
