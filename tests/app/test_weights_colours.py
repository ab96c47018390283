"""One colour policy for attention weights on every page: a log colour scale whose bar is a log
axis, its ticks where the colours put their values, reaching down to a near-uniform row's
weight; and a difference of zero drawn, and captioned, as zero.

A weights matrix is found by what it is, not by its chart: a heatmap whose finite values lie in
[0, 1] with every row that has one summing to 1. Each colour is read from the plotly JSON the
browser gets: a trace's colorscale at (value - zmin) / (zmax - zmin), a bar's at its tick.
"""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.colors as pc
import pytest

from explorer.frame.navigation import PAGES
from tests.app.conftest import assert_clean, open_page
from tests.app.panels import trace_z

RGB_CLOSE = 4  # RGB units: a colour list interpolated between 17 log-spaced stops vs on the log
WEIGHT_PAGES = {"basics", "multihead", "attention", "compare", "predict", "trained"}


def rgb(colour: str) -> np.ndarray:
    """'rgb(r, g, b)' or '#rrggbb' as three floats."""
    if colour.startswith("#"):
        return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], float)
    return np.array([float(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3]])


def colour_of(colorscale: str | list, p: float) -> np.ndarray:
    """The colour a plotly colorscale gives position ``p`` in [0, 1] (linear between stops)."""
    stops = pc.get_colorscale(colorscale) if isinstance(colorscale, str) else colorscale
    at = np.array([float(s[0]) for s in stops])
    colours = np.stack([rgb(s[1]) for s in stops])
    p = float(np.clip(p, 0.0, 1.0))
    return np.array([np.interp(p, at, colours[:, c]) for c in range(3)])


def value_colour(trace: dict, value: float) -> np.ndarray:
    """The colour a heatmap trace draws ``value`` in."""
    zmin, zmax = trace["zmin"], trace["zmax"]
    return colour_of(trace["colorscale"], (value - zmin) / (zmax - zmin))


def is_weights(trace: dict) -> bool:
    if trace.get("type") != "heatmap" or not isinstance(trace.get("z"), dict):
        return False
    z = trace_z(trace).astype(np.float64)
    if z.ndim != 2 or z.shape[1] < 2 or not np.isfinite(z).any():
        return False
    finite = z[np.isfinite(z)]
    rows = np.isfinite(z).any(1)
    sums = np.nansum(z[rows], 1)
    return bool(finite.min() >= 0 and finite.max() <= 1 and np.allclose(sums, 1, atol=1e-3))


def bars(spec: dict) -> list[tuple[dict, dict]]:
    """(colour settings, colorbar) of every bar a figure shows: a heatmap's own (shown unless
    showscale is false) or a marker's."""
    found = []
    for trace in spec["data"]:
        if trace.get("type") == "heatmap" and trace.get("showscale", True):
            colours = {"cmin": trace.get("zmin"), "cmax": trace.get("zmax"),
                       "colorscale": trace["colorscale"]}  # fmt: skip
            found.append((colours, trace.get("colorbar", {})))
        marker = trace.get("marker") or {}
        if marker.get("showscale"):
            found.append((marker, marker.get("colorbar", {})))
    return found


def log_bar_for(trace: dict, spec: dict) -> str:
    """'' if some bar of the figure shows ``trace``'s weights by the policy, else why not."""
    z = trace_z(trace).astype(np.float64)
    top, keys = float(np.nanmax(z)), z.shape[1]
    why = []
    for colours, bar in bars(spec):
        ticks, labels = bar.get("tickvals"), bar.get("ticktext")
        if not ticks or not labels:
            why.append("a bar with plotly's own ticks (linear in the value)")
            continue
        values = np.array([float(label) for label in labels])
        ticks = np.asarray(ticks, float)
        if not np.allclose(ticks - np.log10(values), 0, atol=1e-6):
            why.append(f"a bar whose ticks {labels} are not at log10 of their values")
            continue
        span = colours["cmax"] - colours["cmin"]
        bar_colours = [
            colour_of(colours["colorscale"], (t - colours["cmin"]) / span) for t in ticks
        ]
        drawn = [value_colour(trace, v) for v in values]
        if np.abs(np.array(bar_colours) - np.array(drawn)).max() > RGB_CLOSE:
            why.append("a log bar whose tick colours are not the colours of their values")
            continue
        if 10 ** colours["cmax"] < top * (1 - 1e-3) or 10 ** colours["cmin"] > 1 / keys:
            why.append("a log bar that does not reach from 1/n_keys to the largest weight")
            continue
        return ""
    return "; ".join(why) or "no colour bar"


