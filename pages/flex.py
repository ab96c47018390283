"""Masks and biases: a scheme's bias as FlexAttention's score_mod, masks as mask_mods combined
with and / or, the BlockMask block by block, and the code that runs the view, downloaded."""

import streamlit as st

from explorer.figures import draw
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import head_picker, md_escape
from explorer.stories.family import flex_exports, flex_panels, flex_text
from explorer.stories.family.flex_controls import flex_choice
from explorer.stories.family.flex_views import flex_view
from explorer.stories.family.views import unavailable

params = current_params()
n = params.length

st.title("Masks and biases")
draw.source_caption(params, scheme="each")
st.markdown(flex_text.intro())
choice = flex_choice(params)
head = head_picker(params.heads, "flex_head")
extra = {"flex_scheme": choice.scheme, "flex_head": head}

why = unavailable(params, choice.config) if choice.config is not None else None
if why is not None:
    why = f"This scheme cannot run on this view: {why}"
else:
    try:
        view = flex_view(params, choice, head)
        inputs = flex_exports.inputs_of(params, choice)
    except ValueError as error:  # a mask number outside its range, or past the memory budget
        why = str(error)


def draw_view() -> None:
    """The view: what the scheme is as a score_mod, the four panels, the blocks, the code."""
    st.info(flex_text.scheme_words(choice, inputs), icon=":material/functions:")
    if (value_words := flex_text.value_words(inputs)) is not None:
        st.warning(md_escape(value_words), icon=":material/block:")
    tokens, documents = flex_exports.tokens_read(params), flex_exports.document_count(choice)
    if words := flex_text.mask_words(choice, len(tokens), documents):
        st.caption(md_escape(words))
    if (empty := flex_text.no_key_words(view)) is not None:
        st.warning(md_escape(empty), icon=":material/warning:")

    st.header(f"Head {head}: mask, bias, logits, weights")
    draw.window_caption(params)
    fig, scales = flex_panels.view_panels(view, params, head)
    draw.figure(fig, "flex_view", shape=(n, n),
                caption=flex_text.weights_caption(view, head) + " " + scales)  # fmt: skip

    st.header("The BlockMask, block by block")
    blocks = flex_panels.block_figure(view.kinds, choice.block, n)
    draw.figure(blocks, "flex_blocks", shape=view.kinds.shape,
                caption=flex_text.block_note(view, choice.block, n))  # fmt: skip

    st.header("The code")
    st.markdown(flex_text.closed_table(flex_exports.closed(inputs)))
    st.code(flex_exports.program_text(params, choice, inputs), language="python", wrap_lines=True)
    st.caption(
        "The view's download holds this file as flex_attention.py, with q.npy, k.npy, v.npy and an "
        ".npy for each larger tensor it closes over: python flex_attention.py runs it and saves "
        "output.npy."
    )
    download_view(
        "flex",
        params,
        flex_exports.view_arrays(params, view),
        extra=extra,
        files=lambda: flex_exports.files(params, choice),
    )


if why is not None:  # words, never an error box; the settings still download
    st.warning(md_escape(f"{why}."), icon=":material/warning:")
    download_view("flex", params, {}, extra=extra)
else:
    draw_view()
