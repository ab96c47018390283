"""The one colour-scale policy every heatmap shares, and the colour bar that shows it.

One scale is fitted to all panels of a figure (or, with :func:`own_scales`, one per panel):

* ``diverging``: logits and signed values, RdBu centred at 0, bound = the largest |value|
  (values that are all 0 take the centre's colour, on a bar from -1 to 1);
* ``weights``: attention weights, on every page, on a log colour scale from
  min(1 / (10 n_keys), top / 10) to the largest weight shown (top), so that a row of
  near-uniform weights (about 1 / n_keys each) is as visible at n = 512 as at n = 8. Its bar is
  a log axis (:func:`colourbar_trace`) whose ticks sit where the colours put their values; a
  lone heatmap takes :func:`heatmap_colours` and that bar, never plotly's own linear one;
* ``index``: integer tables (distances, indices), Viridis over the given range;
* ``sequential``: a value whose point is its size, not its sign (a similarity that peaks on the
  diagonal), Viridis from its smallest to its largest value.

Colours: the active palette's (explorer/figures/palettes.py), carried by each scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.figures.palettes import active

if TYPE_CHECKING:
    from explorer.figures.panel_traces import Panel

WEIGHT_FLOOR_FACTOR = 10  # weights scale: floor = 1 / (factor * n_keys)
TICK_EVERY_MAX = 12  # up to this many rows or columns, every one gets its tick
KINDS = ("diverging", "weights", "index", "sequential")


@dataclass(frozen=True)
class Scale:
    """A colour scale shared by every panel: plotly stops over [zmin, zmax] and its caption."""

    kind: str
    zmin: float
    zmax: float
    stops: tuple[tuple[float, str], ...]
    caption: str
    colours: tuple[str, ...] = ()  # the palette's list for ``kind`` (the stops are spread on it)

    def position(self, z: np.ndarray) -> np.ndarray:
        """Where each value sits on the colour bar, in [0, 1] (NaN stays NaN)."""
        if self.kind == "weights":
            floor = self.zmin_display
            with np.errstate(divide="ignore", invalid="ignore"):
                p = np.log(np.maximum(z, floor) / floor) / math.log(self.zmax / floor)
            return np.clip(p, 0.0, 1.0)
        span = self.zmax - self.zmin or 1.0
        return np.clip((z - self.zmin) / span, 0.0, 1.0)

    @property
    def range_words(self) -> str:
        """The scale's colours in words: its kind and range ("log, from 0.0031 to 0.82")."""
        if self.kind == "weights":
            return f"log, from {self.zmin_display:.2g} to {self.zmax:.3g}"
        centred = "centred at 0, " if self.kind == "diverging" else ""
        return f"{centred}from {self.zmin:.3g} to {self.zmax:.3g}"

    @property
    def zmin_display(self) -> float:
        """The weights scale's floor (the lightest colour); zmin for the other scales."""
        return float(self.stops[1][0]) * self.zmax if self.kind == "weights" else self.zmin


