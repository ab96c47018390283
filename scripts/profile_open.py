"""Where a page's open goes, from Chromium's own CPU profile of the page.

    python scripts/profile_open.py [--pages predict lookup] [--queries "" "?n=1024"]
                                   [--repeats 2] [--url http://127.0.0.1:8501]

For each page and query: a fresh browser context opens the link once (the server's caches and
the browser's script cache fill), then opens it again with the CPU profiler of Chromium's
DevTools protocol running (``Profiler.start`` / ``Profiler.stop``, 100 us sampling) until the
page is idle (``measure_browser.measure_load``). The profile's samples are summed by what ran:

* plotly.js: code of the plotly.js module (computing and drawing the charts);
* Streamlit: the rest of the app's JavaScript (React rendering the elements, the websocket's
  messages decoded);
* native: ``(program)``, the browser's own work outside JavaScript (style, layout, paint);
* GC: ``(garbage collector)``;
* waiting: ``(idle)``, the main thread with nothing to do: the server's run and the network
  (the profile's time past the idle moment, the quiet wait, taken off).

The floor page (scripts/floor_app.py) and the frame page (scripts/frame_app.py) are profiled
the same way first, as the yardsticks. Prints the machine and a markdown table (ms, median over
``--repeats``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import sync_playwright

if __package__:  # imported as scripts.profile_open
    from .local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from .measure_browser import YARDSTICKS, discover_pages, machine, measure_load, open_tab
else:  # run as python scripts/profile_open.py
    from local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from measure_browser import YARDSTICKS, discover_pages, machine, measure_load, open_tab

PARTS = ("plotly.js", "Streamlit", "native", "GC", "waiting")
SAMPLING_US = 100


def part_of(call_frame: dict) -> str | None:
    """Which part of PARTS a profile node's own time belongs to (None: the profiler's root)."""
    name, url = call_frame.get("functionName", ""), call_frame.get("url", "")
    if name == "(idle)":
        return "waiting"
    if name == "(garbage collector)":
        return "GC"
    if name in ("(program)", "(root)") or not url:
        return None if name == "(root)" else "native"
    return "plotly.js" if "plotly" in url.rsplit("/", 1)[-1].lower() else "Streamlit"


def self_times(profile: dict) -> dict[str, float]:
    """ms of each part: every sample counted with the time delta that follows it."""
    parts = {node["id"]: part_of(node["callFrame"]) for node in profile["nodes"]}
    totals: dict[str, float] = defaultdict(float)
    deltas = profile["timeDeltas"][1:] + [0]
    for node, delta_us in zip(profile["samples"], deltas, strict=True):
        part = parts[node]
        if part is not None:
            totals[part] += delta_us / 1000
    return {part: totals.get(part, 0.0) for part in PARTS}


def profiled_open(browser, url: str, quiet_ms: float, timeout_s: float) -> dict:
    """The link opened twice in one fresh context, the second time under the profiler."""
    with open_tab(browser) as tab:
        measure_load(tab, url, quiet_ms, timeout_s)
        cdp = tab.page.context.new_cdp_session(tab.page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLING_US})
        cdp.send("Profiler.start")
        load = measure_load(tab, url, quiet_ms, timeout_s)
        profile = cdp.send("Profiler.stop")["profile"]
    parts = self_times(profile)
    # the profile runs on through the quiet wait after the idle moment: idle time, not the open's
    profiled_ms = sum(profile["timeDeltas"][1:]) / 1000
    open_ms = 1000 * load["idle_s"]
    parts["waiting"] = max(0.0, parts["waiting"] - max(0.0, profiled_ms - open_ms))
    return {"open_ms": open_ms, **parts}


def table(rows: list[dict]) -> str:
    head = "| page | query | open ms | " + " | ".join(PARTS) + " |"
    lines = [head, "|---|---|" + "---:|" * (len(PARTS) + 1)]
    for row in rows:
        runs = row["runs"]
        cells = [statistics.median(run[key] for run in runs) for key in ("open_ms", *PARTS)]
        lines.append(
            f"| {row['path']} | {row['query'] or '(default)'} | "
            + " | ".join(f"{value:.0f}" for value in cells)
            + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", nargs="+", metavar="STEM", help="default: every page")
    parser.add_argument("--queries", nargs="+", default=["", "?n=1024"], metavar="Q")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quiet-ms", type=float, default=500.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--url", help="profile this running server instead of starting one")
    args = parser.parse_args(argv)
    pages = discover_pages()
    if args.pages:
        pages = {name: path for name, path in pages.items() if name in args.pages}
    report = machine()
    rows = []
    with contextlib.ExitStack() as stack:
        pid = os.getpid()
        yardsticks = {  # the floor page and the frame around its chart, profiled first
            name: stack.enter_context(
                served_app(Path(f"/tmp/profile_open_{name}_{pid}.log"), entry=entry)
            )[0]
            for name, entry in YARDSTICKS.items()
        }
        if args.url:
            base_url = args.url.rstrip("/")
        else:
            log = Path(f"/tmp/profile_open_server_{pid}.log")
            base_url, _ = stack.enter_context(served_app(log))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            targets = [(name, url, "/", "") for name, url in yardsticks.items()]
            targets += [
                (name, base_url, path, q) for name, path in pages.items() for q in args.queries
            ]
            for name, base, path, query in targets:
                print(f"profiling {name} {path}{query} ...", file=sys.stderr, flush=True)
                url = f"{base}{path}{query}"
                runs = [
                    profiled_open(browser, url, args.quiet_ms, args.timeout)
                    for _ in range(args.repeats)
                ]
                shown = f"{name} ({YARDSTICKS[name]})" if name in YARDSTICKS else path
                rows.append({"path": shown, "query": query, "runs": runs})
            browser.close()
    load_end = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    load_start = ", ".join(f"{v:.2f}" for v in report["load_avg_start"])
    print(
        f"Machine: {report['cpu']}, {report['cores']} cores; load average {load_start} at the "
        f"start, {load_end} at the end. The link's second open in one context (scripts cached, "
        f"a new session) under Chromium's CPU profiler, {time.strftime('%Y-%m-%d')}; ms, "
        f"median of {args.repeats}.\n"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
