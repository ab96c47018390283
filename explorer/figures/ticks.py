"""Tick labels of a panel's axes, set explicitly: plotly's automatic ticks (``tickmode`` auto,
``nticks``) thin a short axis to every other label, so "The exam" read "T e e a".

An axis of at most LABELS_ALL_MAX positions names every one: :func:`axis_ticks` picks the
largest font that fits the pixels each position has, and ``panel_grid`` gives each row of such a
panel at least ROW_MIN_PX (its height grows), so a y axis always fits. An x axis on a narrow
screen may not: it then shows a regular subset, and :func:`thinned_note` says so in its title.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np

LABELS_ALL_MAX = 40  # an axis of at most this many positions labels (and draws) every one
FONT_MAX_PX, FONT_MIN_PX = 11, 8  # a label's type: the largest that fits, not under 8 px
ROW_MIN_PX = FONT_MIN_PX + 4  # least height of a row of a short panel: a line of 8 px type
CHAR_EM = 0.62  # width of a character in ems (the app's sans-serif, digits and lowercase)
TICK_PX = 18  # a number's room along a y axis (a 12 px font's line box is 16 px, and a gap)
CHAR_PX = 7  # width of one character of a 12 px number
NICE_STEPS = (1, 2, 5)  # numeric ticks every 1, 2, 5, 10, 20, 50, ... rows or columns
LABEL_CHARS_MAX = 12
# Left of a y axis: its title, the title's standoff and the ticks (Streamlit's theme), measured
# in Chromium as what plotly's automargin settles on, less the labels' own width
Y_AXIS_BASE_PX = 62


def escape_label(label: str) -> str:
    """A tick label plotly shows literally: shortened, then HTML-escaped.

    >>> escape_label("<b>bold</b>")
    '&lt;b&gt;bold&lt;/b&gt;'
    """
    short = label if len(label) <= LABEL_CHARS_MAX else label[: LABEL_CHARS_MAX - 1] + "…"
    return html.escape(short, quote=False)


def tick_step(count: int, length_px: float, label_px: float) -> int:
    """The least nice step (1, 2, 5, 10, ...) at which ``count`` positions drawn over
    ``length_px`` pixels leave every shown tick label ``label_px`` pixels of its own."""
    per_cell = length_px / max(count, 1)
    scale = 1
    while True:
        for step in NICE_STEPS:
            if step * scale * per_cell >= label_px or step * scale >= count:
                return step * scale
        scale *= 10


def label_room(font_px: float, chars: int, *, vertical: bool, angle: int) -> float:
    """Pixels along its axis that one label needs: a line of type down a y axis (or across a
    slanted x label), the label's width across an upright x label, and a gap."""
    if vertical or angle == -90:  # a text box is about 1.25 of its font tall (measured)
        return math.ceil(1.25 * font_px) + 1
    if angle:
        return font_px * math.sqrt(2) + 2  # slanted 45 degrees: a line of type, at an angle
    return CHAR_EM * font_px * chars + 3


def label_font(per_px: float, chars: int, *, vertical: bool, angle: int) -> int | None:
    """The largest font (FONT_MAX_PX down to FONT_MIN_PX) at which a label of ``chars``
    characters fits ``per_px`` pixels along its axis, or None when none does."""
    for font in range(FONT_MAX_PX, FONT_MIN_PX - 1, -1):
        if label_room(font, chars, vertical=vertical, angle=angle) <= per_px:
            return font
    return None


