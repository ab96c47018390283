"""What a learner reads under a weights map, in a real Chromium: the note names the key or
distance the drawn weights actually favour (read back from the chart plotly drew)."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from tests.explorer.head_brute import assert_note_reads, brute_reading, parse_head_note

TIMEOUT_MS = 30_000

# every heatmap panel of a chart as plotly holds it (z decoded from its typed array), NaN = blank
PANELS_JS = """el => el._fullData.filter(t => t.type === 'heatmap').map(
    t => Array.from(t.z, row => Array.from(row, v => (v === null ? NaN : Number(v)))))"""


def drawn_panels(page: Page, key: str) -> list[np.ndarray]:
    """The heatmap panels of the chart with key ``chart_<key>``, as the browser drew them."""
    chart = page.locator(f".st-key-chart_{key} .js-plotly-plot")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    return [np.asarray(z, dtype=np.float64) for z in chart.evaluate(PANELS_JS)]


def key_labels(page: Page, key: str) -> list[str]:
    """The key axis' tick labels of the chart with key ``chart_<key>``, as plotly drew them."""
    chart = page.locator(f".st-key-chart_{key} .js-plotly-plot")
    return chart.evaluate("el => Array.from(el._fullLayout.xaxis.ticktext)")


def info_text(page: Page, starts: str) -> str:
    """The text of the info box that starts with ``starts``, as shown."""
    box = page.locator('[data-testid="stAlertContentInfo"]').filter(has_text=starts).first
    expect(box).to_be_visible(timeout=TIMEOUT_MS)
    text = box.get_by_test_id("stMarkdownContainer").inner_text()  # without the icon's name
    assert text.startswith(starts), text
    return text.replace("\n", " ")


def test_multihead_trained_note_names_the_fixed_key_head_1_reads(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/multihead?weights=trained")
    wait_for_app_run(page)
    panels = drawn_panels(page, "multihead_weights")
    assert len(panels) == 4
    note = info_text(page, "Head 0 ")
    sentences = [f"Head {s}" for s in note.split("Head ")[1:]]
    for panel, sentence in zip(panels, sentences, strict=True):
        assert_note_reads(sentence.strip(), brute_reading(panel))
    head_1 = brute_reading(panels[1])
    assert head_1["kind"] == "key" and head_1["share"] > 0.8  # a fixed key, not a distance
    said = parse_head_note(sentences[1])
    assert (said["kind"], said["at"], said["pattern"]) == ("key", head_1["at"], "key")
    key = key_labels(page, "multihead_weights")[head_1["at"]]
    assert f"one fixed character (j = {head_1['at']}, '{key}') whatever the query" in sentences[1]


def test_compare_trained_note_names_the_first_token_rope_reads(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.goto(f"{app_server}/compare?weights=trained")
    wait_for_app_run(page)
    shaw, rope = drawn_panels(page, "compare_weights")[:2]
    note = info_text(page, "A, ")
    first, second = note.split(" B, ")
    assert_note_reads(first, brute_reading(shaw))
    assert_note_reads(second, brute_reading(rope))
    rope_reading = brute_reading(rope)
    assert (rope_reading["kind"], rope_reading["at"]) == ("key", 0)
    key_0 = key_labels(page, "compare_weights")[0]  # the key axis' label, as drawn
    assert f"the first character (j = 0, '{key_0}') whatever the query" in second
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_note_sits_under_the_weights_and_fits_the_page(
    app_server: str, page: Page, wait_for_app_run, width: int
) -> None:
    """The note box is as wide as the page's column at a desktop's and a phone's width."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{app_server}/multihead?weights=trained")
    wait_for_app_run(page)
    box = page.locator('[data-testid="stAlertContentInfo"]').filter(has_text="Head 0 ").first
    expect(box).to_be_visible(timeout=TIMEOUT_MS)
    chart = page.locator(".st-key-chart_multihead_weights").bounding_box()
    note = box.bounding_box()
    assert note["y"] > chart["y"] and note["x"] + note["width"] <= width
