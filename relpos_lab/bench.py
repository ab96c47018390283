"""Benchmark: relative attention (key and value terms) against plain SDPA, forward or training.

    python -m relpos_lab.bench --n 512 1024 2048 4096 --d 64 --heads 8 --k 16 --repeats 5
    python -m relpos_lab.bench --mode train --n 1024 2048      # forward + backward
    python -m relpos_lab.bench --mode layer --n 1024           # the nn.Module, forward + backward
    python -m relpos_lab.bench --causal --n 1024 4096 --methods sdpa banded   # both causal
    python -m relpos_lab.bench --busy 2 --causal --n 1024 --repeats 15 --methods sdpa banded

    python -m relpos_lab.bench --gpu-table    # the GPU table: the command below, and the goals
    python -m relpos_lab.bench --device cuda --dtype bf16 --mode train --n 1024 4096 16384 \
        --batch 4 --heads 16 --d 64 --k 64 --methods sdpa flex_key flex triton --budget-mb 1e5

Prints a markdown table (method x n: median ms, peak MB, ratio to SDPA) and writes JSON.

Rows: "sdpa" is ``torch.nn.functional.scaled_dot_product_attention`` with no relative terms, the
yardstick; "plain" is the same attention as three separate ops (QK^T, softmax, AV), still without
relative terms; every other row is ``relative_attention(..., method=row)``, exact with both
terms, "banded" being what "auto" picks. ``--mode train`` times forward + backward with respect to
q, k, v (and the tables); ``--mode layer`` times ``RelativeMultiHeadAttention`` (hid = d x heads)
against the same four projections around SDPA, forward + backward with respect to the input and
every parameter. ``--dtype bf16`` / ``fp16`` runs the inputs in that dtype (the layer under
``torch.autocast``). On ``--device cuda``: "sdpa" is FlashAttention where the dtype allows it,
"flex_key" is FlexAttention with the key term alone (a score_mod reading Q w^K by bucket, no
value term), "flex" is the FlexAttention path (``methods.flex``), "triton" the fused kernel
(``relpos_core.methods.triton_attention``, what "auto" runs there); peak memory is
``torch.cuda.max_memory_allocated`` growth during one call. ``--gpu-table`` runs that table and
prints, per n, the kernel against its goals; without a CUDA device it says so and runs nothing.

Time: all rows run in this process on the same q, k, v, threads left at torch's default. After
one warm-up call each, every repeat times SDPA and then the method back to back; the table gives
the median of each and, as the ratio, the median of the per-repeat ratios (robust to other load
on the machine, which moves both timings of a pair together). ``--busy N`` starts N processes
that spin on a CPU each while a row is timed, as a shared host's neighbours do: a call of many
small parallel ops can then stall on a descheduled thread, so the table adds each row's worst
call and worst per-repeat ratio (the median hides the stall).

Peak memory: torch's CPU allocations are invisible to tracemalloc, so each (method, n) runs once
more in a fresh child process that builds the inputs, runs a tiny warm-up call, resets the kernel's
resident-set high-water mark to the current RSS (``/proc/self/clear_refs``), runs the method once
and reads the mark again (``VmHWM``). "peak MB" is the growth: everything the call held at its
worst moment, output included. (``getrusage``'s ru_maxrss is no use here: Linux carries the
parent's high-water mark into a child across fork and exec.) Without /proc, ru_maxrss is the
fallback. A method whose materialized intermediate (``memory_bytes``) plus two
(b, h, n, n) tensors would exceed ``--budget-mb`` is skipped and marked so in the table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from relpos_core import (
    RelativeMultiHeadAttention,
    attention_bytes,
    get_method,
    logits_bytes,
    relative_attention,
    relative_table,
)
from relpos_core.methods import FLEX, TRITON
from relpos_core.methods.flex import flex_attention_relative
from relpos_lab.busy import busy_cpu

RELATIVE_METHODS = ("banded", "bucket", "skew", "matmul", "einsum")
# CUDA only: FlexAttention (torch 2.13's CPU has no backward), and the Triton kernel
GPU_METHODS = ("flex_key", "flex", "triton")
BASELINES = ("sdpa", "plain")
METHODS = (*BASELINES, *RELATIVE_METHODS, *GPU_METHODS)
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
MODES = ("forward", "train", "layer")
DEFAULT_METHODS = ("sdpa", "plain", "banded", "bucket", "skew", "matmul", "einsum")
DEFAULT_JSON = Path("bench-results/bench.json")
# The GPU table of the fused kernel's goals: bf16, two-sided, forward + backward
GPU_TABLE = dict(n=[1024, 4096, 16384], batch=4, heads=16, d=64, k=64, dtype="bf16", mode="train")
GPU_TABLE_METHODS = ("sdpa", "flex_key", "flex", "triton")
TIME_GOAL = {1024: 2.0}  # x SDPA's time; 1.5 at every other n
MEMORY_GOAL = 1.5  # x SDPA's peak memory


def make_inputs(
    n: int,
    d: int,
    heads: int,
    k: int,
    batch: int = 1,
    seed: int = 0,
    grad: bool = False,
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> tuple[torch.Tensor, ...]:
    """q, k, v (batch, heads, n, d) from their own generator, and tables (2k+1, d), on
    ``device`` in ``dtype``. With ``grad`` every tensor requires grad (the training mode
    differentiates all five)."""
    gen = torch.Generator().manual_seed(seed)
    q, keys, v = (torch.randn(batch, heads, n, d, generator=gen) for _ in range(3))
    tables = relative_table(k, d, seed=seed + 1), relative_table(k, d, seed=seed + 2)
    return tuple(
        t.to(device=device, dtype=dtype).requires_grad_(grad) for t in (q, keys, v, *tables)
    )


def _flex_key_term(q, k, v, table_k):
    """FlexAttention with Shaw's key term alone: score + q_i · w^K_clip(j-i) / sqrt(d)."""
    from relpos_core.methods.flex import compiled_flex_attention

    kk = table_k.shape[0] // 2
    per_bucket = (q @ table_k.T) / math.sqrt(q.shape[-1])  # (b,h,i,2k+1)

    def score_mod(score, b, h, i, j):
        return score + per_bucket[b, h, i, (j - i).clamp(-kk, kk) + kk]

    return compiled_flex_attention()(q, k, v, score_mod=score_mod)


