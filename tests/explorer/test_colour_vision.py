"""Every chart's colours under protanopia, deuteranopia and tritanopia, simulated: in the
colour-blind safe palette categories stay apart and sequential scales stay monotone in
lightness; the diverging scale's two arms stay apart in lightness; every standard colour a
figure names is replaced when the chart is drawn.

Simulation: Machado, Oliveira and Fernandes 2009, "A Physiologically-based Model for Simulation
of Color Vision Deficiency" (IEEE TVCG 15(6)), their 3 x 3 matrices at severity 1.0, applied to
linear sRGB (the same numbers as ``colour.matrix_cvd_Machado2009`` in colour-science 0.4.7).
Distance: CIEDE2000 (Sharma, Wu and Dalal 2005), checked here against their published pairs.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import palettes, recolour
from explorer.figures.palettes import D3, SAFE, STANDARD
from explorer.figures.token_view import HEAD_COLOURS

MACHADO_2009 = {
    "protanopia": [[0.152286, 1.052583, -0.204868],
                   [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968],
                     [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779],
                   [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}  # fmt: skip
VISIONS = ["normal", *MACHADO_2009]
APART = 8.0  # CIEDE2000 units between any two categories (one just-noticeable step is ~1-2)
ARMS_APART = 6.0  # L* between the diverging scale's arms at the same |value| (beyond 1/4)


def srgb(colour: str) -> np.ndarray:
    text = colour.strip().lower()
    if text.startswith("#"):
        return np.array([int(text[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.array([float(v) for v in text[text.index("(") + 1 : -1].split(",")[:3]]) / 255


def simulate(colour: str, vision: str) -> np.ndarray:
    """sRGB in [0, 1] as seen with ``vision`` (Machado et al. 2009 on linear RGB)."""
    rgb = srgb(colour)
    if vision == "normal":
        return rgb
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    seen = np.clip(np.asarray(MACHADO_2009[vision]) @ linear, 0, 1)
    return np.where(seen <= 0.0031308, 12.92 * seen, 1.055 * seen ** (1 / 2.4) - 0.055)


def lab(rgb: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB in [0, 1]."""
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805],
                    [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ linear  # fmt: skip
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1), as Sharma et al. 2005 write it."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = a1 * (1 + g), a2 * (1 + g)
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dlp, dcp = l2 - l1, c2p - c1p
    dh = h2p - h1p
    if c1p * c2p == 0:
        dh = 0.0
    elif dh > 180:
        dh -= 360
    elif dh < -180:
        dh += 360
    dhp = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    lbp, cbp = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        hbp = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hbp = (h1p + h2p) / 2
    else:
        hbp = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    cos = [math.cos(math.radians(a)) for a in (hbp - 30, 2 * hbp, 3 * hbp + 6, 4 * hbp - 63)]
    t = 1 - 0.17 * cos[0] + 0.24 * cos[1] + 0.32 * cos[2] - 0.20 * cos[3]
    sl = 1 + 0.015 * (lbp - 50) ** 2 / math.sqrt(20 + (lbp - 50) ** 2)
    sc, sh = 1 + 0.045 * cbp, 1 + 0.015 * cbp * t
    rt = (-2 * math.sqrt(cbp**7 / (cbp**7 + 25**7))
          * math.sin(math.radians(60 * math.exp(-(((hbp - 275) / 25) ** 2)))))  # fmt: skip
    return math.sqrt((dlp / sl) ** 2 + (dcp / sc) ** 2 + (dhp / sh) ** 2
                     + rt * (dcp / sc) * (dhp / sh))  # fmt: skip


