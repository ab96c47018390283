"""Load test: several real browser tabs move the controls at random against one served app.

    python scripts/load_test.py [--sessions 8] [--seconds 60] [--seed 0] [--json out.json]

Starts ``streamlit run app.py`` (the flags of tests/browser/conftest.py) on a free port, opens
``--sessions`` tabs in Debian's Chromium (one browser, one context per tab, so one Streamlit
session each) and, for ``--seconds``, lets every tab pick random actions: move n (up to 4096),
k, the window start, heads, d_model, the mask, switch pages, click "Measure now". After each
action a tab waits for the rerun to finish and counts exception and error boxes. Meanwhile the
server's resident memory (VmRSS of the server and its child processes, /proc) is sampled every
0.5 s. Prints a summary table and exits 1 if any tab saw an exception or error box.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

from local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS, REPO, served_app
from playwright.async_api import Page, async_playwright


def navigation_pages() -> dict[str, str]:
    """Page title -> URL path without the slash, for every page of the navigation."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from explorer.frame.navigation import PAGES as NAVIGATION
    from explorer.frame.navigation import url_path

    return {page.title: url_path(page).lstrip("/") for page in NAVIGATION}


PAGES = navigation_pages()
N_VALUES = (1, 8, 64, 300, 512, 700, 1024, 2048, 3000, 4096)
EXCEPTION = '[data-testid="stException"]'
ERROR_BOX = '[data-testid="stAlertContentError"]'
RUN_TIMEOUT_MS = 120_000


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc/*/stat parent ids)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(parents.get(current, []))
    return tree


def rss_bytes(pid: int) -> int:
    total = 0
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class RssSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            self.samples.append((time.monotonic() - start, rss_bytes(self.pid)))
            self.stop.wait(self.every)


async def wait_for_run(page: Page) -> None:
    await page.wait_for_timeout(250)  # let the rerun start before waiting for its end
    await page.wait_for_selector(APP_IDLE, timeout=RUN_TIMEOUT_MS)


async def set_slider(page: Page, label: str, value: int) -> bool:
    """Move a slider as a keyboard user would: Streamlit commits a value on a key press, so
    set the value next to ``value`` and press the arrow key that lands on it."""
    slider = page.get_by_role("slider", name=label)
    if not await slider.count() or await slider.first.is_disabled():
        return False
    slider = slider.first
    low = int(await slider.get_attribute("min") or 0)
    high = int(await slider.get_attribute("max") or value)
    value = max(low, min(high, value))
    if value > low:
        await slider.fill(str(value - 1))
        await slider.press("ArrowRight")
    else:
        await slider.fill(str(value + 1))
        await slider.press("ArrowLeft")
    return True


async def choose(page: Page, label: str, option: str) -> bool:
    box = page.get_by_role("combobox", name=label, exact=True)
    if not await box.count():
        return False
    await box.first.click()
    await page.get_by_role("option", name=option, exact=True).first.click()
    return True


async def act(page: Page, base_url: str, rng: random.Random) -> str:
    """One random action; returns its description (or '' if it did not apply here)."""
    kind = rng.choice(["n", "n", "k", "window", "heads", "d_model", "mask", "page", "page"])
    if kind == "n":
        value = rng.choice(N_VALUES)
        return f"n={value}" if await set_slider(page, "n (sequence length)", value) else ""
    if kind == "k":
        value = rng.randint(0, 64)
        return f"k={value}" if await set_slider(page, "k (clip distance)", value) else ""
    if kind == "window":
        value = rng.randint(0, 3584)
        label = "window start (heatmaps show 512 positions)"
        return f"win={value}" if await set_slider(page, label, value) else ""
    if kind in ("heads", "d_model"):
        options = ("1", "2", "4", "8") if kind == "heads" else ("8", "16", "32", "64", "128")
        value = rng.choice(options)
        return f"{kind}={value}" if await choose(page, kind, value) else ""
    if kind == "mask":
        value = rng.choice(["none", "causal", "padding", "causal-padding"])
        await page.get_by_text(value, exact=True).first.click()
        return f"mask={value}"
    title = rng.choice(list(PAGES))
    await page.get_by_role("link", name=title, exact=True).first.click()
    if title == "Speed & memory" and rng.random() < 0.5:
        await page.wait_for_selector(APP_IDLE, timeout=RUN_TIMEOUT_MS)
        button = page.get_by_role("button", name="Measure now")
        if await button.is_enabled():  # disabled when every size is over the memory budget
            await button.click()
            return "page=speed + measure"
    return f"page={PAGES[title] or 'overview'}"


async def session(
    index: int, browser, base_url: str, seconds: float, seed: int, report: dict
) -> None:
    rng = random.Random(seed * 1000 + index)
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    stats = {"session": index, "actions": 0, "exceptions": 0, "error_boxes": 0, "log": []}
    stats["kinds"], stats["urls_with_large_n"] = {}, 0
    report["sessions"].append(stats)
    await page.goto(f"{base_url}/{rng.choice(list(PAGES.values()))}")
    await page.wait_for_selector(APP_IDLE, timeout=RUN_TIMEOUT_MS)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            done = await act(page, base_url, rng)
            if not done:
                continue
            await wait_for_run(page)
        except Exception as error:  # a control not found in time: note it, carry on
            state = await page.evaluate(
                "(() => { const app = document.querySelector('[data-testid=stApp]');"
                " return app ? [app.dataset.testConnectionState, app.dataset.testScriptState]"
                " : null; })()"
            )
            stats["log"].append(
                f"action failed on {page.url} (connection, script: {state}): "
                f"{type(error).__name__}: {str(error)[:160]}"
            )
            continue
        stats["actions"] += 1
        kind = done.split("=")[0]
        stats["kinds"][kind] = stats["kinds"].get(kind, 0) + 1
        stats["urls_with_large_n"] += any(f"n={n}" in page.url for n in (1024, 2048, 3000, 4096))
        exceptions = await page.locator(EXCEPTION).count()
        errors = await page.locator(ERROR_BOX).count()
        if exceptions or errors:
            texts = await page.locator(f"{EXCEPTION}, {ERROR_BOX}").all_inner_texts()
            stats["log"].append(f"after {done} on {page.url}: {' | '.join(texts)[:400]}")
        stats["exceptions"] += exceptions
        stats["error_boxes"] += errors
    await context.close()


async def drive(base_url: str, sessions: int, seconds: float, seed: int) -> dict:
    report: dict = {"sessions": []}
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        # Until one run of app.py has called st.navigation, Streamlit serves a deep link
        # (/lookup) from the pages/ folder without app.py: open the root once first.
        warm = await browser.new_page()
        await warm.goto(base_url)
        await warm.wait_for_selector(APP_IDLE, timeout=RUN_TIMEOUT_MS)
        await warm.close()
        await asyncio.gather(
            *(session(i, browser, base_url, seconds, seed, report) for i in range(sessions))
        )
        await browser.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    log_path = Path(f"/tmp/load_test_server_{os.getpid()}.log")
    with served_app(log_path) as (base_url, server):
        sampler = RssSampler(server.pid)
        sampler.start()
        time.sleep(1.0)
        try:
            started = time.monotonic()
            report = asyncio.run(drive(base_url, args.sessions, args.seconds, args.seed))
            report["wall_s"] = round(time.monotonic() - started, 1)
        finally:
            sampler.stop.set()
            sampler.join()
    rss = [value for _, value in sampler.samples]
    mb = 2**20
    report["rss_mb"] = {
        "start": round(rss[0] / mb, 1),
        "peak": round(max(rss) / mb, 1),
        "end": round(rss[-1] / mb, 1),
        "samples": len(rss),
        # the highest RSS in each 30 s of the run: a plateau, not a slope, means bounded
        "peak_per_30s": [
            round(max(v for t, v in sampler.samples if lo <= t < lo + 30) / mb, 1)
            for lo in range(0, int(sampler.samples[-1][0]) + 1, 30)
            if any(lo <= t < lo + 30 for t, _ in sampler.samples)
        ],
    }
    print(f"{'session':>7} {'actions':>8} {'exceptions':>11} {'error boxes':>12}")
    for stats in report["sessions"]:
        print(
            f"{stats['session']:>7} {stats['actions']:>8} {stats['exceptions']:>11} "
            f"{stats['error_boxes']:>12}"
        )
        for line in stats["log"][:5]:
            print(f"        {line}")
    total = {key: sum(s[key] for s in report["sessions"]) for key in ("actions", "exceptions")}
    errors = sum(s["error_boxes"] for s in report["sessions"])
    print(
        f"{len(report['sessions'])} sessions, {args.seconds:.0f} s: {total['actions']} actions, "
        f"{total['exceptions']} exception boxes, {errors} error boxes; server RSS (MiB) "
        f"start {report['rss_mb']['start']}, peak {report['rss_mb']['peak']}, "
        f"end {report['rss_mb']['end']} ({report['rss_mb']['samples']} samples every 0.5 s)"
    )
    print(f"server RSS peak per 30 s (MiB): {report['rss_mb']['peak_per_30s']}")
    kinds: dict[str, int] = {}
    for stats in report["sessions"]:
        for kind, count in stats["kinds"].items():
            kinds[kind] = kinds.get(kind, 0) + count
    large = sum(s["urls_with_large_n"] for s in report["sessions"])
    print(f"actions by kind: {kinds}; actions with n >= 1024 in the URL: {large}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    sys.exit(1 if total["exceptions"] or errors else 0)


if __name__ == "__main__":
    main()
