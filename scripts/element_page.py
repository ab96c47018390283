"""The floor page (scripts/floor_app.py) and ``ELEMENT_COUNT`` elements of one kind under it:
``ELEMENT_KIND``, a key of KINDS. ``scripts/element_costs.py`` opens it once per kind to find
what one element of each kind adds to a page's open.
"""

import os
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor_app import index_chart  # noqa: E402

TEXT = (
    "Self-attention by itself cannot tell word order: permute the keys and every query sees "
    "the same set; relative position representations add what the distance contributes."
)


def small_chart(i: int) -> None:
    st.plotly_chart(go.Figure(go.Heatmap(z=np.arange(64).reshape(8, 8) + i)), key=f"chart_{i}")


def folded(i: int) -> None:
    with st.expander(f"details {i}"):
        st.markdown(TEXT)


# kind -> one element of it, the i-th (widgets in the sidebar, as the explorer's shared controls)
KINDS = {
    "none": None,
    "markdown": lambda i: st.markdown(f"{TEXT} ({i})"),
    "inline formula": lambda i: st.markdown(
        f"The logit $e_{{ij}} = q_i k_j^\\top / \\sqrt{{d}} + {i}$"
    ),
    "st.latex": lambda i: st.latex(f"e_{{ij}} = \\frac{{q_i k_j^\\top}}{{\\sqrt{{d}}}} + {i}"),
    "caption": lambda i: st.caption(f"{TEXT} ({i})"),
    "info": lambda i: st.info(f"{TEXT} ({i})", icon=":material/lightbulb:"),
    "expander (folded)": folded,
    "page_link": lambda i: st.page_link("https://example.com", label=f"link {i}"),
    "number_input": lambda i: st.sidebar.number_input(f"number {i}", 0, 10, 2),
    "selectbox": lambda i: st.sidebar.selectbox(f"choice {i}", [1, 2, 3]),
    "radio": lambda i: st.sidebar.radio(f"radio {i}", ["a", "b", "c"], horizontal=True),
    "segmented_control": lambda i: st.sidebar.segmented_control(
        f"segments {i}", ["a", "b"], default="a"
    ),
    "plotly chart (8 x 8 heatmap)": small_chart,
}

if __name__ == "__main__":  # streamlit run scripts/element_page.py
    index_chart(st.sidebar.slider("k (clip distance)", min_value=1, max_value=16, value=8))
    draw = KINDS[os.environ.get("ELEMENT_KIND", "none")]
    for i in range(int(os.environ.get("ELEMENT_COUNT", "20")) if draw else 0):
        draw(i)
