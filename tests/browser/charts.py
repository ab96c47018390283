"""Where a chart's mark is on screen, once plotly has stopped redrawing and resizing it."""

from __future__ import annotations

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator, expect

TIMEOUT_MS = 30_000


def settled_box(mark: Locator) -> dict:
    """The bounding box of ``mark``, scrolled into view (the mouse acts in the viewport, as a
    reader scrolls), once two looks 200 ms apart agree. A rerun may replace the element
    meanwhile: it is looked up again."""
    expect(mark).to_be_visible(timeout=TIMEOUT_MS)
    box = None
    for _ in range(50):
        mark.page.wait_for_timeout(200)
        try:
            mark.scroll_into_view_if_needed(timeout=2_000)
            now = mark.bounding_box(timeout=2_000)
        except PlaywrightError:
            box = None
            continue
        if now is not None and now == box:
            return now
        box = now
    raise AssertionError(f"the mark kept moving: {box}")
