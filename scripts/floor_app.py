"""The least a Streamlit page with a chart can cost: one sidebar slider and one 64 x 64 heatmap
that follows it, nothing of the explorer (no torch, no custom layout, no cached views).

On the same machine and browser it is what no page of the explorer can do faster:
``scripts/measure_browser.py --bare`` opens it beside every page, the same ways in the same run,
and reports each page's times as ratios to it (absolute times move from run to run on a shared
machine; a ratio to the floor does not, much); ``scripts/measure_host.py keypress --floor`` times
its key presses beside the pages, and ``scripts/measure_host.py coldstart --entry
scripts/floor_app.py`` its cold start. ``scripts/frame_app.py`` draws the same chart inside the
explorer's frame.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

SIDE = 64


def index_chart(k: int) -> None:
    """The index table clip(j - i, k) + k of SIDE positions, as a plain plotly heatmap."""
    positions = np.arange(SIDE)
    index = np.clip(positions[None, :] - positions[:, None], -k, k) + k
    st.plotly_chart(go.Figure(go.Heatmap(z=index)), key="chart_floor")


if __name__ == "__main__":  # streamlit run scripts/floor_app.py
    # the explorer's own label (explorer/frame/controls.py), so the same measuring code presses it
    index_chart(st.sidebar.slider("k (clip distance)", min_value=1, max_value=16, value=8))
