"""The Check page in a real Chromium: a wrong implementation's output, uploaded through the
page's own file input, gets its verdict with the bug named and every differing cell hatched
on the chart; a right one gets "equal" and no hatch; the uploader's own size limit and the
page's are one number of bytes; the picked pair is outlined."""

from __future__ import annotations

import contextlib
import io

import numpy as np
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from explorer.frame.params import ViewParams
from explorer.stories.check.inputs import page_inputs
from explorer.stories.check.upload import MAX_BYTES
from relpos_core.check import KINDS
from tests.check.examples import shaw

TIMEOUT_MS = 60_000


def npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array))
    return buffer.getvalue()


def output_file(tmp_path, function) -> str:
    """``function`` run on the page's own inputs (n = 8, random weights), saved as .npy."""
    inputs = page_inputs("shaw", ViewParams(n=8, weights="random"))
    out = function(*KINDS["shaw"].arguments(inputs.case_dict, inputs.tensors()))
    path = tmp_path / f"{function.__name__}.npy"
    buffer = io.BytesIO()
    np.save(buffer, out.numpy())
    path.write_bytes(buffer.getvalue())
    return str(path)


HATCHED = """(gd) => gd._fullData.filter(t => t.name === 'differing cells').map(t => {
    let cells = 0;
    for (let r = 0; r + 1 < t.x.length; r += 6) cells += t.x[r + 1] - t.x[r];
    return cells;
})"""


def hatched(page: Page, want: list[int]) -> list[int]:
    """The cells each panel's hatch covers, as plotly.js decoded it (every closed rectangle of
    a hatch trace, five corners and a gap, spans x1 - x0 cells of one row), once the chart
    shows ``want`` or the wait ends: the chart redraws after the run that sent it."""
    chart = page.locator(".st-key-chart_check_comparison .js-plotly-plot")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(
            f"(want) => {{ const gd = document.querySelector("
            f"'.st-key-chart_check_comparison .js-plotly-plot'); return gd && gd._fullData && "
            f"JSON.stringify(({HATCHED})(gd)) === JSON.stringify(want); }}",
            arg=want,
            timeout=TIMEOUT_MS,
        )
    return chart.evaluate(HATCHED)


def test_a_wrong_upload_is_named_and_outlined(
    app_server: str, page: Page, wait_for_app_run, tmp_path
):
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/check?weights=random&n=8")
    wait_for_app_run(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        output_file(tmp_path, shaw.wrong_i_minus_j)
    )
    verdict = page.get_by_text("it matches a known bug: the tables are read at i - j")
    expect(verdict).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    assert hatched(page, [64] * 3) == [64] * 3  # every cell of head 0 differs, on all three panels
    chart = page.locator(".st-key-chart_check_comparison")
    assert chart.locator("pattern").count() >= 3  # the hatch is drawn, as a fill pattern
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_right_upload_is_equal_with_no_outline(
    app_server: str, page: Page, wait_for_app_run, tmp_path
):
    page.goto(f"{app_server}/check?weights=random&n=8")
    wait_for_app_run(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
        output_file(tmp_path, shaw.right_gather)
    )
    expect(page.get_by_text("Verdict: equal")).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    assert hatched(page, []) == []


def test_the_uploaders_limit_and_the_pages_are_one_number_of_bytes(
    app_server: str, page: Page, wait_for_app_run, tmp_path
):
    """8,000,000 bytes pass the uploader and reach the page (which judges their shape); one
    byte more is refused by the uploader itself, in the words the page's help uses."""
    page.goto(f"{app_server}/check?weights=random&n=8")
    wait_for_app_run(page)
    expect(page.get_by_text("8MB per file")).to_be_visible(timeout=TIMEOUT_MS)
    header = len(npy_bytes(np.zeros(0)))
    exact = npy_bytes(np.zeros((MAX_BYTES - header) // 8))
    assert len(exact) == MAX_BYTES
    (tmp_path / "exact.npy").write_bytes(exact)
    (tmp_path / "over.npy").write_bytes(exact + b"\x00")
    dropzone = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files(str(tmp_path / "exact.npy"))
    expect(page.get_by_text("returned shape (999984,)")).to_be_visible(timeout=TIMEOUT_MS)
    dropzone.set_input_files(str(tmp_path / "over.npy"))
    expect(page.get_by_text("File must be 8.0MB or smaller.")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_the_picked_pair_is_outlined_on_the_check_page(
    app_server: str, page: Page, wait_for_app_run
):
    page.goto(f"{app_server}/check?weights=random&n=8&check_kind=skew&i=5&j=3")
    wait_for_app_run(page)
    outline = page.locator(
        '.st-key-chart_check_reference .shapelayer path[style*="rgb(242, 183, 1)"]'
    )
    expect(outline.first).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Picked pair (i, j) = (5, 3), j - i = -2")).to_be_visible()
