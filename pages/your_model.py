"""Your model: a checkpoint's position parameters, head by head, at the sidebar's n. With
nothing uploaded, the family's trained T5 and Shaw models, drawn the same way."""

import streamlit as st

from explorer.figures.draw import chart, figure
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import choice, head_picker, int_number, md_escape, text_box
from explorer.pair.controls import current_pair, mark_picked_distance
from explorer.stories.your_model import (
    exports,
    figures,
    pair_notes,
    projected,
    sources,
    text,
    views,
)

MATRIX_MAX = 256  # queries and keys of the matrix drawn (it depends on j - i only)

params = current_params()
n = params.length

st.title("Your model's positions")
st.markdown(text.INTRO)
origin = choice("whose positions", sources.SOURCES, "your_model_from")
files, hub_name = [], ""
if origin == sources.UPLOAD:
    files = st.file_uploader(
        "your checkpoint (and its config.json)",
        type=None,  # sources checks each name: Streamlit's own check fails the run in its box
        accept_multiple_files=True,
        key="your_model_upload",
        help=text.UPLOAD_HELP,
        max_upload_size=sources.MAX_UPLOAD_MB,
    )
    st.caption(text.UPLOAD_HELP)
elif origin == sources.HUB:
    hub_name = text_box("Hub model name", "your_model_hub", "", 96, help=text.HUB_HELP,
                        placeholder="t5-small")  # fmt: skip
    st.caption(text.HUB_HELP)
picked = sources.pick(origin, files or [], hub_name)
if picked.problem:
    st.warning(md_escape(picked.problem), icon=":material/report:")
positions = picked.positions
st.caption(text.origin_caption(picked))
st.markdown("\n".join(f"- {md_escape(line)}" for line in positions.summary()))
arrays: dict = {}

# ---- T5: one bias per head and bucket ---------------------------------------------------------
pair = current_pair()
if positions.t5:
    st.header("T5's bias by distance", divider="gray")
    labels = [stack.label for stack in positions.t5]
    shown = choice("stack and layer", labels, "your_model_stack", kind="select")
    stack = positions.t5[labels.index(shown)]
    if picked.origin == sources.FAMILY:
        trained_on = views.family_training_length()
    else:
        st.caption(md_escape(text.training_unknown(stack)))
        trained_on = int_number("its training length (0: not known)", 0,
                                views.MAX_TRAINING_LENGTH, "your_model_trained", 0)  # fmt: skip
    t5_views = [views.t5_view(s, n, trained_on or None) for s in positions.t5]
    view = t5_views[labels.index(shown)]
    fig, caption = figures.t5_figure(view, pair)
    caption += mark_picked_distance(fig) + pair_notes.t5_pair_note(view, pair)
    chart(fig, "your_model_t5", formula="e_ij += b_h[bucket(j - i)]", note=caption)
    st.markdown(md_escape(text.t5_note(view, n)))
    head = head_picker(view.stack.heads, "your_model_head")
    size = min(n, MATRIX_MAX)
    matrix = figures.shown_matrix(view, head, size)
    fig, caption = figures.matrix_figure(matrix, view, head)
    where = f"its first {size} queries and keys (every window alike: it depends on j - i only)"
    if size == 1:
        where = "its one query and key"
    figure(fig, "your_model_matrix", shape=(size, size),
           caption=f"What head {head}'s logits receive, {where}. {caption}"
           + pair_notes.matrix_pair_note(view, pair, head, size))  # fmt: skip
    arrays["t5_bias"] = exports.t5_table(t5_views)
    arrays.update(exports.t5_arrays(view, head, matrix, figures.drawn(view, pair)))

# ---- Shaw: key and value tables ---------------------------------------------------------------
if positions.shaw:
    st.header("Shaw's tables", divider="gray")
    layers = [layer.layer for layer in positions.shaw]
    layer = choice("layer", layers, "your_model_layer")
    view = views.shaw_view(positions.shaw[layers.index(layer)], n)
    fig, caption = figures.shaw_tables_figure(view)
    figure(fig, "your_model_shaw_tables", latex=r"w_r,\ r = -k, \dots, k",
           caption=caption + pair_notes.shaw_pair_note(view, pair))  # fmt: skip
    st.markdown(text.SHAW_QUERIES)
    fig = figures.shaw_norms_figure(view)
    note = text.shaw_note(view, n) + mark_picked_distance(fig)
    chart(fig, "your_model_shaw_norms", formula="|w_clip(j - i, k)|", note=note)
    arrays.update(exports.shaw_tables(positions.shaw))
    arrays[f"shaw_norms_layer{layer}"] = exports.shaw_norms(view)

# ---- DeBERTa: a table of relative embeddings, projected per layer and head ---------------------
if positions.projected:
    st.header("Position vectors by distance", divider="gray")
    labels = [layer.label for layer in positions.projected]
    shown = choice("layer", labels, "your_model_projected_layer", kind="select")
    view = projected.projected_view(positions.projected[labels.index(shown)], n)
    fig = projected.rows_figure(view)
    note = projected.rows_note(view, pair) + mark_picked_distance(fig)
    formula = "c(r) = clamp(bucket(-r) + span, 0, 2 span - 1)"
    chart(fig, "your_model_projected_rows", formula=formula, note=note)
    head = head_picker(view.layer.heads, "your_model_projected_head")
    fig, caption = projected.vectors_figure(view, head)
    figure(fig, "your_model_projected_vectors", latex=r"P^K_{c(r)},\ P^Q_{c(r)}",
           caption=f"{projected.vectors_note(view, head)} {caption}")  # fmt: skip
    fig = projected.norms_figure(view, head)
    chart(fig, "your_model_projected_norms", formula="|P^K[c(r)]|, |P^Q[c(r)]|",
          note=mark_picked_distance(fig).strip())  # fmt: skip
    arrays.update(projected.arrays(view, head))

# ---- ALiBi and RoPE: no trained parameter, the configuration's -------------------------------
if positions.alibi:
    st.header("ALiBi's slopes", divider="gray")
    distance, slopes, values = views.alibi_view(positions.alibi, n)
    fig = figures.alibi_figure(distance, slopes, values)
    note = (
        text.alibi_note(slopes, n)
        + mark_picked_distance(fig)
        + pair_notes.alibi_pair_note(slopes, pair)
    )
    chart(fig, "your_model_alibi", formula="e_ij += -m_h |j - i|", note=note)
    arrays["alibi_slopes"] = slopes
    arrays["alibi_bias"] = exports.alibi_bias(distance, values)
if positions.rope:
    st.header("RoPE's frequencies", divider="gray")
    rope = views.rope_view(positions.rope, n)
    chart(figures.rope_figure(rope, n, pair), "your_model_rope", formula="θ_t = base^(-2t/d)",
          note=text.rope_note(rope, n) + pair_notes.rope_pair_note(rope, pair))  # fmt: skip
    arrays["rope_wavelengths"] = rope.wavelength

st.info(text.COMMAND, icon=":material/terminal:")
download_view("your_model", params, arrays, extra={"_source": positions.source})
