"""Measure each method's peak memory against the estimate the guard trusts (``attention_bytes``).

    python -m scripts.measure_memory                       # the table: n = 64 .. 1024
    python -m scripts.measure_memory --n 256 2048 --heads 8 --d 64 --k 16
    python -m scripts.measure_memory --sweep               # many shapes, modes, masks, dtypes
    python -m scripts.measure_memory --json out.json

How the peak is measured: torch's CPU allocator reports every allocation and every free to the
profiler (``torch.profiler.profile(profile_memory=True)``) as a "[memory]" event with its signed
size. Summing those events in time order gives the bytes of tensor storage live at each moment
of the call; the largest sum is the peak growth over what was live before it (the inputs).
That is the quantity the estimate models, and it is exact and repeatable: it does not depend on
how malloc reuses pages, on what else runs on the machine, or on timing. The resident set
(``VmHWM`` in a child process, what ``relpos_lab.bench`` reads) counts pages instead, so it
reads low when a freed buffer is reused and high when the allocator keeps freed memory, and
it moves with the machine's load. What the profiler cannot see is memory allocated outside
torch's allocator (BLAS packing buffers, Python objects): kilobytes to a few MiB, which the
estimates do not try to model.

Each case runs once at n = 8 first (lazy initialisation is not the method's memory), then once
under the profiler with fresh inputs. "train" is forward and backward with respect to q, k, v
and both tables, the gradients of the inputs included; the output's gradient is made before.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import platform
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch.profiler import ProfilerActivity, profile

from relpos_core import METHOD_NAMES, attention_bytes, get_method, relative_attention

MODES = ("forward", "train", "trace", "weights", "train+weights", "train+trace")
TABLE_METHODS = ("banded", "bucket", "skew", "einsum", "matmul")


@dataclass(frozen=True)
class Case:
    """One call: shapes, clip distance, mode, mask ("none", "key" (n_k,) floats, "full" bools)."""

    method: str
    b: int
    h: int
    n_q: int
    n_k: int
    d: int
    d_v: int
    k: int
    mode: str = "forward"
    causal: bool = False
    mask: str = "none"
    dropout: float = 0.0
    dtype: str = "float32"

    @property
    def shape(self) -> tuple[int, int, int, int, int, int]:
        return (self.b, self.h, self.n_q, self.n_k, self.d, self.d_v)


def peak_bytes(call: Callable[[], object]) -> int:
    """Largest growth of live tensor storage on the CPU while ``call`` runs (see the docstring)."""
    gc.collect()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        call()
    events = [
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()  # type: ignore[union-attr]
        if e.name() == "[memory]"
    ]
    live = top = 0
    for _, size in sorted(events):
        live += size
        top = max(top, live)
    return top


def _inputs(case: Case, n_q: int, n_k: int) -> dict[str, object]:
    gen = torch.Generator().manual_seed(0)
    dtype = getattr(torch, case.dtype)
    grad = case.mode.startswith("train")

    def draw(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=dtype).requires_grad_(grad)

    b, h, d, d_v = case.b, case.h, case.d, case.d_v
    q, k, v = draw(b, h, n_q, d), draw(b, h, n_k, d), draw(b, h, n_k, d_v)
    rows = 2 * case.k + 1
    mask = None
    if case.mask == "key":  # a (n_k,) float key mask: the last key of every row is padding
        mask = torch.ones(n_k, dtype=dtype)
        mask[-1] = 0 if n_k > 1 else 1
    elif case.mask == "full":
        mask = torch.rand(b, h, n_q, n_k, generator=gen) < 0.8
    return dict(
        q=q, k=k, v=v, table_k=draw(rows, d), table_v=draw(rows, d_v), mask=mask,
        grad_out=torch.randn(b, h, n_q, d_v, dtype=dtype),
    )  # fmt: skip


def _runner(case: Case, inputs: dict[str, object]) -> Callable[[], object]:
    trace = case.mode.endswith("trace")
    weights = case.mode.endswith("weights")
    offset = case.n_k - case.n_q if case.n_k >= case.n_q else 0
    offset = min(offset, inputs["k"].shape[2] - inputs["q"].shape[2])  # the n = 8 warm-up
    gen = torch.Generator().manual_seed(1) if case.dropout else None

    def call() -> object:
        out = relative_attention(
            inputs["q"], inputs["k"], inputs["v"], inputs["table_k"], inputs["table_v"],
            mask=inputs["mask"], causal=case.causal, query_offset=max(0, offset),
            method=case.method, trace=trace, return_weights=weights,
            dropout_p=case.dropout, generator=gen, max_bytes=2**62,
        )  # fmt: skip
        if case.mode.startswith("train"):
            z = out.output if trace else out[0] if weights else out
            z.backward(inputs["grad_out"])
        return out

    return call


def measure(case: Case) -> int:
    """Measured peak bytes of one call (after a warm-up call at n = 8)."""
    small = min(8, case.n_q), min(8, case.n_k)
    if case.n_q == case.n_k:
        small = (small[0], small[0])
    _runner(case, _inputs(case, *small))()
    inputs = _inputs(case, case.n_q, case.n_k)
    return peak_bytes(_runner(case, inputs))


def _status_bytes(field: str) -> int:
    """VmRSS or VmHWM of this process, from /proc/self/status (Linux), in bytes."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def resident_growth(case: Case) -> int:
    """The resident set's high-water growth over one call, in a fresh child process: the
    cross-check (``--rss``). Linux only: the mark is reset through /proc/self/clear_refs."""
    child = [sys.executable, "-m", "scripts.measure_memory", "--child", json.dumps(asdict(case))]
    done = subprocess.run(child, capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def _child(case: Case) -> None:
    small = (8, 8) if case.n_q == case.n_k else (min(8, case.n_q), min(8, case.n_k))
    _runner(case, _inputs(case, *small))()
    call = _runner(case, _inputs(case, case.n_q, case.n_k))
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the high-water mark starts again from the current resident set
    before = _status_bytes("VmRSS")
    call()
    print(_status_bytes("VmHWM") - before)


def estimate(case: Case) -> int:
    """What ``relative_attention`` tells the guard for this call."""
    mask_cells = {"none": 0, "key": case.n_k, "full": case.b * case.h * case.n_q * case.n_k}
    return attention_bytes(
        get_method(case.method), case.shape, case.k,
        itemsize=torch.tensor([], dtype=getattr(torch, case.dtype)).element_size(),
        trace=case.mode.endswith("trace"), return_weights=case.mode.endswith("weights"),
        grad=case.mode.startswith("train"), causal=case.causal,
        mask_cells=mask_cells[case.mask], dropout=case.dropout > 0,
    )  # fmt: skip


def supported(case: Case) -> bool:
    offset = max(0, case.n_k - case.n_q)
    return get_method(case.method).unsupported(case.n_q, case.n_k, offset) is None


def table_cases(ns, methods, heads, d, k) -> list[Case]:
    return [
        Case(m, 1, heads, n, n, d, d, k, mode)
        for n in ns
        for mode in ("forward", "train")
        for m in methods
    ]


def sweep_cases(methods=METHOD_NAMES) -> list[Case]:
    """Shapes (square, rectangular, k above n, k = 0, one cell), every mode, masks, causal,
    dropout and float64: every branch of the estimate."""
    shapes = [
        (1, 8, 256, 256, 64, 64, 16),
        (2, 2, 96, 160, 16, 8, 3),
        (1, 1, 128, 128, 128, 32, 200),
        (3, 4, 96, 96, 8, 8, 0),
        (1, 2, 17, 17, 4, 4, 2),
        (1, 1, 1, 1, 1, 1, 0),
    ]
    variants = [
        dict(),
        dict(causal=True),
        dict(mask="key"),
        dict(mask="full", causal=True),
        dict(dropout=0.1),
        dict(dtype="float64"),
    ]
    cases = []
    for method, shape, mode, variant in itertools.product(methods, shapes, MODES, variants):
        if method == "loop" and shape[2] * shape[3] > 300:
            continue
        if variant.get("dropout") and "trace" in mode:
            continue  # refused: a trace keeps the weights before dropout
        case = Case(method, *shape, mode=mode, **variant)
        if supported(case):
            cases.append(case)
    return cases


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    return f"{cpu}, torch {torch.__version__}, {torch.get_num_threads()} threads"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--methods", nargs="+", help="default: five, all six with --sweep")
    parser.add_argument("--sweep", action="store_true", help="many shapes and modes, worst only")
    parser.add_argument("--json", help="also write every row here")
    parser.add_argument("--rss", action="store_true", help="add the resident-set cross-check")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(Case(**json.loads(args.child)))
        return 0
    args.methods = args.methods or list(METHOD_NAMES if args.sweep else TABLE_METHODS)
    cases = (
        sweep_cases(args.methods)
        if args.sweep
        else table_cases(args.n, args.methods, args.heads, args.d, args.k)
    )
    print(f"machine: {machine()}")
    if not args.sweep:
        print(f"b = 1, heads = {args.heads}, d = d_v = {args.d}, k = {args.k}, float32\n")
        rss = " resident-set growth |" if args.rss else ""
        print(f"| method | n | mode | measured peak | estimate | measured / estimate |{rss}")
        print("|---|---:|---|---:|---:|---:|" + ("---:|" if args.rss else ""))
    rows, over = [], []
    for case in cases:
        got, bound = measure(case), estimate(case)
        rows.append({**asdict(case), "measured": got, "estimate": bound})
        if got > bound:
            over.append(rows[-1])
        if not args.sweep:
            rss = f" {resident_growth(case) / 2**20:.2f} MiB |" if args.rss else ""
            print(f"| {case.method} | {case.n_q} | {case.mode} | {got / 2**20:.2f} MiB | "
                  f"{bound / 2**20:.2f} MiB | {got / bound:.2f} |{rss}", flush=True)  # fmt: skip
    if args.sweep:
        by_method: dict[str, list[float]] = {}
        for row in rows:
            by_method.setdefault(row["method"], []).append(row["measured"] / row["estimate"])
        print("| method | cases | largest measured / estimate | smallest |")
        print("|---|---:|---:|---:|")
        for method, ratios in by_method.items():
            print(f"| {method} | {len(ratios)} | {max(ratios):.2f} | {min(ratios):.2f} |")
    for row in over:
        print(f"OVER: {row}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"machine": machine(), "rows": rows}, out, indent=1)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
