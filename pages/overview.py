"""Overview: what relative position representations are, why, and a link to every page."""

from pathlib import Path

import numpy as np
import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import chart
from explorer.figures.plots import heatmap, pair_customdata
from explorer.frame import navigation
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.route_bar import route_cards
from explorer.pair.controls import pair_schemes
from explorer.weights.reading import axis_labels
from explorer.weights.source import no_model_caption
from relpos_core import clip_index

PAGES = Path(__file__).resolve().parent  # page_link by absolute path: any entry script works
CORNER = 12  # the index table is drawn for the first positions only: it is an illustration


params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table

st.title("Relative position attention, step by step")
st.caption(
    no_model_caption(
        "its one figure is the definition clip(j - i, k) + k for the sidebar's n and k, the "
        "table row each pair (i, j) reads"
    )
)
st.markdown(
    "Self-attention by itself cannot tell word order: permute the keys and every query sees the "
    "same set. **Relative position representations** (Shaw et al. 2018) add what the *distance* "
    "$j - i$ between query $i$ and key $j$ contributes, learned once per distance and shared by "
    "every position, instead of adding an absolute position to each token."
)
st.markdown(
    "Two words every page uses. **Causal** attention: query $i$ sees only the keys $j \\le i$ "
    "(a model that writes text one character at a time reads nothing ahead). "
    "**The family**: six published position schemes (Shaw et al.'s, the Music Transformer's, "
    "Transformer-XL's, T5's, ALiBi's and RoPE's), each trained into a small causal character "
    "model, beside one model with no position and one with the sinusoid of the original "
    "Transformer, all on the same text with the same budget. Pages draw these trained models "
    "by default; the sidebar's weights switch draws seeded random tensors instead."
)

st.subheader("Routes: a short way for one question")
st.caption(
    "Pick one and the previous / next links at the foot of each page follow it; the sidebar "
    "shows it (and the address keeps it). Every page stays in the navigation."
)
route_cards()

st.subheader("Every page, in the order of the story")
for section in navigation.SECTIONS:
    pages = [page for page in section.pages if page != navigation.DEFAULT]
    if pages:
        st.markdown(f"**{section.label}**")  # the sidebar's sections
    for page in pages:
        link, what = st.columns([1, 4], vertical_alignment="center", gap="small")  # lines wrap
        link.page_link(PAGES / page.file, label=page.title, icon=page.icon, width="content")
        what.caption(page.what)

left, right = st.columns(2)
with left:
    st.subheader("Shaw et al. 2018")
    st.markdown(
        "Two tables of $2k + 1$ vectors each, $w^K = (w^K_{-k}, \\dots, w^K_k)$ and $w^V$: "
        "distances beyond $\\pm k$ share the edge vector."
    )
    formulas.latex(formulas.CLIP)
    formulas.latex(formulas.A_K + r",\qquad " + formulas.A_V)
    st.markdown(
        "The logit $e_{ij}$ is the content term plus the relative term; the output adds "
        "$a^V_{ij}$ to each value:"
    )
    formulas.latex(formulas.LOGIT)
    formulas.latex(formulas.WEIGHT)
    formulas.latex(formulas.OUTPUT)
    st.markdown("Stored 0-based, pair $(i, j)$ reads table row")
    formulas.latex(formulas.INDEX)
    start, stop = params.window
    size = min(CORNER, stop - start)
    # a diagonal window reads the rows its origin's does; float32 as every view is drawn
    corner = clip_index(size, size, params.k).astype(np.float32)
    rows, cols = axis_labels(params)
    chart(
        heatmap(
            corner,
            title=f"this view's index table, positions {start}-{start + size - 1} "
            f"(n = {params.length}, k = {params.k})",
            x_labels=cols,  # indexed by position, as the offsets below say
            y_labels=rows,
            scale="index",
            customdata=pair_customdata(corner, start, start),
            row_offset=start,
            col_offset=start,
            cell_text=corner.astype(int),
            zrange=(0, max(2 * params.k, 1)),
            height=360,
            pair_axes=True,
        ),
        "overview_index",
        note=(
            f"The first {size} x {size} of the ({params.length}, {params.length}) table; "
            "the Lookup table page draws the rest."
            if size < params.length
            else f"shape ({size}, {size})"
        ),
    )
with right:
    st.subheader("Huang et al. 2018 (Music Transformer)")
    st.markdown(
        "Gathering $a^K_{ij}$ for every pair builds an $(n, n, d)$ tensor per head: for the "
        "paper's example, $n = 2048$ and all heads together $d_{\\text{model}} = 512$ wide, "
        "that is 8.6 GB per layer in float32. The **skew** instead stacks one embedding per "
        "distance as the rows of a matrix $E_r$ ($2n - 1$ rows of width $d$), multiplies the "
        "queries by it, $Q E_r^\\top$ of shape $(n, 2n - 1)$ (or $(n, n)$ for causal "
        "attention), then moves each row into place with a pad, a reshape and a slice: the "
        "extra memory is $O(n^2)$ per head, the size of the logits themselves, instead of "
        "$O(n^2 d)$."
    )
    formulas.latex(formulas.SKEW)
st.caption(
    f"Current view: n = {params.length}, k = {params.k}, d_model = {params.d_model}, "
    f"heads = {params.heads} (head dim {params.head_dim}), seed = {params.seed}, "
    f"mask = {params.mask}. Every number on every page comes from relpos_core; every control "
    "lives in the URL, so a copied link reproduces the view."
)
labels = position_labels(params, start, start + size)
download_view(
    "overview",
    params,
    {
        "index": Labelled(
            corner,
            f"clip(j - i, k) + k, the table row pair (i, j) reads; positions {start}-"
            f"{start + size - 1}",
            rows=labels,
            cols=labels,
            corner="query i \\ key j",
        )
    },
)
