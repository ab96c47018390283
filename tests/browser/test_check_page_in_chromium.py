"""The Check page in a real Chromium: a wrong implementation's output, uploaded through the
page's own file input, gets its verdict with the bug named and the differing cells outlined
on the chart; a right one gets "equal" and no outline."""

from __future__ import annotations

import io

import numpy as np
from playwright.sync_api import Page, expect

from explorer.frame.params import ViewParams
from explorer.stories.check.inputs import page_inputs
from relpos_core.check import KINDS
from tests.check.examples import shaw

TIMEOUT_MS = 60_000


def output_file(tmp_path, function) -> str:
    """``function`` run on the page's own inputs (n = 8, random weights), saved as .npy."""
    inputs = page_inputs("shaw", ViewParams(n=8, weights="random"))
    out = function(*KINDS["shaw"].arguments(inputs.case_dict, inputs.tensors()))
    path = tmp_path / f"{function.__name__}.npy"
    buffer = io.BytesIO()
    np.save(buffer, out.numpy())
    path.write_bytes(buffer.getvalue())
    return str(path)


def outlines(page: Page) -> int:
    chart = page.locator(".st-key-chart_check_comparison .js-plotly-plot")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    return chart.evaluate("(gd) => (gd.layout.shapes || []).filter(s => s.type === 'rect').length")


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
    assert outlines(page) == 3 * 64  # every cell of head 0 differs, outlined on three panels
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
    assert outlines(page) == 0