def axis_ticks(
    labels: Sequence[str] | None,
    count: int,
    offset: int,
    length_px: float = math.inf,
    *,
    vertical: bool = True,
) -> dict:
    """Tick settings of an axis of ``count`` positions from ``offset``, drawn ``length_px`` long
    (a y axis if ``vertical``), always as explicit ``tickvals``.

    Up to LABELS_ALL_MAX positions, a label (its token, else its number) on every one in the
    largest font that fits; tokens that do not fit in 8 px type label every m-th position from
    the first. Numbers that do not fit, and longer axes: every nice step-th position that leaves
    each number room in 12 px type.
    """
    per_px = length_px / max(count, 1)
    positions = range(offset, offset + count)
    tokens = labels is not None and offset + count <= len(labels)
    if count <= LABELS_ALL_MAX:  # every position named, tokens or numbers, in type that fits
        names = [labels[v] for v in positions] if tokens else [str(v) for v in positions]
        widest = max(len(name) for name in names)
        angle = -45 if tokens and widest > 3 and not vertical else 0  # slanted along x only
        font = label_font(per_px, widest, vertical=vertical, angle=angle)
        step = 1
        if font is None and tokens:  # too close even in 8 px type: every m-th token
            font = FONT_MIN_PX
            need = label_room(font, widest, vertical=vertical, angle=angle)
            step = tick_step(count, length_px, need)
        if font is not None:
            values = np.arange(offset, offset + count, step)
            return {
                "tickmode": "array",
                "tickvals": values,
                "ticktext": [escape_label(names[v - offset]) for v in values],
                "tickangle": angle,
                "tickfont": {"size": font},
            }
    label_px = TICK_PX if vertical else CHAR_PX * len(str(offset + count - 1)) + 8
    step = tick_step(count, length_px, label_px)
    first = -(-offset // step) * step  # multiples of the step: 0, 50, 100 on any window
    values = np.arange(first, offset + count, step)
    return {"tickmode": "array", "tickvals": values, "ticktext": [str(v) for v in values]}


def slant_reach(labels: Sequence[str] | None, count: int, offset: int = 0) -> float:
    """Pixels a slanted x label may reach right of its axis's end (an upper bound, known before
    the panel's size): axis_ticks slants tokens wider than 3 characters by -45 degrees, each
    rising to the right from its tick, about its width / sqrt(2) across in type up to
    FONT_MAX_PX. 0 when the axis's labels stand upright or are numbers.

    >>> slant_reach(["a", "b"], 2), round(slant_reach(["a", "supercalifragilistic"], 2))
    (0.0, 58)
    """
    if labels is None or count > LABELS_ALL_MAX or offset + count > len(labels):
        return 0.0
    widest = max(len(labels[v]) for v in range(offset, offset + count))
    if widest <= 3:
        return 0.0
    return CHAR_EM * FONT_MAX_PX * min(widest, LABEL_CHARS_MAX) / math.sqrt(2)


def thinned_note(ticks: dict, count: int) -> str:
    """' (every m-th labelled)' when token labels show a subset of ``count`` positions, else ''
    (numbers say which positions they name)."""
    values = ticks.get("tickvals")
    if "tickfont" not in ticks or len(values) >= count:
        return ""
    step = int(values[1] - values[0]) if len(values) > 1 else count
    teens = step % 100 in (11, 12, 13)
    suffix = "th" if teens else {1: "st", 2: "nd", 3: "rd"}.get(step % 10, "th")
    return f" (every {step}{suffix} labelled)"


def y_axis_margin(labels: Sequence[str] | None, count: int, offset: int = 0) -> int:
    """A left margin that holds a y axis of ``count`` positions from ``offset`` (its title and
    its widest label, tokens up to LABELS_ALL_MAX positions else numbers, in 12 px type), a few
    pixels to spare. Streamlit's plotly theme turns automargin on: when a margin is too small,
    plotly.js measures the labels, widens it and draws the whole chart a second time (2-5x the
    time of one draw on the explorer's maps).

    >>> y_axis_margin(None, 1024)  # "1023": four digits
    96
    >>> y_axis_margin(list("The exam"), 8)
    74
    """
    shown = range(offset, offset + count)
    if labels is not None and count <= LABELS_ALL_MAX and offset + count <= len(labels):
        chars = max(len(html.unescape(escape_label(labels[v]))) for v in shown)
    else:
        chars = len(str(offset + count - 1))
    return Y_AXIS_BASE_PX + math.ceil(CHAR_EM * 12 * chars) + 4