def weights_charts(at) -> dict[str, list[str]]:
    """Chart id -> why each of its weights traces breaks the policy ('' when it keeps it)."""
    found = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        traces = [t for t in spec["data"] if is_weights(t)]
        if traces:
            found[chart.proto.id.rsplit("chart_", 1)[-1]] = [log_bar_for(t, spec) for t in traces]
    return found


CASES = [(page.stem, {"n": "12"}) for page in PAGES] + [
    (stem, {"n": "12", "weights": "random"}) for stem in ("attention", "compare", "multihead")
]


@pytest.mark.parametrize(("page", "query"), CASES, ids=[f"{p}-{q}" for p, q in CASES])
def test_every_weights_chart_has_the_log_bar_its_colours_follow(page: str, query: dict) -> None:
    query = {"weights": "trained", **query}
    at = open_page(page, **query)
    assert_clean(at)
    found = weights_charts(at)
    if page in WEIGHT_PAGES:
        assert found, f"{page} draws weights, none found"
    broken = {key: why for key, whys in found.items() for why in whys if why}
    assert not broken, broken


def captions(at) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]


@pytest.mark.parametrize("n", ["1", "8"])
def test_a_zero_difference_is_drawn_and_captioned_as_zero(n: str) -> None:
    """A = B: B - A is 0 in every cell, drawn in the diverging scale's centre colour (that of
    0), and its caption says so rather than 'from -0 to 1'."""
    at = open_page("compare", weights="random", n=n, compare_a="rope", compare_b="rope")
    assert_clean(at)
    spec = next(
        json.loads(c.proto.spec) for c in at.get("plotly_chart") if c.proto.id.endswith("_diff")
    )
    trace = spec["data"][0]
    z = trace_z(trace)
    assert np.all(z[np.isfinite(z)] == 0)
    centre = rgb(pc.diverging.RdBu_r[len(pc.diverging.RdBu_r) // 2])  # RdBu's colour of 0
    np.testing.assert_allclose(value_colour(trace, 0.0), centre, atol=1)
    (bar, _), *_ = bars(spec)
    assert bar["cmin"] == -bar["cmax"] > -np.inf and bar["cmax"] > 0  # 0 mid-bar
    (caption,) = [c for c in captions(at) if "diverging" in c.lower()]
    assert "-0 " not in caption and re.search(r"\bvalue is 0\b", caption), caption


def test_each_mask_panel_caption_names_its_own_kind_of_scale() -> None:
    """Logits on a diverging scale, weights on the log one: the caption describes each panel's
    bar (it said 'centred at 0 ... 0 to 1' of the log weights bar)."""
    at = open_page("multihead")
    assert_clean(at)
    spec = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if c.proto.id.endswith("chart_multihead_mask_weights")
    )
    (caption,) = [c for c in captions(at) if "Seeded random q, k" in c]
    titles = [re.sub("<[^>]+>", "", a["text"]) for a in spec["layout"]["annotations"]]
    for title, (colours, bar) in zip(titles, bars(spec), strict=True):
        said = caption.split(title + ": ", 1)[1].split(";")[0]
        low, high = colours["cmin"], colours["cmax"]
        if bar.get("tickvals"):  # a log bar: the weights'
            assert "log" in said and "centred" not in said, said
            assert f"{10**low:.2g}" in said and f"{10**high:.3g}" in said, said
        else:
            assert "centred at 0" in said and low == -high, said
            assert f"{low:.3g}" in said and f"{high:.3g}" in said, said
