"""Attention: every head's weights side by side, one head in detail, the tokens as lines."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import (
    agreement_badge,
    figure,
    inset,
    plotly_chart,
    png_config,
    source_caption,
    window_caption,
)
from explorer.figures.heatmaps import IMAGE_SIDE
from explorer.figures.scales import make_scale
from explorer.figures.token_view import parse_focus, token_view
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, head_picker
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair, pair_schemes
from explorer.stories.shaw import attention_figures, controls, text, views
from explorer.stories.shaw.panels import heads_figure

params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table
pair = current_pair()
n, heads = params.length, params.heads
start, stop = params.window

st.title("Attention")
source_caption(params)
st.markdown(text.ATTENTION_INTRO)
for formula in (formulas.LOGIT, formulas.WEIGHT, formulas.OUTPUT):
    formulas.latex(formula)
st.caption(text.mask_caption(params))
window_caption(params)
if params.windowed:
    st.caption(text.attention_window(params))
if params.n_pad == n:
    st.warning(text.ALL_PADDING)

weights = views.attention_weights_heads(params)  # (h, W, W)
scale = make_scale("weights", list(weights), n_keys=n)
st.subheader(f"Every head's weights α ({heads} heads)")
grid = heads_figure(params, weights, scale)
caption = text.weights_caption(weights, grid.caption)
figure(grid.fig, "attention_heads", shape=grid.shape, caption=caption)

head = head_picker(heads, "attention_head")
view = views.attention_view(params, head)
st.subheader(f"Head {head}")
alpha = attention_figures.weights_figure(params, view, head, scale)
c1, c2 = st.columns(2)
with c1:
    figure(alpha.fig, "attention_weights", shape=alpha.shape)
with c2:
    if stop - start <= IMAGE_SIDE:
        logits = attention_figures.logits_figure(params, view, head)
        figure(logits.fig, "attention_logits", shape=logits.shape, caption=logits.caption)
    else:  # the weights are an image: their exact values here, the logits further down
        inset(alpha.panels, alpha.scale, "attention_zoom")
pair_card(params, pair, head)
st.info(text.focus_text(params, view, head), icon=":material/lightbulb:")
inside = text.weight_inside(params, view) if params.windowed else None
if inside:
    st.caption(inside)

if params.tokens:
    st.subheader("The tokens, as BertViz draws them")
    focus = controls.token_focus_picker(params)
    tokens = token_view(
        weights,
        params.tokens,
        offset=start,
        focus=parse_focus(focus),
        pair=None if pair is None else (pair.i, pair.j),
    )
    plotly_chart(
        tokens.figure,
        key=controls.TOKENS_CHART,
        width="content",
        on_select=controls.focus_token,
        selection_mode="points",
        config=png_config("attention_tokens"),
    )
    st.caption(text.tokens_caption(tokens, pair))
    repeated = text.repeated_note(params, views.repeated_tokens(params))
    if repeated:
        st.info(repeated, icon=":material/lightbulb:")

MORE = {  # what more of the head shows -> its chart's key
    "the output, split": "attention_output",
    "the logits": "attention_terms",
    "the mask": "attention_mask",
}


@fragment
def more_of_the_head() -> None:
    """The rest of one head's computation, one picture at a time (reruns only this part)."""
    what = choice(f"more of head {head}", list(MORE), "attention_more")
    chart = attention_figures.more_figure(params, view, what)
    figure(chart.fig, MORE[what], latex=chart.latex, shape=chart.shape, caption=chart.caption)
    if what == "the output, split":
        agreement_badge("z = content part + relative part", attention_figures.split_gap(view))


more_of_the_head()

download_view(
    "attention",
    params,
    attention_figures.attention_arrays(params, weights, view, head),
    extra={"attention_head": head},
)
