"""The yardstick for the explorer's page loads: a bare Streamlit page with one sidebar slider and
one 64 x 64 plotly heatmap, nothing else (no torch, no navigation, no caching).

    streamlit run scripts/bare_page.py

``scripts/measure_browser.py --bare`` opens it beside every page of the explorer, the same ways
in the same run, and reports each page's times as ratios to it: absolute times move from run to
run on a shared machine, a ratio to the least a Streamlit page with one chart costs does not.
The slider has the label of the explorer's k, so one key press measures both.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

SIDE = 64

k = st.sidebar.slider("k (clip distance)", 0, SIDE - 1, 4)
offsets = np.arange(SIDE)[None, :] - np.arange(SIDE)[:, None]  # j - i
table = np.clip(offsets, -k, k) + k
st.title("A bare page")
st.plotly_chart(go.Figure(go.Heatmap(z=table, colorscale="Viridis")), key="bare")
