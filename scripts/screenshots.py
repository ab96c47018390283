"""Screenshot every page of a running explorer in headless Chromium.

    python scripts/screenshots.py http://127.0.0.1:8501 /tmp/shots [query string] [--width 390]
    python scripts/screenshots.py http://127.0.0.1:8501 /tmp/phone --phone

Saves <out>/<page>.png (full page) after the script run has finished, at a window of the
given width (1440 px, a laptop, by default), or as an iPhone 13 opens it (``--phone``: its
390 px screen, pixel ratio and user agent, which the app reads to lay figures out narrow).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS
from measure_browser import discover_pages
from playwright.sync_api import sync_playwright

PAGES = tuple(path.lstrip("/") for path in discover_pages().values())  # "" is the default page


def main(base_url: str, out: Path, query: str = "", width: int = 1440, phone: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = (
            browser.new_context(**pw.devices["iPhone 13"])
            if phone
            else browser.new_context(viewport={"width": width, "height": 900})
        )
        page = context.new_page()
        width = page.viewport_size["width"]
        for name in PAGES:
            page.goto(f"{base_url}/{name}{'?' + query if query else ''}")
            page.wait_for_selector(APP_IDLE, timeout=60_000)
            page.wait_for_timeout(1500)  # let plotly finish drawing
            # The main area scrolls inside the window: grow the window to show all of it.
            height = page.evaluate(
                "document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
            )
            page.set_viewport_size({"width": width, "height": min(int(height) + 40, 12000)})
            page.wait_for_timeout(800)
            page.screenshot(path=str(out / f"{name or 'overview'}.png"), full_page=True)
            page.set_viewport_size({"width": width, "height": 900})
            print("saved", out / f"{name or 'overview'}.png")
        browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base_url")
    parser.add_argument("out", type=Path)
    parser.add_argument("query", nargs="?", default="")
    parser.add_argument("--width", type=int, default=1440, help="window width in px")
    parser.add_argument("--phone", action="store_true", help="open every page as an iPhone 13")
    args = parser.parse_args()
    main(args.base_url, args.out, args.query, args.width, args.phone)
