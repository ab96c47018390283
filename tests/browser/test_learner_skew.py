"""What a learner reads on the Skew and Transformer-XL shift pages, in a real Chromium: the
relative logit the Skew page writes for a pair is the one the Relative logits page writes (1/sqrt(d)
included); the note groups the distances that read one edge row; the step buttons stay on the
step control's line on a phone; a 40 x 40 step writes no numbers into its cells; the shift page
follows the sidebar's pair."""

from __future__ import annotations

import re

import numpy as np
from playwright.sync_api import Page, expect

from explorer.frame.params import ViewParams
from explorer.frame.tex import plain
from explorer.weights.example import example_inputs
from tests.browser.charts import settled_box

TIMEOUT_MS = 30_000
PICK_STROKE = "rgb(242, 183, 1)"  # explorer.stories.shift.step_drawing.PICK
NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"  # a number as the pages write it (.4g)
TRAINED = {"d_model": 128, "heads": 4, "mask": "causal", "weights": "trained"}  # the model's


def open_at(page: Page, url: str, wait, width: int = 1400, height: int = 1100) -> None:
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url)
    wait(page)
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def tex_sources(page: Page) -> list[str]:
    """The TeX of every formula on the page, as KaTeX keeps it beside what it draws, less the
    groups the page adds to say where a line may break (``explorer.frame.tex.plain``)."""
    return [plain(tex) for tex in page.locator(".katex annotation").all_text_contents()]


def number_in(pattern: str, texts: list[str]) -> str:
    for text in texts:
        match = re.search(pattern, text)
        if match:
            return match.group(1)
    raise AssertionError(f"{pattern!r} in none of {texts}")


def test_the_relative_logit_on_skew_is_the_one_on_logits(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    open_at(page, f"{app_server}/skew?i=4&j=2&weights=trained", wait_for_app_run)
    on_skew = number_in(r"&= " + NUMBER + r"\s*\\end\{aligned\}", tex_sources(page))
    open_at(page, f"{app_server}/logits?i=4&j=2&weights=trained", wait_for_app_run)
    card = r"a\^K_\{4,2\}\}\{\\sqrt\{(\d+)\}\} = [-\d.e+]+ \+ \(?" + NUMBER  # sqrt(d), relative
    on_logits = re.search(card, " ".join(tex_sources(page)))
    assert on_logits, tex_sources(page)
    assert on_skew == on_logits.group(2)
    # and both are q_4 · w^K_clip(-2, 2) / sqrt(d) of the model's head 0
    params = ViewParams(n=8, k=2, **TRAINED)
    inputs = example_inputs(params)
    value = inputs.q[0, 0, 4].double() @ inputs.table_k[0].double()
    assert on_skew == f"{float(value) / np.sqrt(int(on_logits.group(1))):.4g}"


def test_the_note_groups_the_distances_that_read_the_edge_row(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    """n = 40, k = 2: every j - i <= -2 reads w_-2; the note's extremes are the groups' means
    over the causal cells, by brute force on the model's q and table."""
    open_at(page, f"{app_server}/skew?n=40&i=30&j=2&weights=trained", wait_for_app_run)
    note = page.locator('[data-testid="stAlertContentInfo"]', has_text="valid cells")
    expect(note).to_have_count(1, timeout=TIMEOUT_MS)
    text = note.inner_text().replace("≤", "<=")  # the markdown draws <= as ≤
    assert "-39" not in text, text
    params = ViewParams(n=40, k=2, **TRAINED)
    inputs = example_inputs(params)
    q, table = inputs.q[0, 0].double().numpy(), inputs.table_k.double().numpy()
    groups: dict[int, list[float]] = {}
    for i in range(40):
        for j in range(i + 1):
            group = max(-2, min(2, j - i))
            groups.setdefault(group, []).append(q[i] @ table[group + 2] / np.sqrt(q.shape[1]))
    means = {g: (float(np.mean(v)), len(v)) for g, v in groups.items()}
    for g in (max(means, key=lambda g: means[g][0]), min(means, key=lambda g: means[g][0])):
        where = "j - i <= -2, which all read w_-2" if g == -2 else f"j - i = {g}"
        mean, count = means[g]
        assert f"{where} (mean {mean:.3g} over {count:,} cells)" in text, text


def test_the_step_buttons_stay_on_the_step_controls_line_on_a_phone(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    for path in ("skew?n=8", "rel_shift?n=8"):
        for width in (390, 1440):
            open_at(page, f"{app_server}/{path}", wait_for_app_run, width=width, height=2400)
            prev = settled_box(page.get_by_role("button", name="◀"))
            step = settled_box(page.get_by_role("radio", name="1 relative", exact=True))
            after = settled_box(page.get_by_role("button", name="▶"))
            for box in (prev, step, after):
                assert 0 <= box["x"] and box["x"] + box["width"] <= width, (path, width, box)
            # ◀ left of the steps, ▶ right of them, all three across one line
            assert prev["x"] + prev["width"] <= step["x"] < after["x"], (path, width)
            middle = prev["y"] + prev["height"] / 2
            assert after["y"] <= middle <= after["y"] + after["height"], (path, width, prev, after)


def test_a_40_by_40_step_writes_no_numbers_in_its_cells_and_says_so(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    open_at(page, f"{app_server}/skew?n=6", wait_for_app_run)
    expect(chart.locator(".textpoint")).to_have_count(36, timeout=TIMEOUT_MS)  # 6 x 6: r each
    open_at(page, f"{app_server}/skew?n=40", wait_for_app_run)
    expect(chart.locator(".heatmaplayer")).to_have_count(1, timeout=TIMEOUT_MS)
    assert chart.locator(".textpoint").count() == 0
    caption = page.get_by_text("step are too small to hold their distance r")
    expect(caption).to_be_visible(timeout=TIMEOUT_MS)
    assert "40 × 40" in caption.inner_text() and "hover" in caption.inner_text()


def test_the_shift_page_follows_the_sidebars_pair(
    app_server: str, page: Page, wait_for_app_run
) -> None:
    chart = page.locator('[data-testid="stPlotlyChart"]').first
    highlight = chart.locator(f'.shapelayer path[style*="{PICK_STROKE}"]')
    open_at(page, f"{app_server}/rel_shift?n=8&xl_step=5+result", wait_for_app_run)
    expect(page.get_by_text("No pair picked")).to_be_visible(timeout=TIMEOUT_MS)
    expect(highlight).to_have_count(0)

    open_at(page, f"{app_server}/rel_shift?n=8&xl_step=5+result&i=5&j=2", wait_for_app_run)
    expect(page.get_by_role("spinbutton", name="query i")).to_have_value("5")
    expect(highlight).to_have_count(1, timeout=TIMEOUT_MS)
    box = settled_box(highlight)
    centre_x, centre_y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    # the gold square sits in the column ticked "2" (key j = 2) and the row ticked "5"
    for axis, want, centre, size in (("xtick", "2", centre_x, "width"),
                                     ("ytick", "5", centre_y, "height")):  # fmt: skip
        tick = chart.locator(f".{axis} text").filter(has_text=re.compile(rf"^{want}$")).first
        tick_box = tick.bounding_box()
        assert tick_box is not None
        at = tick_box["x" if axis == "xtick" else "y"] + tick_box[size] / 2
        assert abs(at - centre) < box[size] / 2, (axis, at, centre, box)
