"""What a learner sees on the Lookup table and Relative logits pages, in a real Chromium: the table
rows and cells a causal model never reads drawn grey and explained, the characters a model cannot
read flagged and every character on the heatmap axes, and a zoom on its own colour scale under a
note whose share and counts are written as they are."""

from __future__ import annotations

import io
import re
from urllib.parse import quote

import numpy as np
from PIL import Image
from playwright.sync_api import Page, expect

from explorer.weights.reading import shown
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import UNKNOWN
from tests.browser.charts import settled_box

TIMEOUT_MS = 30_000
GREY = np.array([217, 217, 217])  # explorer.figures.plots.MASKED_BACKGROUND: a blank cell
TYPED = "naïve café — 東京 😀 <b>x</b> $y$"


def cell_colours(page: Page, chart: str, rows: int, cols: int, panel: int = 0) -> np.ndarray:
    """(rows, cols, 3) RGB at the centre of each cell of panel ``panel`` of ``chart_<chart>``,
    as the screen shows it (the panel's plot area is its drag rectangle)."""
    area = page.locator(f".st-key-chart_{chart} .draglayer .nsewdrag").nth(panel)
    box = settled_box(area)
    shot = Image.open(io.BytesIO(page.screenshot(clip=box))).convert("RGB")
    pixels = np.asarray(shot.resize((round(box["width"]), round(box["height"]))))
    ys = ((np.arange(rows) + 0.5) * pixels.shape[0] / rows).astype(int)
    xs = ((np.arange(cols) + 0.5) * pixels.shape[1] / cols).astype(int)
    return pixels[np.ix_(ys, xs)].astype(int)


def grey(colours: np.ndarray) -> np.ndarray:
    return (np.abs(colours - GREY) <= 4).all(axis=-1)


def test_rows_and_cells_a_causal_model_never_reads_are_grey_and_explained(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    page.set_viewport_size({"width": 1440, "height": 1100})
    page.goto(f"{app_server}/lookup?weights=trained&k=2")
    wait_for_app_run(page)
    expect(
        page.get_by_text(re.compile(r"a causal model never reads w_\+1\.\.w_\+2, so they keep"))
    ).to_be_visible()
    for panel in (0, 1):  # w^K, w^V: rows w_-2..w_+2, the last two never trained
        blank = grey(cell_colours(page, "tables", 5, 32, panel)).all(axis=1)
        assert blank.tolist() == [False, False, False, True, True], blank
    note = page.locator('[data-testid="stAlertContentInfo"]').first.inner_text()
    assert "w_+2" not in note.split(";")[0] and "no pair reads w_+1..w_+2" in note

    page.goto(f"{app_server}/logits?weights=trained&k=2")
    wait_for_app_run(page)
    ahead = np.triu(np.ones((8, 8), bool), 1)
    for panel in range(4):  # every head's relative term: keys ahead grey, the rest coloured
        assert (grey(cell_colours(page, "logits_heads", 8, 8, panel)) == ahead).all(), panel
    caption = page.get_by_text(re.compile(r"^shape \(1, 4, 8, 8\) · Grey cells are masked"))
    expect(caption.first).to_contain_text("a causal model never reads w_+1..w_+2 there")
    expect(page.get_by_text("every key 2 or more ahead")).to_have_count(0)

    page.goto(f"{app_server}/logits?weights=random&k=2")  # no mask, nothing trained: all drawn
    wait_for_app_run(page)
    assert not grey(cell_colours(page, "logits_heads", 8, 8, 0)).any()


def evenly_spaced_characters(ticks: list[str]) -> bool:
    """Each panel's ticks (concatenated, panel after panel) name every m-th character of the
    text from the first, m <= 3: every one where the cells leave a label room."""
    for step in (1, 2, 3):
        one = [shown(c) for c in TYPED[::step]]
        if ticks and len(ticks) % len(one) == 0 and ticks == one * (len(ticks) // len(one)):
            return True
    return False


def test_typed_characters_the_model_cannot_read_are_flagged_and_on_the_axes(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    _, vocabulary = load_with_vocabulary("shaw-k2")
    ids = vocabulary.encode(TYPED).tolist()
    unread = [c for c, i in zip(TYPED, ids, strict=True) if i == UNKNOWN]
    page.set_viewport_size({"width": 1440, "height": 1100})
    page.goto(f"{app_server}/logits?text={quote(TYPED)}&layer=2&weights=trained")
    wait_for_app_run(page)
    flag = page.locator('[data-testid="stAlertContentWarning"]', has_text="cannot read")
    expect(flag).to_have_count(1, timeout=TIMEOUT_MS)
    text = flag.inner_text()
    assert f"cannot read {len(unread)} of the {len(TYPED)} characters" in text, text
    assert ", ".join(dict.fromkeys(unread)) + " are outside" in text, text  # $ shown literally
    assert flag.locator(".katex").count() == 0  # no $...$ read as maths
    for chart in ("logits_heads", "logits_head"):  # characters on both axes, evenly spaced
        figure = page.locator(f".st-key-chart_{chart}")
        figure.scroll_into_view_if_needed()
        expect(figure.locator(".xtick text").first).to_be_visible(timeout=TIMEOUT_MS)
        for axis in ("xtick", "ytick"):
            ticks = figure.locator(f".{axis} text").all_text_contents()
            assert evenly_spaced_characters(ticks), (chart, axis, ticks)


def test_the_zoom_has_its_own_scale_and_the_note_its_true_share(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    n, k = 2048, 1
    distance = np.arange(n)[None, :] - np.arange(n)[:, None]
    beyond = int((np.abs(distance) > k).sum())
    page.set_viewport_size({"width": 1440, "height": 1100})
    page.goto(f"{app_server}/lookup?n={n}&k={k}&weights=random")
    wait_for_app_run(page)
    note = page.locator('[data-testid="stAlertContentInfo"]').first.inner_text()
    assert f"the {beyond:,} pairs with |j - i| > {k}" in note and f"of all {n * n:,}" in note
    share = float(re.search(r"\(([\d.]+)% of all", note).group(1))
    assert 0 < share < 100 and abs(share - 100 * beyond / n**2) < 0.01, note  # 99.85%
    zoom = page.locator(".st-key-chart_lookup_zoom_zoom")
    bar = zoom.locator(".colorbar").first  # the distance panel's own bar
    expect(bar).to_be_visible(timeout=TIMEOUT_MS)
    ticks = [float(t.replace("−", "-")) for t in bar.locator(".cbaxis text").all_text_contents()]
    assert ticks and max(abs(t) for t in ticks) <= 31, ticks  # the zoom's j - i, not ±511
    expect(page.get_by_text(re.compile("Each zoom panel has its own colour scale"))).to_be_visible()
