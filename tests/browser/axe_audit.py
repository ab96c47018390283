"""axe-core (Deque's engine, as bundled by ``axe-playwright-python``) run on a page in Chromium,
WCAG 2.1 A and AA rules only: the violations by rule, with their impact and node count.

``python -m tests.browser.axe_audit BASE_URL [PATH ...]`` prints one line per page (the counts
the docs quote); the browser tests call :func:`audit`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
SEVERE = ("serious", "critical")
# Plotly's own SVG (its toolbar, hover layers, drag handles) is drawn by the chart library and
# exposed to assistive technology through the chart's description, not node by node.
EXCLUDE = [[".js-plotly-plot"]]


@dataclass(frozen=True)
class Violation:
    rule: str
    impact: str
    nodes: int
    help: str
    targets: tuple[str, ...]

    def line(self) -> str:
        return f"{self.rule} ({self.impact}, {self.nodes} node(s)): {self.help} {self.targets[:3]}"


def audit(page: Page, exclude: list | None = None) -> list[Violation]:
    """Every WCAG 2.1 A/AA violation axe-core finds on the page as it is now."""
    options = {"runOnly": {"type": "tag", "values": WCAG_AA}, "resultTypes": ["violations"]}
    results = Axe().run(page, context={"exclude": exclude} if exclude else None, options=options)
    return [
        Violation(
            v["id"],
            v.get("impact") or "minor",
            len(v["nodes"]),
            v["help"],
            tuple(json.dumps(n["target"]) for n in v["nodes"]),
        )
        for v in results.response["violations"]
    ]


def severe(violations: list[Violation]) -> list[Violation]:
    return [v for v in violations if v.impact in SEVERE]


def counts(violations: list[Violation]) -> dict[str, int]:
    """Rule -> number of failing nodes."""
    return {v.rule: v.nodes for v in violations}


def main(base_url: str, paths: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    from scripts.local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        for path in paths:
            page.goto(f"{base_url}/{path}")
            page.wait_for_selector(APP_IDLE, timeout=60_000)
            page.wait_for_timeout(1500)  # charts and formulas draw lazily
            found = audit(page)
            print(path or "overview", json.dumps(counts(found)), flush=True)
            for v in found:
                print("   ", v.line(), flush=True)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or [""])