@pytest.mark.parametrize(
    ("lab1", "lab2", "expected"),
    [  # Sharma, Wu and Dalal 2005, table 1: pairs 1, 7, 17, 25
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_ciede2000_matches_the_published_pairs(lab1, lab2, expected):
    assert ciede2000(np.array(lab1), np.array(lab2)) == pytest.approx(expected, abs=1e-4)


def closest_pair(colours, vision: str) -> tuple[float, str, str]:
    seen = {c: lab(simulate(c, vision)) for c in dict.fromkeys(colours)}
    return min((ciede2000(seen[a], seen[b]), a, b) for a, b in itertools.combinations(seen, 2))


def safe(colours):
    return [str(recolour.safe_colour(c)) for c in colours]


# Every set of categories a figure draws at once, as the standard palette names them.
FIGURE_CATEGORIES = {
    "D3's first 8 (schemes, models, the Long context page's lines)": list(D3[:8]),
    "heads (token view, learned terms)": list(HEAD_COLOURS),
    "relative / absolute (Length generalization)": ["#1f77b4", "#d62728", "#7f7f7f"],
    "unscaled / scaled (Attention basics)": ["#d62728", "#1f77b4"],
    "right / wrong (Length generalization's strip)": [STANDARD.right, STANDARD.wrong],
}


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("figure", FIGURE_CATEGORIES)
def test_categories_stay_apart_in_the_safe_palette(figure, vision):
    distance, a, b = closest_pair(safe(FIGURE_CATEGORIES[figure]), vision)
    assert distance >= APART, f"{figure}: {a} and {b} are {distance:.1f} apart ({vision})"


def test_the_standard_strip_is_what_the_check_catches():
    """The measure can fail: the old light green and salmon fall within APART of each other."""
    distance, _, _ = closest_pair([STANDARD.right, STANDARD.wrong], "deuteranopia")
    assert distance < APART


def lightness(colours, vision: str) -> np.ndarray:
    return np.array([lab(simulate(c, vision))[0] for c in colours])


def sampled(colours, count: int = 33) -> list[str]:
    """``count`` colours evenly along a colour list, interpolated in sRGB as plotly does."""
    rgb = np.array([srgb(c) for c in colours])
    grid, at = np.linspace(0, 1, len(rgb)), np.linspace(0, 1, count)
    out = np.stack([np.interp(at, grid, rgb[:, c]) for c in range(3)], axis=-1)
    return ["#{:02x}{:02x}{:02x}".format(*np.round(255 * v).astype(int)) for v in out]


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("kind", ["weights", "index", "sequential"])
def test_sequential_scales_stay_monotone_in_lightness(kind, vision):
    steps = np.diff(lightness(sampled(SAFE.scale(kind)), vision))
    assert (steps > 0).all() or (steps < 0).all(), f"{kind} ({vision}): {steps.round(1)}"


@pytest.mark.parametrize("vision", [*VISIONS, "achromatopsia"])
def test_the_diverging_arms_are_monotone_and_apart_in_lightness(vision):
    colours = sampled(SAFE.diverging)
    if vision == "achromatopsia":  # lightness alone: what both arms keep
        l_star = lightness(colours, "normal")
    else:
        l_star = lightness(colours, vision)
    centre = len(colours) // 2
    negative, positive = l_star[centre::-1], l_star[centre:]  # from 0 outwards
    assert (np.diff(negative) < 0).all() and (np.diff(positive) < 0).all()
    beyond = len(negative) // 4  # past the first quarter of |value|
    gaps = np.abs(positive - negative)[beyond:]
    assert gaps.min() >= ARMS_APART, f"{vision}: arms {gaps.min():.1f} L* apart"


def test_standard_red_blue_arms_are_one_grey():
    """What the safe scale fixes: RdBu's arms at equal |value| differ little in lightness."""
    l_star = lightness(sampled(STANDARD.diverging), "normal")
    centre = len(l_star) // 2
    assert np.abs(l_star[centre:] - l_star[centre::-1]).max() < ARMS_APART


def test_drawing_in_the_safe_palette_leaves_no_standard_colour():
    fig = go.Figure()
    for t, colour in enumerate(D3):
        fig.add_scatter(x=[0, 1], y=[t, t], line={"color": colour}, name=f"line {t}")
    fig.add_heatmap(z=[[0, 1]], colorscale="RdBu_r")
    fig.add_heatmap(z=[[0, 1]], colorscale="Blues")
    fig.add_shape(type="line", x0=0, x1=1, y0=0, y1=1, line={"color": "#d62728"})
    recolour.recolour(fig, SAFE)
    drawn = [t.line.color.lower() for t in fig.data if t.type == "scatter"]
    assert drawn == [c.lower() for c in safe(D3)]
    assert not set(drawn) & {c.lower() for c in D3 if c.lower() != "#7f7f7f"}
    diverging = [stop[1].lower() for stop in fig.data[-2].colorscale]
    weights = [stop[1].lower() for stop in fig.data[-1].colorscale]
    assert diverging == [c.lower() for c in SAFE.diverging]
    assert weights == [c.lower() for c in SAFE.weights]
    assert fig.layout.shapes[0].line.color == SAFE.accent


def test_every_palette_has_each_scale_kind():
    for palette in palettes.PALETTES.values():
        for kind in ("diverging", "weights", "index", "sequential"):
            assert len(palette.scale(kind)) >= 2


def test_lines_of_different_colours_get_a_second_cue():
    fig = go.Figure()
    for colour in ("#1f77b4", "#ff7f0e", "#2ca02c"):
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": colour})
    recolour.second_cue(fig)
    assert len({t.line.dash for t in fig.data}) == 3
    fig = go.Figure()  # dashes already mean something: each colour gets a marker symbol
    for colour, dash in (("#1f77b4", "solid"), ("#1f77b4", "dot"), ("#d62728", "solid")):
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line={"color": colour, "dash": dash})
    recolour.second_cue(fig)
    assert [t.line.dash for t in fig.data] == ["solid", "dot", "solid"]
    assert fig.data[0].marker.symbol == fig.data[1].marker.symbol != fig.data[2].marker.symbol
