"""What every chart gets as it is drawn (explorer.figures.draw.plotly_chart): the active palette
in place of the standard one, and a second cue beside colour for every set of lines.

* :func:`recolour`: in the colour-blind safe setting, each D3 colour and each standard scale a
  figure names (a trace's line, marker, fill and colour scale; a shape's line and fill; an
  annotation's text) becomes its counterpart (``palettes.SAFE_FOR``), its opacity kept; traces
  that name no colour take the palette's categories (``layout.colorway``). Scales built by
  explorer.figures.scales already carry the active palette.
* :func:`second_cue`: lines (or markers) of different colours that share a dash and a marker
  symbol are told apart by dash, or where the dashes already mean something, by marker symbol:
  colour is never the only cue (WCAG 2.1, 1.4.1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.figures.palettes import SAFE_FOR, STANDARD, Palette

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
MARKERS_SHOWN = 24  # markers added to a long line as its cue: at most this many are drawn


def _rgba(colour: str) -> tuple[int, int, int, float] | None:
    """(r, g, b, alpha) of '#rrggbb', 'rgb(..)' or 'rgba(..)'; None for anything else."""
    text = colour.strip().lower()
    if text.startswith("#") and len(text) == 7:
        return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16), 1.0
    if text.startswith(("rgb(", "rgba(")) and text.endswith(")"):
        parts = [p.strip() for p in text[text.index("(") + 1 : -1].split(",")]
        try:
            r, g, b = (round(float(p)) for p in parts[:3])
            return r, g, b, float(parts[3]) if len(parts) > 3 else 1.0
        except ValueError:
            return None
    return None


def _key(colour: str) -> str:
    rgba = _rgba(colour)
    return colour.strip().lower() if rgba is None else "#{:02x}{:02x}{:02x}".format(*rgba[:3])


def safe_colour(colour: object) -> object:
    """The safe palette's counterpart of one colour (its alpha kept), else the colour."""
    if not isinstance(colour, str):
        return colour
    swap = SAFE_FOR.get(_key(colour))
    if not isinstance(swap, str):
        return colour
    alpha = (_rgba(colour) or (0, 0, 0, 1.0))[3]
    if alpha >= 1.0:
        return swap
    r, g, b, _ = _rgba(swap) or (0, 0, 0, 1.0)
    return f"rgba({r},{g},{b},{alpha})"


def _scale_key(stops: object) -> tuple[str, ...] | None:
    if not isinstance(stops, Sequence) or isinstance(stops, str) or not stops:
        return None
    try:
        return tuple(_key(str(stop[1])) for stop in stops)
    except (IndexError, TypeError):
        return None


_STANDARD_SCALES = {
    tuple(_key(c) for c in colours): name
    for name, colours in (
        ("rdbu_r", STANDARD.diverging),
        ("rdbu", tuple(reversed(STANDARD.diverging))),
        ("blues", STANDARD.weights),
    )
}


def safe_scale(stops: object) -> object:
    """A standard diverging or weights colour scale as the safe palette's, else unchanged."""
    key = _scale_key(stops)
    name = _STANDARD_SCALES.get(key) if key else None
    if name is None:
        return stops
    colours = SAFE_FOR[name]
    return [[i / (len(colours) - 1), c] for i, c in enumerate(colours)]  # type: ignore[arg-type]


def _swap(obj, prop: str) -> None:
    value = getattr(obj, prop, None)
    if isinstance(value, str):
        new = safe_colour(value)
        if new != value:
            setattr(obj, prop, new)
    elif isinstance(value, (np.ndarray, list, tuple)) and len(value) and isinstance(value[0], str):
        setattr(obj, prop, np.array([safe_colour(str(c)) for c in value], dtype=object))


def recolour(fig: go.Figure, palette: Palette) -> go.Figure:
    """Draw ``fig`` in ``palette`` (the standard palette leaves it as it is); in place."""
    if palette is STANDARD:
        return fig
    fig.layout.colorway = list(palette.categories[:8])
    for trace in fig.data:
        for holder, prop in (
            (trace, "fillcolor"),
            (getattr(trace, "line", None), "color"),
            (getattr(trace, "marker", None), "color"),
            (getattr(getattr(trace, "marker", None), "line", None), "color"),
            (getattr(trace, "textfont", None), "color"),
        ):
            if holder is not None and prop in getattr(holder, "_valid_props", ()):
                _swap(holder, prop)
        for holder in (trace, getattr(trace, "marker", None)):
            if holder is not None and "colorscale" in getattr(holder, "_valid_props", ()):
                new = safe_scale(holder.colorscale)
                if new is not holder.colorscale:
                    holder.colorscale = new
    for shape in fig.layout.shapes:
        _swap(shape, "fillcolor")
        _swap(shape.line, "color")
    for note in fig.layout.annotations:
        _swap(note.font, "color")
        _swap(note, "bordercolor")
    return fig


def _categorical(trace) -> bool:
    """A line or marker trace drawn in one visible colour (not a colour bar's carrier or a
    transparent click target)."""
    if getattr(trace, "type", None) != "scatter" or trace.visible is False:
        return False
    colour = trace.line.color if "lines" in (trace.mode or "lines") else trace.marker.color
    if colour is not None and not isinstance(colour, str):
        return False  # a colour per point: not one category
    if trace.marker.opacity == 0 or trace.opacity == 0 or trace.name == "colour bar":
        return False
    return colour is None or (_rgba(colour) or (0, 0, 0, 1.0))[3] > 0


def second_cue(fig: go.Figure) -> go.Figure:
    """Give lines of different colours a dash or marker symbol of their own; in place."""
    traces = [t for t in fig.data if _categorical(t)]
    colour_of = {}
    for n, t in enumerate(traces):
        colour = t.line.color if "lines" in (t.mode or "lines") else t.marker.color
        colour_of[id(t)] = _key(colour) if isinstance(colour, str) else f"auto {n}"
    groups = list(dict.fromkeys(colour_of.values()))
    if len(groups) < 2:
        return fig
    cue = {}
    for t in traces:
        mode = t.mode or "lines"
        key = (t.line.dash or "solid" if "lines" in mode else None,
               t.marker.symbol or "circle" if "markers" in mode else None)  # fmt: skip
        cue.setdefault(key, set()).add(colour_of[id(t)])
    if all(len(colours) == 1 for colours in cue.values()):
        return fig  # every colour already has its own dash or symbol
    lines = [t for t in traces if "lines" in (t.mode or "lines")]
    same_dash = len({t.line.dash or "solid" for t in lines}) <= 1
    for t in traces:
        g = groups.index(colour_of[id(t)])
        mode = t.mode or "lines"
        if "lines" in mode and same_dash and len(groups) <= len(DASHES):
            t.line.dash = DASHES[g]
        else:
            if "markers" not in mode:
                t.mode = mode + "+markers"
                t.marker.maxdisplayed = MARKERS_SHOWN
            t.marker.symbol = SYMBOLS[g % len(SYMBOLS)]
    return fig
