"""The least a Streamlit page with a chart can cost: one sidebar slider and one heatmap that
follows it, nothing of the explorer (no torch, no custom layout, no cached views).

``scripts/measure_host.py keypress --floor`` times its key presses beside the explorer's pages,
and ``scripts/measure_host.py coldstart --entry scripts/floor_app.py`` its cold start: on the
same machine and browser, what no page of the explorer can do faster.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

# the explorer's own label (explorer/frame/controls.py), so the same measuring code presses it
k = st.sidebar.slider("k (clip distance)", min_value=1, max_value=16, value=8)
positions = np.arange(12)
index = np.clip(positions[None, :] - positions[:, None], -k, k) + k  # clip(j - i, k) + k
st.plotly_chart(go.Figure(go.Heatmap(z=index)), key="chart_floor")
