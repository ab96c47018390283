"""The plotly template every figure of the explorer is built with: Streamlit's own, and tick
labels that plotly.js draws without measuring each one.

On a linear axis plotly.js hides a tick label that would overflow the chart ("hide past div",
its default everywhere but on category axes): it measures every label with
getBoundingClientRect, and each measurement lays the whole page out again while the chart is
being drawn. At n = 1024 that took 1.3 of Multi-head's 1.8 s of measurements in Chromium, and a
4-panel map drew in 646 ms instead of 192 ms. The explorer's tick labels are chosen to fit
(explorer/figures/ticks.py) and its margins grow to hold them, so none is hidden:
``ticklabeloverflow = "allow"``, category axes' default, on every axis and on every colour bar
(a heatmap's, or the one an invisible marker carries: explorer/figures/scales.py), whose axis
plotly.js builds apart from the layout's (Attention's colour bars at n = 1024 measured their
labels for 72 ms of a reload).
"""

from __future__ import annotations

import plotly.io as pio
import streamlit  # noqa: F401  importing it registers its "streamlit" template

NAME = "explorer"
AXIS = {"ticklabeloverflow": "allow"}
BARS = {"heatmap": [{"colorbar": AXIS}], "scatter": [{"marker": {"colorbar": AXIS}}]}


def use_template() -> None:
    """Make the explorer's template plotly's default (once per process)."""
    if NAME not in pio.templates:
        # one merged template: "streamlit+explorer" as the default would merge on every figure
        own = {"layout": {"xaxis": AXIS, "yaxis": AXIS}, "data": BARS}
        pio.templates[NAME] = pio.templates.merge_templates("streamlit", own)
    pio.templates.default = NAME
