"""Overview: what relative position representations are, why, and where each step is drawn."""

from pathlib import Path

import streamlit as st

from explorer import compute
from explorer.controls import current_params
from explorer.draw import chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata

PAGES = Path(__file__).resolve().parent  # page_link by absolute path: any entry script works
params = current_params()

st.title("Relative position attention, step by step")
st.markdown(
    "Self-attention by itself cannot tell word order: permute the keys and every query sees the "
    "same set. **Relative position representations** (Shaw et al. 2018) add what the *distance* "
    "j - i between query i and key j contributes, learned once per distance and shared by every "
    "position, instead of adding an absolute position to each token."
)
left, right = st.columns(2)
with left:
    st.subheader("Shaw et al. 2018")
    st.latex(
        r"a^K_{ij} = w^K_{\mathrm{clip}(j-i,\,k)},\quad a^V_{ij} = w^V_{\mathrm{clip}(j-i,\,k)}"
    )
    st.latex(r"\mathrm{clip}(x, k) = \max(-k, \min(k, x))")
    st.latex(r"e_{ij} = \frac{x_i W^Q \,(x_j W^K)^\top + x_i W^Q\, (a^K_{ij})^\top}{\sqrt{d}}")
    st.latex(
        r"\alpha_{ij} = \mathrm{softmax}_j(e_{ij}),\qquad "
        r"z_i = \sum_j \alpha_{ij}\,(x_j W^V + a^V_{ij})"
    )
    st.markdown(
        "Only 2k+1 vectors per table, w = (w_-k, ..., w_k): distances beyond ±k share the edge "
        "vector. Stored 0-based, pair (i, j) reads row clip(j - i, k) + k."
    )
with right:
    st.subheader("Huang et al. 2018 (Music Transformer)")
    st.markdown(
        "Gathering a^K for every pair builds an (n, n, d) tensor: for n = 2048, d = 512 that is "
        "8.6 GB per layer in float32. The **skew** instead multiplies the queries by one "
        "embedding per distance, Q Er^T of shape (n, 2n-1) (or (n, n) for causal attention), "
        "then moves each row into place with a pad, a reshape and a slice: memory O(n d)."
    )
    st.latex(r"S^{rel}_{ij} = (Q E_r^\top)_{i,\; j - i + n - 1}")
    view = compute.lookup_view(params)
    rows, cols = axis_labels(params)
    start = params.window[0]
    chart(
        heatmap(
            view.index,
            title=f"this view's index table (n = {params.length}, k = {params.k})",
            x_labels=cols,
            y_labels=rows,
            scale="index",
            customdata=pair_customdata(view.index, start, start),
            row_offset=start,
            col_offset=start,
            cell_text=view.index.astype(int),
            zrange=(0, max(2 * params.k, 1)),
            height=320,
        ),
        "overview_index",
        view.index,
        formula="clip(j - i, k) + k",
        shape=(params.length, params.length),
        note=window_note(params),
    )
    window_caption(params, "the index table")

st.subheader("The pages")
st.page_link(
    PAGES / "lookup.py", label="Lookup table: j - i, clipped, the index table, w^K, w^V, a^K"
)
st.page_link(
    PAGES / "logits.py",
    label="Relative logits: QK^T and q_i·a^K_ij three ways, tensor2tensor's six steps",
)
st.page_link(PAGES / "skew.py", label="Skew: masked and unmasked, padded, reshaped, sliced; memory")
st.page_link(
    PAGES / "attention.py", label="Attention: logits, masks, softmax weights, the output split"
)
st.page_link(
    PAGES / "absolute.py", label="Absolute vs relative: the sinusoid and its PE·PE similarity"
)

st.caption(
    f"Current view: n = {params.length}, k = {params.k}, d_model = {params.d_model}, "
    f"heads = {params.heads} (head dim {params.head_dim}), seed = {params.seed}, "
    f"mask = {params.mask}. Every number on every page comes from relpos_core; every control "
    "lives in the URL, so a copied link reproduces the view."
)
