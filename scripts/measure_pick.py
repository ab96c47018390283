"""Measure a pick in a real browser: click a heatmap cell, time the page redrawn with the pair.

    python scripts/measure_pick.py [--pages lookup attention] [--query "?n=8"] [--repeats 6]
                                   [--url http://127.0.0.1:8501] [--json bench-results/pick.json]

For every page, opens it with a picked pair (i, j) in the URL, finds the pair's outline on the
page's first pair chart, then clicks the cell left of it and the cell right of it in turn
(``--repeats`` clicks), each a real mouse click in Chromium. Measures, from the click's
timestamp in the page: the first chart redrawn with new data or a new outline, and the idle
moment; and the websocket bytes of the rerun. Also loads each page at ``--big`` (n = 1024)
with and without a pair and reports the websocket bytes the pair adds. Uses the in-page watcher
and the idle rule of ``measure_browser.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

if __package__:
    from .local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from .measure_browser import MB, machine, measure_load, open_tab, spread, wait_until_idle
else:
    from local_app import CHROMIUM, CHROMIUM_ARGS, served_app
    from measure_browser import MB, machine, measure_load, open_tab, spread, wait_until_idle

OUTLINE = "rgb(242, 183, 1)"  # explorer.pair.marks.INK
CHARTS = {  # the first pair chart of each page
    "": "overview_index",
    "multihead": "multihead_weights",
    "absolute": "encoding_similarity",
    "lookup": "index",
    "logits": "logits_heads",
    "attention": "attention_heads",
    "family": "family_heads",
    "compare": "compare_weights",
}
PAIR = "i=5&j=3"


def outline_box(page, chart: str) -> dict:
    """The pair's outline on chart ``chart_<chart>``, scrolled into view, once it is still."""
    mark = page.locator(f'.st-key-chart_{chart} .shapelayer path[style*="{OUTLINE}"]').first
    mark.wait_for(timeout=60_000)
    box = None
    for _ in range(50):
        page.wait_for_timeout(150)
        mark.scroll_into_view_if_needed()
        now = mark.bounding_box()
        if now is not None and now == box:
            return now
        box = now
    raise RuntimeError(f"the outline on {chart} kept moving")


def click_cell(tab, chart: str, step: int, quiet_ms: float, timeout_s: float) -> dict:
    """Click the cell ``step`` columns right of the pair; time the redraw and the idle page."""
    box = outline_box(tab.page, chart)
    tab.calibrate()
    tab.page.evaluate("window.__measure.arm()")
    start = time.monotonic()
    tab.page.mouse.click(box["x"] + box["width"] * (0.5 + step), box["y"] + box["height"] / 2)
    idle_ms = wait_until_idle(tab, start, quiet_ms, timeout_s)
    state = tab.poll()
    clicked, changed = state["keyAt"], state["changedAt"]
    return {
        "redraw_ms": None if clicked is None or changed is None else changed - clicked,
        "idle_ms": None if clicked is None else idle_ms - clicked,
        "ws_bytes": sum(size for _, size in tab.net.since(start)),
        "url": tab.page.url,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", nargs="*", default=list(CHARTS))
    parser.add_argument("--query", default="")
    parser.add_argument("--big", default="n=1024")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--url")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quiet-ms", type=float, default=300)
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        if args.url:
            base = args.url.rstrip("/")
        else:
            log = Path(f"/tmp/measure_pick_server_{os.getpid()}.log")
            base, _ = stack.enter_context(served_app(log))
        report = measure(base, args)
    print_table(report, args.big)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))


def measure(base: str, args: argparse.Namespace) -> dict:
    """Clicks on every page, then the n = 1024 loads with and without a pair."""
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        start = machine()
        for path in args.pages:
            query = "&".join(q for q in (args.query.lstrip("?"), PAIR) if q)
            with open_tab(browser) as tab:
                measure_load(tab, f"{base}/{path}?{query}", args.quiet_ms, 300)
                clicks = [
                    click_cell(tab, CHARTS[path], (-1, 1)[r % 2], args.quiet_ms, 120)
                    for r in range(args.repeats)
                ]
            sizes = {}
            for name, extra in (("without", ""), ("with", "&" + PAIR)):
                with open_tab(browser) as tab:
                    url = f"{base}/{path}?{args.big}{extra}"
                    sizes[name] = measure_load(tab, url, args.quiet_ms, 300)["ws_bytes"]
            rows.append(
                {
                    "page": path or "overview",
                    "chart": CHARTS[path],
                    "clicks": clicks,
                    "redraw_ms": spread([c["redraw_ms"] for c in clicks]),
                    "idle_ms": spread([c["idle_ms"] for c in clicks]),
                    "pick_ws_mb": spread([c["ws_bytes"] for c in clicks], 1 / MB),
                    "big_ws_mb": {k: v / MB for k, v in sizes.items()},
                }
            )
            print(rows[-1]["page"], rows[-1]["redraw_ms"], rows[-1]["idle_ms"], file=sys.stderr)
    return {"machine_start": start, "machine_end": machine(), "rows": rows}


def stat_text(stat: dict | None, digits: int = 0) -> str:
    if stat is None:
        return "–"
    low, high = f"{stat['min']:.{digits}f}", f"{stat['max']:.{digits}f}"
    return f"{stat['median']:.{digits}f} ({low}–{high})"


def print_table(report: dict, big_query: str) -> None:
    print(f"machine: {json.dumps(report['machine_start'])}")
    print(
        "| page | chart clicked | click to redrawn chart (ms) | to idle (ms) | pick websocket (MB) "
        f"| {big_query} without / with a pair (MB) |"
    )
    print("|---|---|---|---|---|---|")
    for row in report["rows"]:
        big = row["big_ws_mb"]
        print(
            f"| {row['page']} | {row['chart']} | {stat_text(row['redraw_ms'])} | "
            f"{stat_text(row['idle_ms'])} | {stat_text(row['pick_ws_mb'], 3)} | "
            f"{big['without']:.2f} / {big['with']:.2f} |"
        )


if __name__ == "__main__":
    main()
