"""Your model in a real Chromium: a tiny T5 (save_pretrained's layout) and a tiny Shaw layer
(torch.save of a state dict) go through the command line extractor, are uploaded through the
page's own file input, and are drawn: the T5 bias lines hold the uploaded table's values, the
Shaw tables the uploaded rows; no error box. The words written over the family's T5 chart
(bucket numbers, the shaded regions' labels) overlap nowhere at a long n, wide or on a phone."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from playwright.sync_api import Browser, Page, expect

from relpos_lab.extract import from_path
from tests.lab.test_extract import shaw_model, tiny_t5

pytest.importorskip("transformers")
TIMEOUT_MS = 60_000
REPO_ROOT = __file__.rsplit("/tests/", 1)[0]


def extracted(source, out) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "relpos_lab.extract", str(source), "--out", str(out)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size < 8 * 1024, "the extracted file is kilobytes"
    return str(out)


def drawn(page: Page, key: str, expression: str):
    chart = page.locator(f".st-key-chart_{key} .js-plotly-plot")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    return chart.evaluate(expression)


def upload(page: Page, app_server: str, wait_for_app_run, path: str) -> None:
    page.set_viewport_size({"width": 1400, "height": 1100})
    page.goto(f"{app_server}/your_model?n=16&your_model_from=your+upload")
    wait_for_app_run(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(path)
    expect(page.get_by_text("Weights: your upload")).to_be_visible(timeout=TIMEOUT_MS)
    wait_for_app_run(page)
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_tiny_t5_through_extract_upload_and_page(
    app_server: str, page: Page, wait_for_app_run, tmp_path
) -> None:
    tiny_t5(tmp_path / "t5")
    path = extracted(tmp_path / "t5", tmp_path / "t5_positions.safetensors")
    upload(page, app_server, wait_for_app_run, path)
    stack = from_path(tmp_path / "t5").t5[0]  # the encoder, drawn first
    names = drawn(page, "your_model_t5", "(gd) => gd.data.map(t => t.name)")
    assert sorted(int(name.split()[1]) for name in names) == [0, 1, 2, 3]
    for trace, name in enumerate(names):
        head = int(name.split()[1])
        y = drawn(page, "your_model_t5", f"(gd) => Array.from(gd._fullData[{trace}].y)")
        x = drawn(page, "your_model_t5", f"(gd) => Array.from(gd._fullData[{trace}].x)")
        assert x[0] == -15 and x[-1] == 15
        # r = 0 is bucket 0 in both directions: the table's first row
        assert y[15] == pytest.approx(float(stack.bias[0, head]), rel=1e-6)
    assert drawn(page, "your_model_matrix", "(gd) => gd.data.length") >= 1


def test_a_tiny_shaw_layer_through_extract_upload_and_page(
    app_server: str, page: Page, wait_for_app_run, tmp_path
) -> None:
    model = shaw_model()
    torch.save(model.state_dict(), tmp_path / "shaw.pt")
    path = extracted(tmp_path / "shaw.pt", tmp_path / "shaw_positions.safetensors")
    upload(page, app_server, wait_for_app_run, path)
    expect(page.get_by_text("Shaw's tables").first).to_be_visible(timeout=TIMEOUT_MS)
    table = model["layers"][0].relative_position_k.embeddings_table.detach().numpy()
    # plotly's own decoded values (the spec's typed array, as the browser draws it)
    z = drawn(page, "your_model_shaw_tables", "(gd) => gd._fullData[0].z.map(r => Array.from(r))")
    np.testing.assert_allclose(np.asarray(z, dtype=float), table, rtol=1e-6)
    assert drawn(page, "your_model_shaw_norms", "(gd) => gd.data.length") == 2


# Every text box plotly drew for the chart's annotations, and each pair whose boxes intersect.
OVERLAPS = """(gd) => {
  const boxes = [...gd.querySelectorAll('.annotation')].map((a) => [a.textContent,
    a.querySelector('.annotation-text').getBoundingClientRect()]);
  const hits = [];
  for (let a = 0; a < boxes.length; a++) for (let b = a + 1; b < boxes.length; b++) {
    const [s, A] = boxes[a], [t, B] = boxes[b];
    if (Math.min(A.right, B.right) > Math.max(A.left, B.left)
        && Math.min(A.bottom, B.bottom) > Math.max(A.top, B.top)) hits.push([s, t]);
  }
  return {texts: boxes.map(([s]) => s), hits};
}"""


@pytest.mark.parametrize("n", [2048, 4096])
@pytest.mark.parametrize("screen", ["wide", "phone"])
def test_the_words_over_the_t5_chart_never_overlap(
    app_server: str, browser: Browser, playwright, wait_for_app_run, n, screen
) -> None:
    options = (
        playwright.devices["iPhone 13"] if screen == "phone"
        else {"viewport": {"width": 1440, "height": 1000}}
    )  # fmt: skip
    context = browser.new_context(**options)
    try:
        page = context.new_page()
        page.goto(f"{app_server}/your_model?n={n}")
        wait_for_app_run(page)
        found = drawn(page, "your_model_t5", OVERLAPS)
        numbers = [t for t in found["texts"] if t.isdigit()]
        assert len(numbers) >= 8 and {"31", "0"} <= set(numbers)  # the far and the near named
        assert "never trained" in found["texts"]
        assert found["hits"] == []
    finally:
        context.close()
