"""What one element of each kind adds to a page's open, in Chromium.

    python scripts/element_costs.py [--count 20] [--repeats 3] [--kinds markdown st.latex]

For each kind of scripts/element_page.py (``KINDS``: text, formulas, notes, widgets, a small
chart), a server draws the floor page (one slider, one 64 x 64 heatmap) and ``--count`` elements
of that kind under it. Each is opened as measure_browser.py opens a page: in a fresh browser
context (nothing cached) and again in the same context (the scripts from the browser's cache, a
new session), to idle, ``--repeats`` times. A kind's cost per element is its median open less
the page with none, divided by the count. Prints the machine and a markdown table.

A page's own open is roughly the sum over what it draws: read it beside a page's census
(elements of each kind) to see where its time goes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

if __package__:  # imported as scripts.element_costs (the tests)
    from .element_page import KINDS
    from .local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from .measure_browser import machine, measure_load, open_tab
else:  # run as python scripts/element_costs.py
    from element_page import KINDS
    from local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from measure_browser import machine, measure_load, open_tab

ELEMENT_PAGE = "scripts/element_page.py"


def opens(browser, url: str, repeats: int, quiet_ms: float) -> dict[str, float]:
    """Median fresh and cached open (s) of ``url``."""
    fresh, cached = [], []
    for _ in range(repeats):
        with open_tab(browser) as tab:
            fresh.append(measure_load(tab, url, quiet_ms)["idle_s"])
            cached.append(measure_load(tab, url, quiet_ms)["idle_s"])
    return {"fresh_s": statistics.median(fresh), "cached_s": statistics.median(cached)}


def per_element(row: dict, none: dict, count: int) -> dict[str, float]:
    """ms one element adds to each open: (the kind's open - the page with none) / count."""
    return {key: 1000 * (row[key] - none[key]) / count for key in ("fresh_s", "cached_s")}


def table(rows: dict[str, dict], count: int) -> str:
    none = rows["none"]
    lines = [
        f"| kind ({count} on the floor page) | fresh open s | cached open s "
        "| ms per element, fresh | ms per element, cached |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, row in rows.items():
        each = per_element(row, none, count)
        cells = (
            ["–", "–"] if kind == "none" else [f"{each['fresh_s']:.0f}", f"{each['cached_s']:.0f}"]
        )
        lines.append(
            f"| {kind} | {row['fresh_s']:.2f} | {row['cached_s']:.2f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="elements of the kind per page")
    parser.add_argument("--repeats", type=int, default=3, help="fresh contexts per kind")
    parser.add_argument("--kinds", nargs="+", choices=sorted(KINDS), help="default: every kind")
    parser.add_argument("--quiet-ms", type=float, default=500.0)
    args = parser.parse_args(argv)
    kinds = ["none", *[k for k in KINDS if k != "none" and (not args.kinds or k in args.kinds)]]
    report, rows = machine(), {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for kind in kinds:
            print(f"measuring {kind} ...", file=sys.stderr, flush=True)
            env = {"ELEMENT_KIND": kind, "ELEMENT_COUNT": str(args.count)}
            log = Path(f"/tmp/element_costs_{os.getpid()}.log")
            with served_app(log, entry=ELEMENT_PAGE, env=env) as (url, _):
                with open_tab(browser) as tab:  # the server's first run, unmeasured
                    measure_load(tab, url + "/", args.quiet_ms)
                rows[kind] = opens(browser, url + "/", args.repeats, args.quiet_ms)
        browser.close()
    print(f"machine: {report}")
    print(table(rows, args.count))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
