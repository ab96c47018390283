"""What FlexAttention's block mask saves: compiled ``flex_attention`` with each mask's
``BlockMask`` against SDPA with the same mask as a dense bool ``attn_mask``.

    python -m scripts.bench_flex_masks                      # n = 1024 and 4096, the docs' table
    python -m scripts.bench_flex_masks --sizes 512 --repeats 3 --json out.json

For each n and mask (``relpos_core.mask_mods``), at batch 1, 8 heads, d 64, float32 on the CPU:
the share of FlexAttention's 128 x 128 blocks the mask skips (``block_kinds``); the median time
to build the ``BlockMask``; ``torch.compile(flex_attention)`` (inductor, forward only; run
once to compile, then ``--warmup`` more, then ``--repeats`` timed runs, their median) with that
block mask; ``scaled_dot_product_attention`` with the dense mask, timed in turn with it; the
ratio (the median over rounds of flex / SDPA in that round: below 1, flex is faster); and the
largest difference of the two outputs.
The first row of each n is no mask at all: what flex costs where nothing is skipped. Where
compiled flex fails, the row runs eager flex and says so. Compile time is reported, never
timed in. Prints the machine, its load before and after, and a markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

from relpos_core import mask_mods as mm

HEADS, HEAD_DIM, BLOCK = 8, 64, 128


@dataclass(frozen=True)
class Row:
    """One measured mask at one n; times in seconds (medians)."""

    n: int
    mask: str
    skipped: float  # share of BLOCK x BLOCK blocks skipped
    build: float | None  # create_block_mask (None: no mask)
    flex: float
    sdpa: float
    ratio: float  # median over rounds of flex / SDPA in the same round
    compile_s: float  # the first compiled call, compilation included
    max_diff: float  # max |flex - SDPA| over the output
    flex_run: str = "compiled"  # or "eager (compiled failed: ...)"


def masks(n: int) -> list[tuple[str, mm.Mod | None]]:
    """The docs' masks at length n (None: no mask)."""
    segments = torch.arange(n) * 4 // n  # 4 equal documents
    return [
        ("none (every block full)", None),
        ("causal", mm.causal()),
        ("sliding window 128", mm.sliding_window(128, n)),
        ("sinks 4 + window 128", mm.sinks(4, 128, n)),
        (f"prefix-LM, prefix {n // 4}", mm.prefix_lm(n // 4, n)),
        ("document, 4 equal segments", mm.document(segments)),
        ("causal AND document", mm.combine([mm.causal(), mm.document(segments)], "and")),
    ]


def round_times(calls: list[Callable[[], object]], warmup: int, repeats: int) -> list[list[float]]:
    """Wall times of each call in ``repeats`` rounds after ``warmup`` untimed ones; the calls
    take turns in each round, so a change in the machine's load touches them alike."""
    for _ in range(warmup):
        for call in calls:
            call()
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeats):
        for call, kept in zip(calls, times, strict=True):
            start = time.perf_counter()
            call()
            kept.append(time.perf_counter() - start)
    return times


def paired_ratio(times: list[float], baseline: list[float]) -> float:
    """Median of the per-round ratios: load that slows both calls of a round cancels."""
    return statistics.median(a / b for a, b in zip(times, baseline, strict=True))


def measure(n: int, name: str, mod, warmup: int, repeats: int) -> Row:
    gen = torch.Generator().manual_seed(n)
    q, k, v = (torch.randn(1, HEADS, n, HEAD_DIM, generator=gen) for _ in range(3))
    if mod is None:
        allowed, skipped, blocks, build = None, 0.0, None, None
    else:
        allowed = mm.check_rows(mm.dense(mod, n, n))
        skipped = mm.block_kinds(mod, n, n, BLOCK)[1]
        fn = mod.fn

        def make():
            return create_block_mask(fn, 1, 1, n, n, device="cpu", BLOCK_SIZE=BLOCK)

        blocks = make()
        build = statistics.median(round_times([make], 1, 3)[0])
    run = "compiled"
    compiled = torch.compile(flex_attention, dynamic=False)
    start = time.perf_counter()
    try:
        out = compiled(q, k, v, block_mask=blocks)
        flex = compiled
    except Exception as error:  # noqa: BLE001 - the table says what failed
        run = f"eager (compiled failed: {type(error).__name__})"
        out = flex_attention(q, k, v, block_mask=blocks)
        flex = flex_attention
    compile_s = time.perf_counter() - start
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    flex_times, sdpa_times = round_times(
        [
            lambda: flex(q, k, v, block_mask=blocks),
            lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=allowed),
        ],
        warmup,
        repeats,
    )
    return Row(
        n=n,
        mask=name,
        skipped=skipped,
        build=build,
        flex=statistics.median(flex_times),
        sdpa=statistics.median(sdpa_times),
        ratio=paired_ratio(flex_times, sdpa_times),
        compile_s=compile_s,
        max_diff=float((out - reference).abs().max()),
        flex_run=run,
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def table(rows: list[Row]) -> str:
    """The markdown table: times in ms, the ratio flex / SDPA, the share skipped in %."""
    lines = [
        "| n | mask | blocks skipped | BlockMask build (ms) | flex (ms) | SDPA, dense mask (ms) "
        "| flex / SDPA | max abs diff | flex run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        build = "no mask" if r.build is None else ms(r.build)
        lines.append(
            f"| {r.n} | {r.mask} | {100 * r.skipped:.0f} % | {build} | {ms(r.flex)} "
            f"| {ms(r.sdpa)} | {r.ratio:.2f} | {r.max_diff:.1e} | {r.flex_run} |"
        )
    return "\n".join(lines)


def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            model = next(line.split(":", 1)[1].strip() for line in info if "model name" in line)
    except (OSError, StopIteration):
        pass
    return (
        f"{model}, {os.cpu_count()} cores, {torch.get_num_threads()} torch threads, "
        f"torch {torch.__version__}"
    )


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    # a compile per mask and n: past the default limit (8) torch would stop compiling
    torch._dynamo.config.cache_size_limit = 64
    warnings.filterwarnings("ignore")  # inductor's and torch.jit's notices, not results
    print(f"machine: {machine()}; load average before: {load()}", file=sys.stderr)
    rows = []
    for n in args.sizes:
        for name, mod in masks(n):
            rows.append(measure(n, name, mod, args.warmup, args.repeats))
            print(f"  n = {n}, {name}: compiled in {rows[-1].compile_s:.1f} s", file=sys.stderr)
    print(f"machine: {machine()}")
    print(
        f"batch 1, {HEADS} heads, d {HEAD_DIM}, float32; blocks {BLOCK} x {BLOCK}; medians of "
        f"{args.repeats} runs after {args.warmup} warm-up runs; compile time excluded"
    )
    print(table(rows))
    print(f"load average (1, 5, 15 min) after: {load()}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) for r in rows], out, indent=1)
    assert all(math.isfinite(r.max_diff) for r in rows)


if __name__ == "__main__":
    main()
