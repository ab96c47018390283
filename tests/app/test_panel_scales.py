"""Colour scales that show what each panel is for: a panel several times smaller than the
others on its own scale, a difference bound where most of it lies, a band a few cells wide
drawn a pixel per position."""

from __future__ import annotations

import re

import numpy as np

from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import panel_traces, panel_z


def captions(at) -> list[str]:
    """Every caption's text, its markdown escapes removed."""
    return [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]


def test_the_relative_part_of_the_output_has_its_own_scale() -> None:
    """On the content part's ±3.4 the relative part (largest |value| 0.8) was near white."""
    at = open_page("attention", weights="trained")
    assert_clean(at)
    traces = panel_traces(at, "attention_output")
    content, relative, output = (panel_z(at, "attention_output", t) for t in range(3))
    bound = float(np.abs(relative).max())
    assert (traces[1]["zmin"], traces[1]["zmax"]) == (-bound, bound)
    shared = float(max(np.abs(content).max(), np.abs(output).max()))
    assert traces[0]["zmax"] == traces[2]["zmax"] == shared and bound * 3 < shared
    assert any(f"relative part: own scale, ±{bound:.2g}" in c for c in captions(at))


def test_the_difference_of_two_schemes_is_bound_where_most_of_it_lies() -> None:
    """Music vs ALiBi: B - A is near 0 almost everywhere and near ±0.9 by the diagonal; on
    ±0.9 the panel was blank but for the diagonal."""
    at = open_page("compare", weights="trained", compare_a="music", compare_b="alibi", n="120")
    assert_clean(at)
    diff = panel_z(at, "compare_diff")
    trace = panel_traces(at, "compare_diff")[0]
    values = np.abs(diff[np.isfinite(diff)])
    assert trace["zmin"] == -trace["zmax"]
    assert trace["zmax"] < values.max() / 4  # bound inside the values, not at the largest
    assert (values <= trace["zmax"] + 1e-6).mean() >= 0.9
    assert any("Colours saturate beyond" in c for c in captions(at))


def test_the_relative_term_overview_draws_each_position_of_a_window() -> None:
    """At n = 700, k = 4 the band -4 < j - i <= 0 the note describes is 4 cells of a 512 window:
    block means of 2 x 2 in four panels a row drew it under a pixel wide."""
    at = open_page("logits", weights="trained", n="700", k="4")
    assert_clean(at)
    traces = panel_traces(at, "logits_heads")
    assert all(t["type"] == "image" and t.get("dx", 1) == 1 for t in traces)
    layout = chart_spec(at, "logits_heads")["layout"]
    plot_w = layout["width"] - layout["margin"]["l"] - layout["margin"]["r"]
    domain = layout["xaxis"]["domain"]
    assert plot_w * (domain[1] - domain[0]) / 512 * 4 >= 2.5  # the band: at least 2.5 px
