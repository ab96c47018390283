"""Attention basics: where attention comes from (a decoder reading its encoder), additive and
dot-product scores on the same states, and the worked example of scaled dot-product attention
to edit: cross-attention, and self-attention as the case where queries and keys are one."""

import streamlit as st

from explorer.figures.draw import agreement_badge, chart, figure
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.tex import latex
from explorer.frame.widgets import choice, int_slider, md_escape, text_box
from explorer.pair.card import pair_note
from explorer.stories.basics import download, notes, text, views
from explorer.stories.basics.figures import alignment_figure, example_panels, score_panels
from explorer.stories.basics.scaling import (
    KEYS_DEFAULT,
    KEYS_MAX,
    KEYS_MIN,
    NOTE_D_K,
    saturation_figure,
    scale_note,
    scale_view,
    spread_figure,
)
from explorer.weights.source import source_of

params = current_params()
source = source_of(params)

st.title("Attention basics")
st.caption(text.source_caption(source))
st.markdown(text.INTRO)
latex(text.BAHDANAU)

# ---- 1. the copy model's alignment ----------------------------------------------------------
st.header(text.alignment_heading(source))
st.markdown(text.task(source))
items_text = text_box(
    "input items (whole numbers, spaces between)", "items", views.ITEMS_DEFAULT, 80,
    help=text.ITEMS_HELP,
)  # fmt: skip
items, problem = views.items_or_default(items_text)
if problem:
    st.warning(md_escape(problem), icon=":material/warning:")
copy = views.copy_of(source, items)
chart(
    alignment_figure(copy), "basics_alignment", shape=copy.weights.shape, note=text.ALIGNMENT_NOTE
)
pair_note(text.COPY_FIGURES, *map(range, copy.weights.shape), names=("outputs", "inputs"))
st.info(md_escape(notes.alignment_note(copy, source)), icon=":material/lightbulb:")
agreement_badge("the model's scores e_ij vs the definition by loops", copy.additive_diff)
st.caption(text.cross_attention(copy))

# ---- 2. additive against dot product -------------------------------------------------------
st.header("2 · Additive against dot-product scores, on the same states")
st.markdown(text.dot_product(copy))
left, right = st.columns(2)
with left:
    latex(text.ADDITIVE)
    st.caption(text.additive_size(copy, source))
with right:
    latex(text.DOT)
    st.caption(text.dot_size(copy, source))
for row in score_panels(copy):
    for column, (key, fig, shape) in zip(st.columns(2), row, strict=True):
        with column:
            chart(fig, key, shape=shape)
st.caption(text.SCORES_CAPTION)
agreement_badge("dot-product scores vs the definition by loops", copy.dot_diff)
st.info(md_escape(notes.reads_note(copy, source)), icon=":material/lightbulb:")

# ---- 3. the worked example -----------------------------------------------------------------
st.header("3 · Query, key and value: the worked example")
st.markdown(text.QUERY_KEY_VALUE)
latex(text.ATTENTION)
example_source = choice(
    "queries", list(views.EXAMPLE_SOURCES), "example_source",
    help="Self-attention: every position of one sequence queries all of them, Q = K.",
)  # fmt: skip
boxes = st.columns(3)
with boxes[0]:
    q_text = text_box("Q (rows: queries)", "example_q", views.EXAMPLE_Q, 200)
with boxes[1]:
    k_text = text_box("K (rows: keys)", "example_k", views.EXAMPLE_K, 200)
with boxes[2]:
    v_text = text_box("V (rows: values, one per key)", "example_v", views.EXAMPLE_V, 200)
st.caption(text.MATRIX_FORM)
example, problem = views.example_of(example_source, q_text, k_text, v_text)
if problem:
    st.warning(md_escape(problem), icon=":material/warning:")
for row in example_panels(example):
    for column, (key, fig, shape) in zip(st.columns(3), row, strict=True):
        with column:
            chart(fig, key, shape=shape)
pair_note(text.EXAMPLE_FIGURES, *map(range, example.weights.shape), detail=text.EXAMPLE_ROWS)
agreement_badge("weights and output vs the definition by loops", example.max_diff)
st.caption(text.EXAMPLE_CAPTION)
self_attention = views.is_self_attention(example_source)
st.info(md_escape(notes.ties_note(example, self_attention)), icon=":material/lightbulb:")

# ---- 4. why sqrt(d) ----------------------------------------------------------------------
st.header("4 · Why divide by √d")
st.markdown(text.WHY_SCALE)
slider_column, _ = st.columns([1, 2])
with slider_column:
    keys_per_row = int_slider(
        "n keys per row", KEYS_MIN, KEYS_MAX, "scale_keys", KEYS_DEFAULT,
        help="How many keys one query's softmax spreads over, in the right-hand chart.",
    )  # fmt: skip
scales = scale_view(keys_per_row, params.seed)
left, right = st.columns(2)
with left:
    figure(
        spread_figure(scales.d_k, scales.unscaled_std, scales.scaled_std),
        "scale_spread",
        latex=text.SPREAD,
        shape=scales.d_k.shape,
        caption=text.spread_caption(scales, params.seed),
    )
with right:
    figure(
        saturation_figure(scales.d_k, scales.unscaled_max, scales.scaled_max, keys_per_row),
        "scale_saturation",
        latex=text.SATURATION,
        shape=scales.d_k.shape,
        caption=text.saturation_caption(scales),
    )
st.info(md_escape(scale_note(scales, NOTE_D_K)), icon=":material/lightbulb:")

download_view(
    "basics",
    params,
    download.arrays(copy, example, scales),
    extra=download.extra(source, copy, scales),
)
