"""The Skew page's stepper in a real Chromium: stepping through the four steps keeps the picked
value highlighted, hovering the highlight shows that same value in every step, and a click on a
cell picks the value it holds."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.charts import settled_box

TIMEOUT_MS = 30_000
PICK_STROKE = "rgb(242, 183, 1)"  # explorer.stories.shift.step_drawing.PICK
STEP_WORDS = ("relative", "padded", "reshaped", "sliced")


def highlight(page: Page):
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    return chart.locator(f'.shapelayer path[style*="{PICK_STROKE}"]')


def settled(page: Page) -> dict:
    """The highlight's bounding box once the chart has stopped resizing."""
    mark = highlight(page)
    expect(mark).to_have_count(1, timeout=TIMEOUT_MS)
    return settled_box(mark)


def hover_value(page: Page, box: dict) -> str:
    """Hover the centre of ``box`` and return the hover label's text."""
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = page.locator(".hoverlayer .hovertext").first
    expect(label).to_be_visible(timeout=TIMEOUT_MS)
    return label.text_content() or ""


def test_stepping_keeps_the_picked_value_highlighted_in_every_step(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/skew?n=6&i=4&j=1")
    wait_for_app_run(page)
    held = re.compile(r"q_4 · Er\[r = -3\] = (-?[\d.e+-]+)")
    seen = []
    for number, word in enumerate(STEP_WORDS, start=1):
        title = page.locator(".gtitle", has_text=f"{number}. {word}")
        expect(title).to_have_count(1, timeout=TIMEOUT_MS)
        box = settled(page)
        assert box["width"] > 5 and box["height"] > 5
        text = hover_value(page, box)
        match = held.search(text)
        assert match, (word, text)
        seen.append(match.group(1))
        if number == 4:
            assert "i = 4, j = 1" in text and "j - i = -3" in text, text
        page.mouse.move(0, 0)
        if number < 4:
            page.get_by_role("button", name="▶").click()
            wait_for_app_run(page)
    assert len(set(seen)) == 1, seen  # the same value, followed through the four steps
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_click_on_a_cell_picks_the_value_it_holds(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/skew?n=6&i=4&j=1")
    wait_for_app_run(page)
    box = settled(page)
    # step 1 is the relative layout: one cell to the right is distance r + 1, so key j + 1
    page.mouse.click(box["x"] + box["width"] * 1.5, box["y"] + box["height"] / 2)
    key = page.get_by_role("spinbutton", name="key j")
    expect(key).to_have_value("2", timeout=TIMEOUT_MS)
    page.wait_for_url(re.compile(r"[?&]j=2"), timeout=TIMEOUT_MS)
    expect(page.get_by_role("spinbutton", name="query i")).to_have_value("4")