def _rgb(colours: Sequence[str]) -> np.ndarray:
    """(m, 3) float RGB of a plotly colour list ('rgb(..)' or '#rrggbb')."""
    out = []
    for colour in colours:
        if colour.startswith("#"):
            out.append([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
        else:
            out.append([float(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3]])
    return np.asarray(out, dtype=np.float64)


def colour_at(kind: str, p: np.ndarray, colours: Sequence[str] = ()) -> np.ndarray:
    """RGB (..., 3) uint8 of the colour list ``kind`` (of the active palette, or ``colours``)
    at positions p in [0, 1]."""
    rgb = _rgb(colours or active().scale(kind))
    grid = np.linspace(0, 1, len(rgb))
    out = np.stack([np.interp(p, grid, rgb[:, c]) for c in range(3)], axis=-1)
    return np.round(out).astype(np.uint8)


def make_scale(
    kind: str,
    panels: Sequence[np.ndarray],
    zrange: tuple[float, float] | None = None,
    n_keys: int | None = None,
) -> Scale:
    """The one colour scale for ``panels``: see the module docstring for each ``kind``."""
    if kind not in KINDS:
        raise ValueError(f"scale must be one of {', '.join(KINDS)}, got {kind!r}")
    colours = active().scale(kind)
    finite = np.concatenate([np.asarray(z, np.float32)[np.isfinite(z)] for z in panels] or [[]])
    if kind == "weights":
        keys = n_keys or max(np.asarray(z).shape[-1] for z in panels)
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        floor = min(1.0 / (WEIGHT_FLOOR_FACTOR * keys), top / WEIGHT_FLOOR_FACTOR)
        count = 16
        values = floor * (top / floor) ** (np.arange(count + 1) / count)
        rgb = colour_at("weights", np.arange(count + 1) / count, colours)
        stops = [(0.0, _css(rgb[0]))] + [
            (float(v / top), _css(c)) for v, c in zip(values, rgb, strict=True)
        ]
        stops[-1] = (1.0, stops[-1][1])
        caption = (
            f"Weights on a log colour scale from {floor:.2g} = 1/({WEIGHT_FLOOR_FACTOR} n) to "
            f"the largest weight shown, {top:.3g} (smaller weights take the lightest colour); "
            "one scale for every panel."
        )
        return Scale(kind, 0.0, top, tuple(stops), caption, colours)
    if kind == "diverging":
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        if bound == 0 and zrange is None:  # all zero: the centre's colour, on a bar about 0
            return Scale(kind, -1.0, 1.0, _stops(colours), ZERO_CAPTION, colours)
        low, high = (-bound, bound) if zrange is None else zrange
        high = high if high > low else low + 1.0
        caption = (
            f"Diverging colour scale centred at 0, from {low:.3g} to {high:.3g}; "
            "one scale for every panel."
        )
    else:
        low, high = (
            zrange
            if zrange is not None
            else ((float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0))
        )
        high = high if high > low else low + 1.0
        caption = (
            f"Sequential colour scale from the smallest value, {low:.3g}, to the largest, "
            f"{high:.3g}; one scale for every panel."
            if kind == "sequential"
            else ""
        )
    return Scale(kind, float(low), float(high), _stops(colours), caption, colours)


ZERO_CAPTION = "Every value is 0, drawn in the colour of 0, the centre of the diverging scale."


def _stops(colours: Sequence[str]) -> tuple[tuple[float, str], ...]:
    """A colour list spread evenly over [zmin, zmax]."""
    return tuple((i / (len(colours) - 1), c) for i, c in enumerate(colours))


def heatmap_colours(scale: Scale) -> dict:
    """A plotly heatmap trace's colour settings on ``scale``, its own bar hidden: a figure shows
    the scale with :func:`colourbar_trace` (for weights plotly's own bar would be linear in the
    weight, its ticks evenly spaced under colours spaced by the log of it)."""
    stops = [list(stop) for stop in scale.stops]
    return {"zmin": scale.zmin, "zmax": scale.zmax, "colorscale": stops, "showscale": False}


def _css(rgb: np.ndarray) -> str:
    return f"rgb({int(rgb[0])},{int(rgb[1])},{int(rgb[2])})"


def colourbar_trace(scale: Scale, place: dict | None = None) -> dict:
    """An invisible marker carrying a colour bar (log ticks for weights): the figure's one bar,
    or with ``place`` (plotly colorbar x, y, len) one panel's own bar beside it."""
    marker: dict = {"size": 0.1, "opacity": 0, "showscale": True, "color": [scale.zmin]}
    bar = {"thickness": 12, "len": 0.8, **(place or {})}
    if scale.kind == "weights":
        floor = scale.zmin_display
        decades = [
            math.log10(m * 10.0**e)
            for e in range(math.floor(math.log10(floor)), 1)
            for m in (1, 2, 5)
            if floor <= m * 10.0**e <= scale.zmax
        ]
        marker.update(
            colorscale=list(scale.colours or active().weights),
            cmin=math.log10(floor),
            cmax=math.log10(scale.zmax),
            color=[math.log10(scale.zmax)],
            colorbar={
                **bar,
                "tickvals": decades,
                "ticktext": [f"{10.0**e:.2g}" for e in decades],
                "title": {"text": "α", "side": "top"},
            },
        )
    else:
        marker.update(
            colorscale=[list(s) for s in scale.stops],
            cmin=scale.zmin,
            cmax=scale.zmax,
            colorbar=bar
            if scale.kind != "index" or scale.zmax - scale.zmin > TICK_EVERY_MAX
            else {**bar, "dtick": 1},  # integer tables: integer ticks only
        )
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "markers",
        "marker": marker,
        "hoverinfo": "skip",
        "showlegend": False,
        "name": "colour bar",
    }


def per_panel(scale: Scale | Sequence[Scale], count: int) -> list[Scale]:
    """The scale of each of ``count`` panels: one shared scale repeated, or one per panel."""
    scales = [scale] * count if isinstance(scale, Scale) else list(scale)
    if len(scales) != count:
        raise ValueError(f"panel_grid needs one scale per panel, got {len(scales)} for {count}")
    return scales


def own_scales(kind: str, panels: Sequence[Panel], **options) -> list[Scale]:
    """One scale per panel, each fitted to that panel's own values (``make_scale`` options)."""
    return [make_scale(kind, [p.z], **options) for p in panels]


def own_scales_caption(scales: Sequence[Scale], titles: Sequence[str] = ()) -> str:
    """The caption for panels on their own scales: the kind and each panel's range (panels of
    several kinds: each named by its title, with its own kind)."""
    kinds = {s.kind for s in scales}
    if kinds == {"weights"}:
        return (
            "Each panel has its own log colour scale, from its own largest weight (bar beside it)."
        )
    if len(kinds) > 1:
        names = list(titles) or [f"panel {t + 1}" for t in range(len(scales))]
        each = "; ".join(f"{n}: {s.range_words}" for n, s in zip(names, scales, strict=True))
        return f"Each panel has its own colour scale (its bar beside it): {each}."
    ranges = "; ".join(f"{s.zmin:.3g} to {s.zmax:.3g}" for s in scales)
    centred = "centred at 0, " if scales[0].kind == "diverging" else ""
    return f"Each panel has its own colour scale ({centred}its bar beside it): {ranges}."


SMALL_RATIO = 3  # a panel whose largest |value| is under 1/3 of the figure's gets its own scale
SATURATE_QUANTILE = 0.995  # a diverging scale bound at this quantile of |value| when it helps
DIFFERENCE_QUANTILE = 0.95  # two heads' weights differ little almost everywhere: bound lower


def fitted_scales(kind: str, panels: Sequence[Panel]) -> tuple[Scale | list[Scale], str]:
    """One ``kind`` scale for ``panels``, except that a panel whose values are all under
    1/SMALL_RATIO of the largest gets its own (a relative part 4x smaller than the content
    part was near white on their shared scale); with the caption that names each range."""
    shared = make_scale(kind, [p.z for p in panels])
    tops = [_largest(p.z) for p in panels]
    small = [top * SMALL_RATIO < max(tops) for top in tops]
    if not any(small):
        return shared, shared.caption
    big = make_scale(kind, [p.z for p, low in zip(panels, small, strict=True) if not low])
    scales = [make_scale(kind, [p.z]) if low else big for p, low in zip(panels, small, strict=True)]
    own = "; ".join(
        f"{p.title or 'panel ' + str(t)}: own scale, ±{s.zmax:.2g}"
        for t, (p, s, low) in enumerate(zip(panels, scales, small, strict=True))
        if low
    )
    return scales, (
        f"Diverging colour scales centred at 0 (bar beside each): ±{big.zmax:.3g} for the "
        f"other panels; {own} (under 1/{SMALL_RATIO} of the others, so on theirs it would be "
        "near white)."
    )


def _largest(z: np.ndarray) -> float:
    finite = np.abs(np.asarray(z, np.float32)[np.isfinite(z)])
    return float(finite.max()) if finite.size else 0.0


@dataclass(frozen=True)
class ColourRange:
    """The ±bound of a diverging colour scale for some panels, and what it leaves out."""

    zrange: tuple[float, float] | None  # None: the largest |value| (the usual scale)
    note: str  # a caption sentence when colours saturate, else ""


def colour_range(panels: Sequence[np.ndarray], quantile: float = SATURATE_QUANTILE) -> ColourRange:
    """A few large values would wash every other cell out to white: when the largest |value|
    is over twice the ``quantile`` quantile of |value|, bound the scale there and say how many
    cells saturate (hover marks them, and the zoom gives exact values)."""
    values = np.abs(np.concatenate([np.ravel(p) for p in panels]))
    values = values[np.isfinite(values)]
    if values.size == 0:
        return ColourRange(None, "")
    bound, top = float(np.quantile(values, quantile)), float(values.max())
    if bound <= 0 or top <= 2 * bound:
        return ColourRange(None, "")
    beyond = float((values > bound).mean())
    return ColourRange(
        (-bound, bound),
        f"Colours saturate beyond ±{bound:.3g} ({beyond:.1%} of cells; the largest |value| is "
        f"{top:.3g}).",
    )
