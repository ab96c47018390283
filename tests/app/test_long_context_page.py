"""The Long context page through app.py: each figure equals its definition or the stored run,
each note reads the numbers drawn, and its controls are bound to the URL."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from explorer.stories.long_context import text, views
from relpos_core.schemes import rope_frequencies
from relpos_lab.family.long_context import LONG_FILE
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page

pytestmark = pytest.mark.skipif(not LONG_FILE.exists(), reason="no stored long-context run")


def values(array) -> np.ndarray:
    """A plotly array as numpy, whether it travelled as a typed array or a list."""
    if isinstance(array, dict):
        import base64

        raw = base64.b64decode(array["bdata"])
        return np.frombuffer(raw, array["dtype"]).reshape(array.get("shape", -1))
    return np.asarray(array, dtype=float)


def infos(at) -> list[str]:
    """The page's notes, unescaped as a reader sees them."""
    return [element.value.replace("\\", "") for element in at.info]


@pytest.fixture(scope="module")
def page():
    return open_page("long_context", lc_base="100000", lc_factor="8", n="300")


def test_the_page_draws_every_figure(page):
    assert_clean(page)
    keys = chart_keys(page)
    for key in ("lc_wavelengths", "lc_decay", "lc_scaled", "lc_zero_shot", "lc_sinks"):
        assert key in keys


def test_wavelengths_follow_the_base_from_the_url(page):
    bars = chart_spec(page, "lc_wavelengths")["data"][0]
    theta, _ = rope_frequencies(32, 100_000.0)
    np.testing.assert_allclose(values(bars["y"]), 2 * math.pi / theta.numpy(), rtol=1e-6)
    w = views.wavelengths(100_000, 300)
    assert text.wavelength_note(w) in infos(page)
    # base 100,000, d = 32: 2 pi 100000^(2t/32) = 6.3, 12.9, 26.5, 54.4, 111.7, 229.4, 471, ...
    assert w.turning(64) == 4 and "4 of 16 pairs complete a turn" in text.wavelength_note(w)
    assert "within n = 300, 6 do" in text.wavelength_note(w)  # 229 <= 300 < 471


def test_decay_is_the_bound_and_the_trained_mean(page):
    spec = chart_spec(page, "lc_decay")
    d = views.decay(100_000)
    np.testing.assert_allclose(values(spec["data"][0]["y"]), d.bound, rtol=1e-6)
    np.testing.assert_allclose(values(spec["data"][2]["y"]), d.mean_logit[0, 0], rtol=1e-5)
    assert text.decay_note(d, 0) in infos(page)
    assert d.bound[0] == pytest.approx(8.5)  # (1 + ... + 16) / 16 at r = 0


def test_scaled_wavelengths_at_the_urls_factor(page):
    spec = chart_spec(page, "lc_scaled")
    names = [trace["name"] for trace in spec["data"]]
    assert names == ["none", "linear", "dynamic", "yarn", "llama3"]
    linear = values(spec["data"][1]["y"])
    np.testing.assert_allclose(linear, 8 * values(spec["data"][0]["y"]), rtol=1e-6)
    note = text.scaled_note(views.scaled(8))
    assert note in infos(page) and "linear keeps 0 pairs and stretches the slowest 8.0x" in note


def test_zero_shot_and_sinks_read_the_stored_run(page):
    record = json.loads(LONG_FILE.read_text())
    spec = chart_spec(page, "lc_zero_shot")
    for trace in spec["data"]:
        want = [record["zero_shot"][trace["name"]][str(n)] for n in record["lengths"]]
        np.testing.assert_allclose(values(trace["y"]), want, rtol=1e-6)
    m = views.measured()
    rows = [trace["name"] for trace in spec["data"]]
    assert rows[0] == "none" and all(row.endswith("s = ratio") for row in rows[1:])
    assert text.zero_shot_note(m, rows) in infos(page)
    sinks = chart_spec(page, "lc_sinks")
    first = sinks["data"][0]
    share = np.array(record["sinks"]["share"][first["name"]])[0].max(0)
    np.testing.assert_allclose(values(first["y"]), share, rtol=1e-6)
    assert text.sink_note(m, 0) in infos(page)
    table = [e.value for e in page.markdown if e.value.startswith("| model | every key")]
    assert table == [text.window_table(m)]


def test_the_notes_say_what_the_numbers_say():
    m = views.measured()
    rows = ["none", *(row for row in m.zero_shot if row.endswith("s = ratio"))]
    note = text.zero_shot_note(m, rows)
    best = min(rows, key=lambda row: m.zero_shot[row][-1])
    assert f"Best: {best} ({m.zero_shot[best][-1]:.2f})" in note
    assert f"RoPE alone spends {m.zero_shot['none'][-1]:.2f}" in note
    helped = [n for n, w in m.window.items() if w["keep"] < w["drop"] - 0.01]
    assert f"helps {', '.join(helped) or 'no model'}" in text.sink_note(m, 0)


def test_the_controls_change_the_view():
    at = open_page("long_context")
    assert_clean(at)
    at.select_slider(key="lc_base").set_value(1_000).run()
    assert_clean(at)
    bars = chart_spec(at, "lc_wavelengths")["data"][0]
    theta, _ = rope_frequencies(32, 1_000.0)
    np.testing.assert_allclose(values(bars["y"]), 2 * math.pi / theta.numpy(), rtol=1e-6)
    at.segmented_control(key="lc_rule").set_value("s = 4").run()
    assert_clean(at)
    rows = [trace["name"] for trace in chart_spec(at, "lc_zero_shot")["data"]]
    assert rows[1:] == ["linear, s = 4", "dynamic, s = 4", "yarn, s = 4", "llama3, s = 4"]


def test_a_bad_url_value_falls_back_in_words():
    at = open_page("long_context", lc_factor="3", lc_base="7")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "lc_factor: must be one of 2, 4, 8, 16, got '3'; using 4" in warnings
    assert "lc_base: must be one of 100, 1,000, 10,000, 100,000, 1,000,000, got '7'" in warnings
    assert {"lc_wavelengths", "lc_scaled"} <= chart_keys(at)
