r"""A chart in words, for a screen reader: what it shows, its axes and their ranges, the range of
its values, and the note under it (the value the note points at). Every chart carries one
(explorer.figures.draw.plotly_chart writes it, visually hidden, before the chart); the numbers
themselves stay in the view's download.

>>> fig = go.Figure(go.Heatmap(z=[[0.5, -1.0], [2.0, 0.0]], x=[0, 1], y=[0, 1]))
>>> _ = fig.update_layout(title="Logits", xaxis_title="key j", yaxis_title="query i")
>>> print(describe(fig, "head 0").replace(". ", ".\n"))
Chart: Logits.
A heatmap.
Horizontal axis: key j, 0 to 1.
Vertical axis: query i, 0 to 1.
Values from -1 to 2.
head 0
"""

from __future__ import annotations

import html
import re
from collections import Counter

import numpy as np
import plotly.graph_objects as go

NAMES_MAX = 8  # lines named in the description; beyond, "and m more"
_TAG = re.compile(r"<[^>]+>")


def plain(text: object) -> str:
    """Chart text (plotly's HTML subset, escaped entities) as plain words."""
    return html.unescape(_TAG.sub(" ", str(text or ""))).replace("  ", " ").strip()


def _numbers(values: object) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        return np.empty(0)
    return array[np.isfinite(array)]


def _span(values: np.ndarray) -> str:
    return "" if values.size == 0 else f"{values.min():.3g} to {values.max():.3g}"


def _shown(trace) -> bool:
    """A trace a reader sees: not a colour bar's carrier or a transparent click target."""
    if trace.visible is False or getattr(trace, "name", None) == "colour bar":
        return False
    marker = getattr(trace, "marker", None)
    if trace.type != "scatter" or marker is None:
        return True
    colour = marker.color if isinstance(marker.color, str) else ""
    return marker.opacity != 0 and not colour.replace(" ", "").endswith(",0)")


def _kind(traces: list) -> str:
    kinds = Counter(t.type for t in traces)
    panels = kinds["heatmap"] + kinds["image"]
    parts = []
    if panels:
        parts.append("a heatmap" if panels == 1 else f"{panels} heatmap panels")
    lines = [t for t in traces if t.type == "scatter" and "lines" in (t.mode or "lines")]
    if lines:
        names = list(dict.fromkeys(plain(t.name) for t in lines if t.name))
        named = "; ".join(names[:NAMES_MAX]) + (
            f" and {len(names) - NAMES_MAX} more" if len(names) > NAMES_MAX else ""
        )
        count = f"{len(lines)} line{'s' * (len(lines) > 1)}"
        parts.append(count + (f" ({named})" if named else ""))
    points = sum(1 for t in traces if t.type == "scatter" and "lines" not in (t.mode or "lines"))
    if points:
        parts.append(f"{points} set{'s' * (points > 1)} of points")
    if kinds["bar"]:
        parts.append(f"{kinds['bar']} bar series")
    other = sorted(k for k in kinds if k not in ("heatmap", "image", "scatter", "bar"))
    parts.extend(f"a {k} chart" for k in other)
    text = " and ".join(parts) or "an empty chart"
    return text[0].upper() + text[1:]


def _axis_values(traces: list, letter: str) -> np.ndarray:
    chunks = []
    for t in traces:
        if t.type != "image":  # an image's extent is in its PNG: its axis title says enough
            chunks.append(_numbers(getattr(t, letter, None)))
    return np.concatenate(chunks) if chunks else np.empty(0)


def _axes(fig: go.Figure, traces: list) -> list[str]:
    out = []
    for letter, side in (("x", "Horizontal"), ("y", "Vertical")):
        titles = []
        for name in sorted(k for k in fig.layout if re.fullmatch(f"{letter}axis\\d*", k)):
            title = plain(fig.layout[name].title.text)
            if title and title not in titles:
                titles.append(title)
        span = _span(_axis_values(traces, letter))
        if titles or span:
            words = "; ".join(titles) or letter
            out.append(f"{side} axis: {words}" + (f", {span}" if span else "") + ".")
    return out


def describe(fig: go.Figure, caption: str = "") -> str:
    """The chart in a few sentences (see the module docstring)."""
    traces = [t for t in fig.data if _shown(t)]
    title = plain(fig.layout.title.text)
    parts = [f"Chart: {title}." if title else "Chart:"]
    parts.append(_kind(traces) + ".")
    parts.extend(_axes(fig, traces))
    z = np.concatenate([_numbers(t.z) for t in traces if t.type == "heatmap"] or [np.empty(0)])
    if z.size:
        parts.append(f"Values from {_span(z)}.")
    if caption:
        parts.append(plain(caption))
    return " ".join(parts)