def _plain(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v


class SdpaMultiHeadAttention(nn.Module):
    """The yardstick of ``--mode layer``: RelativeMultiHeadAttention's four projections around
    SDPA, no relative terms."""

    def __init__(self, hid_dim: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.fc_q, self.fc_k, self.fc_v, self.fc_o = (nn.Linear(hid_dim, hid_dim) for _ in "qkvo")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, hid = x.shape
        q, k, v = (
            fc(x).view(b, n, self.n_heads, -1).transpose(1, 2)
            for fc in (self.fc_q, self.fc_k, self.fc_v)
        )  # (b,h,n,dh)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.fc_o(out.transpose(1, 2).reshape(b, n, hid))


def _train_step(forward: Callable[[], torch.Tensor], params: list[torch.Tensor]):
    """One forward + backward; gradients are cleared first so nothing accumulates."""

    def step() -> torch.Tensor:
        for p in params:
            p.grad = None
        out = forward()
        out.backward(torch.ones_like(out))
        return out.detach()

    return step


def runner(
    method: str, inputs: tuple[torch.Tensor, ...], mode: str = "forward", causal: bool = False
) -> Callable[[], torch.Tensor]:
    """A no-argument call running ``method`` once on ``inputs`` in ``mode``.

    forward: no gradients. train: forward + backward through q, k, v and the tables (pass
    ``make_inputs(..., grad=True)``). layer: forward + backward of the module on x (b, n, d·h).
    ``causal``: query i sees keys j <= i, in SDPA (``is_causal``) and the relative call alike.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    q, k, v, table_k, table_v = inputs
    if method in GPU_METHODS and q.device.type != "cuda":
        raise ValueError(f"method {method!r} runs on --device cuda only, got {q.device.type}")
    if mode == "layer":
        if causal:
            raise ValueError("--causal applies to --mode forward and train")
        return _layer_runner(method, q, table_k.shape[0] // 2)
    if method == "sdpa":
        call = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
    elif method == "plain":
        if causal:
            raise ValueError("the plain row has no causal mask: leave it out with --causal")
        call = lambda: _plain(q, k, v)  # noqa: E731
    elif method == "flex_key":
        call = lambda: _flex_key_term(q, k, v, table_k)  # noqa: E731
    elif method == "flex":  # the FlexAttention path, whatever "auto" picks
        call = lambda: flex_attention_relative(  # noqa: E731
            q, k, v, table_k, table_v, None, causal, 0
        )
    else:
        call = lambda: relative_attention(  # noqa: E731
            q, k, v, table_k, table_v, method=method, causal=causal
        )
    if mode == "train":
        call = _train_step(call, [t for t in inputs if t.requires_grad])
    return _synchronized(call, q.device)


def _synchronized(call: Callable[[], torch.Tensor], device: torch.device):
    """On CUDA a call returns before its kernels finish: wait for them, so timings are real."""
    if device.type != "cuda":
        return call

    def run() -> torch.Tensor:
        out = call()
        torch.cuda.synchronize(device)
        return out

    return run


def _layer_runner(method: str, q: torch.Tensor, k: int) -> Callable[[], torch.Tensor]:
    b, h, n, d = q.shape
    torch.manual_seed(0)  # module initialisation; the timings do not depend on the values
    if method == "sdpa":
        module: nn.Module = SdpaMultiHeadAttention(h * d, h)
    elif method in ("plain", "flex_key", "flex"):
        raise ValueError(
            "--mode layer compares the relative layer (its methods, and triton: what auto runs "
            "on CUDA) with the SDPA layer only"
        )
    else:
        module = RelativeMultiHeadAttention(
            h * d, h, k, method="auto" if method == "triton" else method
        )
    module.to(q.device)
    x = q.detach().transpose(1, 2).reshape(b, n, h * d).float().clone().requires_grad_(True)
    low = q.dtype if q.dtype != torch.float32 else None  # half: the layer under autocast

    def forward() -> torch.Tensor:
        with torch.autocast(q.device.type, dtype=low, enabled=low is not None):
            return module(x) if method == "sdpa" else module(x, x, x)

    return _synchronized(_train_step(forward, [x, *module.parameters()]), q.device)


def estimated_bytes(
    method: str, n: int, d: int, heads: int, k: int, batch: int = 1, mode: str = "forward"
) -> int:
    """What ``method`` is expected to hold at its peak, from the registry's memory model."""
    grad = mode != "forward"
    if method in BASELINES:
        return (4 if grad else 2) * logits_bytes(n, heads, batch)
    shape = (batch, heads, n, n, d, d)
    if method in GPU_METHODS:  # fused kernels: the band and a few (b, h, n, d) tensors at most
        return attention_bytes(TRITON if method == "triton" else FLEX, shape, k, grad=grad)
    return attention_bytes(get_method(method), shape, k, grad=grad)


def time_against_sdpa(
    call: Callable[[], object], sdpa: Callable[[], object], repeats: int
) -> dict[str, float]:
    """Median ms of ``call`` and of ``sdpa``, the median per-repeat ratio, and the worst of
    each (the slowest call, the slowest SDPA, the largest ratio); pairs interleaved."""
    call()
    sdpa()
    ours, base, ratios = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        sdpa()
        mid = time.perf_counter()
        call()
        end = time.perf_counter()
        base.append(mid - start)
        ours.append(end - mid)
        ratios.append((end - mid) / (mid - start))
    return dict(
        median_ms=1e3 * statistics.median(ours), sdpa_ms=1e3 * statistics.median(base),
        ratio_to_sdpa=statistics.median(ratios), worst_ms=1e3 * max(ours),
        sdpa_worst_ms=1e3 * max(base), worst_ratio=max(ratios),
    )  # fmt: skip


def _status_bytes(field: str) -> int | None:
    """VmRSS / VmHWM of this process from /proc/self/status, None where there is no /proc."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # reported in kB
    except OSError:
        pass
    return None


def _reset_peak_rss() -> int:
    """Set the high-water mark to the current RSS where Linux allows it; return the baseline."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # 5: reset the peak RSS (Linux >= 4.0)
        current = _status_bytes("VmRSS")
        if current is not None:
            return current
    except OSError:
        pass
    return _peak_rss()


def _peak_rss() -> int:
    hwm = _status_bytes("VmHWM")
    if hwm is not None:
        return hwm
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def peak_growth_in_child(
    method: str,
    n: int,
    d: int,
    heads: int,
    k: int,
    batch: int,
    mode: str = "forward",
    dtype: str = "fp32",
    causal: bool = False,
) -> int:
    """Resident-set high-water growth of one call of ``method``, in a fresh process (bytes)."""
    args = [sys.executable, "-m", "relpos_lab.bench", "--child", method, "--mode", mode]
    args += ["--dtype", dtype] + (["--causal"] if causal else [])
    args += ["--n", str(n), "--d", str(d), "--heads", str(heads), "--k", str(k)]
    args += ["--batch", str(batch)]
    root = str(Path(__file__).resolve().parent.parent)  # so the child imports this relpos_core
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
    return int(done.stdout.strip().splitlines()[-1])


def cuda_peak_growth(call: Callable[[], object], device: torch.device) -> int:
    """Growth of CUDA's allocated memory over one call, at its highest (bytes)."""
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    call()
    return max(0, torch.cuda.max_memory_allocated(device) - before)


def _child(
    method: str, n: int, d: int, heads: int, k: int, batch: int, mode: str, dtype: torch.dtype,
    causal: bool = False,
) -> None:  # fmt: skip
    grad = mode == "train"
    warm = make_inputs(8, d, heads, k, batch, grad=grad, dtype=dtype)
    runner(method, warm, mode, causal)()  # warm the allocator
    inputs = make_inputs(n, d, heads, k, batch, grad=grad, dtype=dtype)
    call = runner(method, inputs, mode, causal)
    before = _reset_peak_rss()
    call()
    print(max(0, _peak_rss() - before))


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, object]:
    """CPU model, core count, torch version and threads: who produced the numbers."""
    return {
        "cpu": cpu_model(),
        "cores": _cores(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
    }


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run(
    ns: list[int],
    d: int,
    heads: int,
    k: int,
    batch: int,
    repeats: int,
    methods: list[str],
    budget_mb: float,
    measure_memory: bool = True,
    mode: str = "forward",
    device: str = "cpu",
    dtype: str = "fp32",
    causal: bool = False,
    busy: int = 0,
) -> dict[str, object]:
    """Time (and, in child processes, measure) every method at every n, with ``busy`` processes
    spinning beside the timing (not the memory measurement). Returns the JSON dict."""
    results = []
    start = machine()  # the load average says how busy the machine was while timing
    if mode == "layer" or causal:
        methods = [m for m in methods if m != "plain"]
    for n in ns:
        inputs = make_inputs(
            n, d, heads, k, batch, grad=mode == "train", device=device, dtype=DTYPES[dtype]
        )
        sdpa = runner("sdpa", inputs, mode, causal)
        logits_mb = logits_bytes(n, heads, batch) / 2**20
        for method in methods:
            row: dict[str, object] = {"method": method, "n": n, "logits_mb": logits_mb}
            need_mb = estimated_bytes(method, n, d, heads, k, batch, mode) / 2**20
            if method in GPU_METHODS and device != "cuda":
                row["skipped"] = "cuda only"
                results.append(row)
                continue
            if need_mb > budget_mb:
                row["skipped"] = f"needs ~{need_mb:,.0f} MB > budget {budget_mb:,.0f} MB"
                results.append(row)
                continue
            call = runner(method, inputs, mode, causal)
            with busy_cpu(busy):
                row.update(time_against_sdpa(call, sdpa, repeats), skipped=None)
            if measure_memory and device == "cuda":
                peak = cuda_peak_growth(call, inputs[0].device) / 2**20
                row.update(peak_mb=peak, peak_over_logits=peak / logits_mb)
            elif measure_memory:
                peak = peak_growth_in_child(method, n, d, heads, k, batch, mode, dtype, causal)
                peak /= 2**20
                row.update(peak_mb=peak, peak_over_logits=peak / logits_mb)
            results.append(row)
            print(_progress(row), file=sys.stderr, flush=True)
    config = dict(
        mode=mode, n=ns, d=d, heads=heads, k=k, batch=batch, repeats=repeats, budget_mb=budget_mb,
        device=device, dtype=dtype, causal=causal, busy=busy,
    )  # fmt: skip
    report = {"machine": start, "config": config, "results": results}
    report["load_average_1min_at_end"] = machine()["load_average_1min"]
    return report


def _progress(row: dict[str, object]) -> str:
    return f"n={row['n']} {row['method']}: {row['median_ms']:.1f} ms, x{row['ratio_to_sdpa']:.2f}"


def _cell(row: dict[str, object] | None, worst: bool = False) -> str:
    if row is None:
        return ""
    if row.get("skipped"):
        return f"skipped ({row['skipped']})"
    cell = f"{row['median_ms']:.1f} ms"
    if "peak_mb" in row:
        cell += f" · {row['peak_mb']:.1f} MB"
    cell += f" · {row['ratio_to_sdpa']:.2f}x"
    if worst:
        cell += f" (worst {row['worst_ms']:.1f} ms · {row['worst_ratio']:.2f}x)"
    return cell


def markdown_table(report: dict[str, object]) -> str:
    """method x n: 'median ms · peak MB · ratio to SDPA' per cell; with other processes busy
    (``--busy``), the worst call and the worst ratio too."""
    results: list[dict[str, object]] = report["results"]  # type: ignore[assignment]
    ns = list(dict.fromkeys(int(r["n"]) for r in results))  # type: ignore[call-overload]
    methods = list(dict.fromkeys(str(r["method"]) for r in results))
    by_key = {(r["method"], r["n"]): r for r in results}
    lines = [
        "| method | " + " | ".join(f"n = {n}" for n in ns) + " |",
        "|---|" + "---|" * len(ns),
    ]
    for method in methods:
        worst = bool(report.get("config", {}).get("busy"))  # type: ignore[union-attr]
        cells = [_cell(by_key.get((method, n)), worst) for n in ns]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def goal_lines(report: dict[str, object]) -> list[str]:
    """Per n, the triton row against its goals: time within TIME_GOAL x SDPA's (1.5x where not
    listed), peak memory within MEMORY_GOAL x SDPA's, and faster than flex_key."""
    rows = {(r["method"], r["n"]): r for r in report["results"]}  # type: ignore[union-attr]
    lines = []
    for n in report["config"]["n"]:  # type: ignore[index]
        ours, sdpa, key = (rows.get((m, n)) for m in ("triton", "sdpa", "flex_key"))
        if not ours or not sdpa or ours.get("skipped") or sdpa.get("skipped"):
            lines.append(f"n = {n}: triton or sdpa not measured")
            continue
        goal = TIME_GOAL.get(n, 1.5)
        time_ok = ours["ratio_to_sdpa"] <= goal
        line = f"n = {n}: time {ours['ratio_to_sdpa']:.2f}x SDPA (goal {goal}x: "
        line += "met)" if time_ok else "missed)"
        if "peak_mb" in ours and "peak_mb" in sdpa and sdpa["peak_mb"] > 0:
            memory = ours["peak_mb"] / sdpa["peak_mb"]
            verdict = "met" if memory <= MEMORY_GOAL else "missed"
            line += f", memory {memory:.2f}x SDPA (goal {MEMORY_GOAL}x: {verdict})"
        if key and not key.get("skipped"):
            verdict = "met" if ours["median_ms"] < key["median_ms"] else "missed"
            line += f", {ours['median_ms']:.1f} ms vs flex_key {key['median_ms']:.1f} ms "
            line += f"(goal: ahead: {verdict})"
        lines.append(line)
    return lines


def gpu_table_argv() -> list[str]:
    """The arguments of ``--gpu-table``: GPU_TABLE and GPU_TABLE_METHODS on CUDA."""
    t = GPU_TABLE
    argv = ["--device", "cuda", "--dtype", str(t["dtype"]), "--mode", str(t["mode"])]
    argv += ["--n", *map(str, t["n"])]  # type: ignore[call-overload]
    for name in ("batch", "heads", "d", "k"):
        argv += [f"--{name}", str(t[name])]
    return argv + ["--methods", *GPU_TABLE_METHODS, "--budget-mb", "1e5", "--repeats", "10"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m relpos_lab.bench", description=__doc__.split("\n")[0]
    )
    p.add_argument("--n", type=int, nargs="+", default=[512, 1024, 2048, 4096], help="lengths")
    p.add_argument("--d", type=int, default=64, help="head dim")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--k", type=int, default=16, help="clip distance")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--methods", nargs="+", choices=METHODS, default=list(DEFAULT_METHODS))
    p.add_argument("--budget-mb", type=float, default=4096.0, help="skip methods needing more")
    p.add_argument("--no-memory", action="store_true", help="skip the child-process peak memory")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results")
    p.add_argument("--mode", choices=MODES, default="forward", help="what one timed call runs")
    p.add_argument("--causal", action="store_true", help="query i sees keys j <= i (not layer)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="fp32", help="inputs' dtype")
    p.add_argument(
        "--busy", type=int, default=0, help="processes spinning on a CPU each while timing"
    )
    p.add_argument(
        "--gpu-table", action="store_true",
        help="the fused kernel's table on CUDA (bf16, b=4, h=16, d=64, k=64), with its goals",
    )  # fmt: skip
    p.add_argument("--child", choices=METHODS, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> dict[str, object] | None:
    args = _parser().parse_args(argv)
    if args.gpu_table:
        if not torch.cuda.is_available():
            print(
                "--gpu-table: torch sees no CUDA device here, so nothing was run; the table "
                "(sdpa, flex_key, flex and triton, forward + backward, bf16, n = 1024, 4096, "
                "16384) is measured on a machine with one"
            )
            return None
        rest = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--gpu-table"]
        args = _parser().parse_args(gpu_table_argv() + rest)
        args.gpu_table = True
    for name in ("d", "heads", "k", "batch", "repeats", "busy"):
        if getattr(args, name) < (0 if name in ("k", "busy") else 1):
            low = 0 if name in ("k", "busy") else 1
            raise SystemExit(f"--{name} must be >= {low}, got {getattr(args, name)}")
    if min(args.n) < 1:
        raise SystemExit(f"--n values must be >= 1, got {args.n}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device here")
    if args.child:
        _child(
            args.child, args.n[0], args.d, args.heads, args.k, args.batch, args.mode,
            DTYPES[args.dtype], args.causal,
        )  # fmt: skip
        return None
    report = run(
        args.n, args.d, args.heads, args.k, args.batch, args.repeats, args.methods,
        args.budget_mb, measure_memory=not args.no_memory, mode=args.mode, device=args.device,
        dtype=args.dtype, causal=args.causal, busy=args.busy,
    )  # fmt: skip
    m = report["machine"]
    gpu = f", {m['gpu']}" if m["gpu"] and args.device == "cuda" else ""
    print(
        f"{m['cpu']}, {m['cores']} cores{gpu}, torch {m['torch']}, {m['torch_threads']} torch "
        f"threads, {args.busy} busy processes beside it; {report['config']}"
    )
    print(f"load average (1 min): {m['load_average_1min']} at start, "
          f"{report['load_average_1min_at_end']} at end")  # fmt: skip  # type: ignore[index]
    print(markdown_table(report))
    if args.gpu_table:
        print("\n".join(goal_lines(report)))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")
    return report


if __name__ == "__main__":
    main()
