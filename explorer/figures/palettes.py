"""The explorer's two sets of colours, one per setting of the sidebar's *colours* control, and
the one function that says which is in use.

* ``standard``: RdBu for signed values, Blues for weights, Viridis for indices and sizes, D3's
  categorical colours;
* ``colour-blind safe``: every scale stays ordered, and every set of categories apart, under
  protanopia, deuteranopia and tritanopia (Machado et al. 2009's simulation, at severity 1:
  tests/explorer/test_colour_vision.py). Sequential scales are monotone in lightness (Viridis
  for indices and sizes; cividis, reversed so that a small weight is light as in Blues, for
  weights); the diverging scale runs from a dark blue through white to an orange whose arm is
  lighter than the blue one at every |value|, so that the sign still reads where hue does not
  (under tritanopia blue and orange both turn teal-grey; under achromatopsia RdBu's two arms
  are one grey); categories take Okabe and Ito's set (Color Universal Design, 2008).

Figures outside the scale policy name D3's colours and plotly's named scales; in the safe
setting :func:`explorer.figures.recolour.recolour` maps each to its counterpart here
(``SAFE_FOR``), when the chart is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.colors as pc

from explorer.frame.colour_vision import SETTINGS, setting


@dataclass(frozen=True)
class Palette:
    """A colour list per scale kind (evenly spaced stops), and categories in order."""

    name: str
    diverging: tuple[str, ...]
    weights: tuple[str, ...]
    index: tuple[str, ...]
    sequential: tuple[str, ...]
    categories: tuple[str, ...]
    right: str  # a right answer / a match (shown with a symbol as well: never colour alone)
    wrong: str
    accent: str  # one line or mark that must stand out (a trained length, a picked level)

    def scale(self, kind: str) -> tuple[str, ...]:
        return getattr(self, kind)


D3 = tuple(pc.qualitative.D3)  # blue, orange, green, red, purple, brown, pink, grey, olive, cyan
# Okabe-Ito, in the order D3's colours are used, so that a figure's first categories map onto
# the most distinct ones: blue, orange, bluish green, vermillion, reddish purple, black, sky
# blue, grey (kept: "other"), then yellow for olive and cyan (ten categories: dashes part them).
OKABE_ITO = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#000000", "#56B4E9", "#7F7F7F",
    "#F0E442", "#F0E442",
)  # fmt: skip
# Dark blue -> white -> orange: each arm monotone in lightness, the blue arm darker.
BLUE_ORANGE = ("#08306b", "#2f5f98", "#7f9fc5", "#b9c9df", "#f7f7f7", "#f8dfba", "#eab46b",
               "#d08a2a", "#a05a00")  # fmt: skip

STANDARD = Palette(
    SETTINGS[0],
    diverging=tuple(pc.diverging.RdBu_r),
    weights=tuple(pc.sequential.Blues),
    index=tuple(pc.sequential.Viridis),
    sequential=tuple(pc.sequential.Viridis),
    categories=D3,
    right="#c7e9c0",
    wrong="#fcbba1",
    accent="#d62728",
)
SAFE = Palette(
    SETTINGS[1],
    diverging=BLUE_ORANGE,
    weights=tuple(reversed(pc.sequential.Cividis)),
    index=tuple(pc.sequential.Viridis),
    sequential=tuple(pc.sequential.Viridis),
    categories=OKABE_ITO,
    right="#56B4E9",  # sky blue, light
    wrong="#D55E00",  # vermillion, dark: apart in lightness as well as hue
    accent="#D55E00",
)
PALETTES = {p.name: p for p in (STANDARD, SAFE)}

# What the safe setting draws instead of a colour or a named scale of the standard one.
SAFE_FOR: dict[str, object] = {
    **{c.lower(): s for c, s in zip(D3, OKABE_ITO, strict=True)},
    STANDARD.right: SAFE.right,
    STANDARD.wrong: SAFE.wrong,
    "firebrick": SAFE.accent,
    "#c2185b": SAFE.accent,  # a wrong cell's outline on a diverging map
    "rdbu_r": SAFE.diverging,
    "rdbu": tuple(reversed(SAFE.diverging)),
    "blues": SAFE.weights,
}


def palette(setting: str | None) -> Palette:
    """The palette of a *colours* setting (an unknown one: the standard palette)."""
    return PALETTES.get(setting or SETTINGS[0], STANDARD)


def active() -> Palette:
    """The palette this run draws with: the sidebar's setting (standard outside a run)."""
    return palette(setting())
