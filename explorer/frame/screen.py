"""The reader's screen, as far as the server can tell: a phone or a wider screen.

Plotly figures are laid out on the server at a fixed width, so a grid of panels cannot reflow
in the browser. A phone says what it is in its request headers (``Sec-CH-UA-Mobile: ?1`` from
Chromium-based browsers, ``Mobile`` in every phone browser's user agent); for one, figures are
laid out at most ``PHONE_WIDTH`` pixels wide (a grid then drops to fewer columns, see
``explorer.figures.heatmaps.panel_grid``). Anything else gets the wide layout, and a chart wider
than its column scrolls inside its own box (assets/layout.css).
"""

from __future__ import annotations

import streamlit as st

PHONE_WIDTH = 350  # px of a figure on a phone (a 390 px screen less the page's margins)


def is_phone() -> bool:
    """Whether the browser that asked for this run is a phone's (False outside a run)."""
    try:
        headers = st.context.headers
        mobile_hint = headers.get("Sec-CH-UA-Mobile", "")
        agent = headers.get("User-Agent", "")
    except Exception:  # no script run (a figure built in a test or a script): a wide screen
        return False
    return mobile_hint == "?1" or "Mobi" in agent


def figure_width(width: int) -> int:
    """``width`` px on a wide screen, at most PHONE_WIDTH on a phone."""
    return min(width, PHONE_WIDTH) if is_phone() else width


# A segmented control's button, measured in Chromium at 390 px: about 7 px per character of
# its label plus 32 px of padding and border, never narrower than 40 px.
BUTTON_PX_PER_CHAR, BUTTON_PAD_PX, BUTTON_MIN_PX = 7, 32, 40


def buttons_fit(labels: list[str], room: int = PHONE_WIDTH) -> bool:
    """Whether a row of buttons labelled ``labels`` fits ``room`` px on one line."""
    widths = (max(BUTTON_MIN_PX, BUTTON_PX_PER_CHAR * len(s) + BUTTON_PAD_PX) for s in labels)
    return sum(widths) <= room
