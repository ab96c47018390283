"""The Long context page through app.py: each figure equals its definition or the stored run,
each note reads the numbers drawn, and its controls are bound to the URL."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

from explorer.stories.long_context import text, views
from relpos_core.schemes import rope_frequencies
from relpos_core.schemes.rope import rope_decay_bound
from relpos_lab.family.long_context import LONG_FILE
from relpos_lab.family.registry import model_words
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page

pytestmark = pytest.mark.skipif(not LONG_FILE.exists(), reason="no stored long-context run")


def values(array) -> np.ndarray:
    """A plotly array as numpy, whether it travelled as a typed array or a list."""
    if isinstance(array, dict):
        import base64

        raw = base64.b64decode(array["bdata"])
        shape = [int(side) for side in str(array.get("shape", -1)).split(",")]
        return np.frombuffer(raw, array["dtype"]).reshape(shape)
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
    hurt = [n for n, w in m.window.items() if w["keep"] > w["drop"] + 0.01]
    note = text.sink_note(m, 0)
    assert f"helps {text.listed(helped)} and hurts {text.listed(hurt)}" in note
    for name in helped + hurt:  # each model in words, never by its file name
        assert model_words(name) in note and f" {name} " not in note


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


# ---- what each control and note reads -------------------------------------------------------


def test_the_download_reads_each_sections_own_layer():
    from tests.app.downloaded import csv_arrays, open_with_download

    at, files = open_with_download("long_context", lc_decay_layer="1", lc_sink_layer="2")
    assert_clean(at)
    record = json.loads(LONG_FILE.read_text())
    tables = csv_arrays(files)
    sinks = tables[next(name for name in tables if name.endswith("sink_share.csv"))]
    for column, share in enumerate(record["sinks"]["share"].values()):
        np.testing.assert_allclose(sinks[:, column], np.array(share)[2].max(0), rtol=1e-5)
    means = tables[next(name for name in tables if name.endswith("mean_logit.csv"))]
    np.testing.assert_allclose(means, np.array(record["decay"]["mean_logit"])[1].T, atol=1e-4)


def test_the_sink_caption_names_the_measured_lengths_whatever_n():
    captions = []
    for n in ("8", "2048"):
        at = open_page("long_context", n=n)
        assert_clean(at)
        captions.append([c.value for c in at.caption if "attention on the first" in c.value])
    assert captions[0] == captions[1] and len(captions[0]) == 1
    lengths = json.loads(LONG_FILE.read_text())["lengths"]
    words = captions[0][0].replace("\\", "")
    assert f"texts of n = {lengths[0]:,} to {lengths[-1]:,} characters" in words
    assert ", ".join(f"{n:,}" for n in lengths) in words and "whatever the sidebar's n" in words


def test_llama3s_thresholds_are_those_its_rule_applies():
    """The numbers under Llama 3's rule are the trained model's L0 = 64 and the catalogue's
    l = 1, h = 4, and the rule keeps theta_t below L0/h and divides it by s above L0/l."""
    at = open_page("long_context", lc_factor="8")
    assert_clean(at)
    captions = [c.value.replace("\\", "") for c in at.caption]
    said = [c for c in captions if "Llama 3.1's own" in c]
    assert said == [
        "Here L0 = 64, the trained model's length (Llama 3.1's own is 8,192), s = 8, l = 1, "
        "h = 4: a wavelength below L0/h = 16 characters keeps θ_t, one above L0/l = 64 takes "
        "θ_t / s."
    ]
    from relpos_lab.family.long_context import scaling_config

    theta, _ = rope_frequencies(32, 10_000.0)
    scaled, _ = rope_frequencies(32, 10_000.0, scaling_config("llama3", 8, 64), seq_len=512)
    wavelength = 2 * math.pi / theta
    short, long = wavelength < 16, wavelength > 64
    assert short.any() and long.any()
    np.testing.assert_allclose(scaled[short], theta[short], rtol=1e-12)
    np.testing.assert_allclose(scaled[long], theta[long] / 8, rtol=1e-12)


# a count of exactly one before a plural noun or verb ("11 pairs" is no slip)
PLURAL_SLIP = re.compile(r"(?<![\d.,])1 (pairs|keys|characters|queries|texts|do\b|turn fully)")


@pytest.mark.parametrize("n", [2, 8, 300, 2048])
def test_counts_agree_with_their_nouns_at_every_setting(n):
    notes = []
    for base in views.BASES:
        w = views.wavelengths(base, n)
        notes.append(text.wavelength_note(w))
        d = views.decay(base)
        for distance in (-n + 1, -1, 0, 1, n - 1):
            notes.append(text.pair_note(views.at_distance(w, d, distance), 0, 0))
    notes += [text.scaled_note(views.scaled(s)) for s in views.FACTORS]
    m = views.measured()
    notes += [text.sink_note(m, 0), text.sink_caption(m, *views.SINK)]
    for note in notes:
        assert not PLURAL_SLIP.search(note), note
    if n == 8:  # base 1,000,000: only pair 0 (wavelength 2 pi) turns within 8 characters
        assert "within n = 8, 1 does" in text.wavelength_note(views.wavelengths(1_000_000, 8))
    assert "dynamic keeps 1 pair and" in text.scaled_note(views.scaled(4))


@pytest.mark.parametrize("key", ["lc_sinks", "lc_zero_shot", "lc_scaled", "lc_decay"])
def test_no_line_is_told_by_colour_alone(page, key):
    """Each model's or head's line has a marker symbol and dash no other line of its chart has."""
    lines = [t for t in chart_spec(page, key)["data"] if "markers" in t.get("mode", "")]
    cues = [(t["marker"]["symbol"], t["line"]["dash"]) for t in lines]
    assert len(lines) >= 4 and len(set(cues)) == len(cues), cues
    assert len({symbol for symbol, _ in cues}) == len(cues)


# ---- the picked pair, read at its distance ----------------------------------------------------


def picked(spec: dict) -> list[dict]:
    return [s for s in spec["layout"].get("shapes", []) if s.get("name") == "picked distance"]


def test_a_picked_pair_is_read_at_its_distance():
    at = open_page("long_context", n="300", i="40", j="3", lc_decay_layer="2")
    assert_clean(at)
    theta, _ = rope_frequencies(32, 10_000.0)
    bars = chart_spec(at, "lc_wavelengths")["data"][0]
    angle = values(bars["customdata"]).reshape(-1, 2)
    np.testing.assert_allclose(angle[:, 0], -37 * theta.numpy(), rtol=1e-5)
    np.testing.assert_allclose(angle[:, 1], -37 * theta.numpy() / (2 * math.pi), rtol=1e-5)
    level = picked(chart_spec(at, "lc_wavelengths"))
    assert [(s["y0"], s["y1"]) for s in level] == [(37, 37)]
    assert [s["y0"] for s in picked(chart_spec(at, "lc_scaled"))] == [37]
    verticals = picked(chart_spec(at, "lc_decay"))
    assert sorted((s["xref"], s["x0"]) for s in verticals) == [("x", 37), ("x2", 37)]
    notes = infos(at)
    record = json.loads(LONG_FILE.read_text())
    means = np.array(record["decay"]["mean_logit"])[2, :, 37]
    said = next(note for note in notes if note.startswith("At the picked pair's r = i - j = 37"))
    assert ", ".join(f"{v:.2f}" for v in means) in said and "layer 2" in said
    turned = int((37 * theta >= 2 * math.pi).sum())  # wavelength <= 37
    bound = float(rope_decay_bound(torch.tensor([37]), theta)[0])
    rotation = next(note for note in notes if note.startswith("The picked pair (i, j) = (40, 3)"))
    assert f"{turned} of 16 pairs turn fully" in rotation
    assert f"bound at |r| = 37 is {bound:.3g}" in rotation


def test_a_key_after_its_query_has_no_trained_mean_logit():
    at = open_page("long_context", n="300", i="3", j="40")
    assert_clean(at)
    verticals = picked(chart_spec(at, "lc_decay"))
    assert [(s["xref"], s["x0"]) for s in verticals] == [("x", 37)]  # the bound's panel only
    assert any("never reads such a key" in note for note in infos(at))


def test_without_a_pick_nothing_is_marked(page):
    for key in ("lc_wavelengths", "lc_decay", "lc_scaled"):
        assert not picked(chart_spec(page, key))
    assert not any(note.startswith("The picked pair") for note in infos(page))
