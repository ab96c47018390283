"""Multi-head and masks: every step of multi-head attention with its shape, and the padding and
look-ahead masks through the softmax (why q · k is divided by sqrt(d) is on Attention basics)."""

import streamlit as st

from explorer.figures.draw import agreement_badge, figure, unread_warning
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.tex import latex
from explorer.frame.widgets import choice, md_escape, text_box
from explorer.pair.card import pair_note
from explorer.stories.multihead import download, figures, text
from explorer.stories.multihead.masks import (
    MASK_KINDS,
    TOKENS_DEFAULT,
    mask_note,
    mask_view,
    tokens_or_default,
)
from explorer.stories.multihead.notes import drawn_note, shares_note
from explorer.stories.multihead.views import heads_spec, multihead_view
from explorer.weights.source import source_of

params = current_params()
source = source_of(params)
view = multihead_view(heads_spec(params))

st.title("Multi-head and masks")
st.caption(text.source_caption(source))
unread_warning(params, "nope")
st.markdown(text.INTRO)

# ---- 1. multi-head attention ---------------------------------------------------------------
st.header("Multi-head attention, every step with its shape", divider="gray")
latex(text.MULTIHEAD)
st.caption(text.shape_caption(view, params, source))
with st.expander("Every step and its shape", expanded=False):
    st.markdown(text.steps_table(view))

st.subheader("x to Q, K, V: d_model wide")
split_of = choice(
    "projection", ["Q", "K", "V"], "multihead_split",
    help="Which of Q, K, V the figures below draw, whole and split into heads.",
)  # fmt: skip
fig, about = figures.qkv_figure(view, split_of, source)
figure(fig, "multihead_qkv", **about)

st.subheader(f"Split into {view.weights.shape[0]} heads: (b, h, n, d_model / h)")
fig, about = figures.split_figure(view, split_of)
figure(fig, "multihead_split", **about)

st.subheader("Each head's weights")
fig, about = figures.weights_figure(view, masked=params.mask != "none")
figure(fig, "multihead_weights", **about)
pair_note(
    "each head's weights", *map(range, view.weights.shape[1:]),
    detail=", with row i of x, Q, the heads and the output (row j of K and V)",
)  # fmt: skip
st.info(md_escape(drawn_note(view, source.unit)), icon=":material/lightbulb:")

st.subheader("Each head's output, concatenated, then W^O")
fig, about = figures.output_figure(view)
figure(fig, "multihead_output", **about)
st.info(md_escape(shares_note(view.head_share)), icon=":material/lightbulb:")
agreement_badge(text.DEFINITION_BADGE, view.definition_diff)
if view.model_diff is not None:
    agreement_badge(text.model_badge(params.layer), view.model_diff)

# ---- 2. masks --------------------------------------------------------------------------------
st.header("Masks: padding and look-ahead, and what softmax does with them", divider="gray")
st.markdown(text.MASKS)
left, right = st.columns([3, 2])
with left:
    typed = text_box(
        "token ids (0 = padding)", "multihead_tokens", TOKENS_DEFAULT, 200,
        help="Whole numbers separated by spaces, one per token; 0 is the padding id.",
    )  # fmt: skip
with right:
    kind = choice(
        "mask applied in this section", list(MASK_KINDS), "multihead_mask", default="both",
        help="This section's mask only; the sidebar's mask drives section 1.",
    )  # fmt: skip
tokens, problem = tokens_or_default(typed)
if problem:
    st.warning(md_escape(problem), icon=":material/warning:")
masks = mask_view(tokens, kind, params.seed, d=view.q_heads.shape[-1])
st.markdown(text.mask_calls(masks))
fig, about = figures.masks_figure(masks, kind)
figure(fig, "multihead_masks", **about)
fig, about = figures.mask_weights_figure(masks, kind, params.seed)
figure(fig, "multihead_mask_weights", **about)
pair_note("the masks and the weights of these tokens", range(len(tokens)), range(len(tokens)))
st.info(md_escape(mask_note(masks.mask, masks.weights, kind)), icon=":material/lightbulb:")
agreement_badge("weights on hidden cells are exactly 0", masks.hidden_weight, tolerance=0.0)
agreement_badge("each row that sees a key sums to 1", masks.row_sum_diff)

download_view(
    "multihead",
    params,
    download.arrays(view, masks, kind, params),
    extra=download.extra(split_of, kind, masks, view, source),
)
