"""Trained model: length generalization, the learned distance tables, attention on an input."""

import numpy as np
import streamlit as st

from explorer.figures.draw import chart, figure
from explorer.figures.heatmaps import Panel, make_scale, mark_position, panel_grid
from explorer.figures.plots import heatmap
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import choice, int_number, int_slider, md_escape, text_box
from explorer.stories.generalization import views
from explorer.stories.generalization.plots import (
    generalization_figure,
    loss_figure,
    prediction_figure,
)

LENGTH_MAX = 128
SEED_LIMIT = 2**31 - 1

params = current_params()  # the sidebar does not apply here; its weights go into the download

gen = views.generalization_view()
task, config = gen.task, gen.config
vocab, shift = task["vocab"], task["shift"]

st.title("Trained model")
st.markdown(
    f"A 2-layer encoder trained by `python -m relpos_lab.train` to output, at every position, "
    f"the token {shift} places to the left (or a blank · where there is none), on sequences of "
    f"{gen.min_len} to {gen.train_max_len} tokens. The *relative* model uses "
    f"RelativeMultiHeadAttention with k = {config['k']}; the *absolute* model is the same "
    "network with sinusoidal encodings added to the embeddings and no relative terms. The "
    "sidebar controls do not apply here: the trained models have their own fixed sizes "
    f"(d_model = {config['d_model']}, {config['heads']} heads)."
)

st.subheader("Length generalization")
chart(
    generalization_figure(gen.lengths, gen.curves, gen.train_max_len, gen.min_len),
    "trained_generalization",
    formula="accuracy on a fixed evaluation set, 512 sequences per length",
    shape=gen.table.shape,
    note="columns: " + ", ".join(f"{m} token, {m} sequence" for m in gen.curves),
)
st.caption(
    "Relative position is all the task needs, and the relative model keeps it right at lengths "
    "it never saw; the absolute model is right only at the positions it was trained on."
)
with st.expander("Training loss"):
    steps, _ = next(iter(gen.loss_curves.values()))
    losses = np.stack([loss for _, loss in gen.loss_curves.values()]).T
    chart(loss_figure(gen.loss_curves), "trained_loss", shape=losses.shape)

st.subheader("Learned distance tables $w^K$ and $w^V$")
tables_kind = choice(
    "tables", ["relative", "random"], "trained_tables_kind", format_func=views.KIND_LABELS.get
)
layer = choice("layer", list(range(config["layers"])), "trained_tables_layer")
tables = views.tables_view(tables_kind, layer)
k = config["k"]
c1, c2 = st.columns(2)
for column, name, table, cos in (
    (c1, "w^K", tables.w_k, tables.cos_k),
    (c2, "w^V", tables.w_v, tables.cos_v),
):
    key = name[-1].lower()
    with column:
        st.markdown(
            f"${name}$: row $r$ holds ${name}_{{r - {k}}}$, the vector of distance $r - {k}$"
        )
        chart(
            heatmap(
                table,
                title=f"{name}, layer {layer}",
                x_title="channel",
                y_title="distance j - i",
                y_labels=tables.distances,
            ),
            f"trained_w_{key}",
            shape=table.shape,
        )
        st.markdown(
            f"Cosine similarity $\\cos({name}_r, {name}_s)$ between the vectors of two distances"
        )
        chart(
            heatmap(
                cos,
                title=f"cosine similarity between distances of {name}",
                x_title="distance",
                y_title="distance",
                x_labels=tables.distances,
                y_labels=tables.distances,
                zrange=(-1.0, 1.0),
            ),
            f"trained_cos_{key}",
            shape=cos.shape,
        )
st.caption(
    "Row r of a table is the vector for distance r - k; distances beyond "
    f"±{k} share the edge rows. At initialization the rows are unrelated. In the shipped "
    f"model training moves them only a little, and mostly sets distance -{shift}, the one the "
    "task reads, apart from all the others (its cosine with every other distance of w^K is "
    "negative). Nearby distances do not grow alike: finding one exact offset is all this task "
    "rewards."
)

st.subheader("Attention on an input")
kind = choice("model", list(views.KIND_LABELS), "trained_model", format_func=views.KIND_LABELS.get)
source = choice(
    "input",
    ["random", "typed"],
    "trained_source",
    kind="radio",
    format_func=str.title,
    horizontal=True,
)
if source == "random":
    left, right = st.columns(2)
    with left:
        length = int_slider(
            "length",
            1,
            LENGTH_MAX,
            "trained_length",
            value=2 * gen.train_max_len,
            help=f"Training used lengths {gen.min_len}..{gen.train_max_len}.",
        )
    with right:
        seed = int_number("seed", 0, SEED_LIMIT, "trained_seed", 0)
    tokens = tuple(int(t) for t in views.example_tokens(length, seed))
else:
    text = text_box(
        f"token ids 1..{vocab - 1}, separated by spaces",
        "trained_tokens",
        "3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 2 3 8 4",
        4 * LENGTH_MAX,
    )
    try:
        tokens = views.typed_tokens(text, vocab, LENGTH_MAX)
    except ValueError as error:
        st.error(md_escape(str(error)), icon=":material/error:")
        st.stop()

view = views.prediction_view(kind, tokens)
n = len(view.tokens)
seen = "within" if n <= gen.train_max_len else "beyond"
st.markdown(
    f"{views.KIND_LABELS[kind]}: **{view.accuracy:.0%}** of {n} positions right "
    f"(length {n}, {seen} the training lengths)."
)
strip = np.stack([view.tokens, view.target, view.prediction])
st.markdown(
    f"Target: $\\mathrm{{target}}_i = \\mathrm{{input}}_{{i - {shift}}}$, or · where $i < {shift}$."
)
chart(
    prediction_figure(view.tokens, view.target, view.prediction, blank=views.BLANK),
    "trained_prediction",
    shape=strip.shape,
)
layers, heads = view.weights.shape[:2]
weights_scale = make_scale("weights", list(view.weights.reshape(-1, n, n)), n_keys=n)
beyond = n > gen.train_max_len
for layer_index in range(layers):
    panels = [
        Panel(view.weights[layer_index, head], title=f"layer {layer_index}, head {head}")
        for head in range(heads)
    ]
    fig = panel_grid(panels, weights_scale, columns=heads, image_side=256)
    if beyond:  # rows and columns past the dashed line are positions no training input had
        mark_position(fig, heads, gen.train_max_len, f"trained up to {gen.train_max_len}")
    figure(
        fig,
        f"trained_attention_{layer_index}",
        latex=rf"\alpha_{{ij}}\ \text{{of layer {layer_index}, every head}}"
        if layer_index == 0
        else "",
        shape=(heads, n, n),
        caption=weights_scale.caption
        + (
            f" Dashed: the longest training length, {gen.train_max_len}; positions past it "
            "were never seen in training."
            if beyond
            else ""
        ),
    )

if source == "random":
    inputs: dict[str, object] = {"trained_length": length, "trained_seed": seed}
else:
    inputs = {"trained_source": "Typed", "trained_tokens": " ".join(str(int(t)) for t in tokens)}
download_view(
    "trained",
    None,
    views.download_arrays(gen, tables_kind, layer, kind, view),
    extra={
        "weights": params.weights,
        "_attention_weights": views.KIND_WEIGHTS[kind],
        "_tables_weights": views.KIND_WEIGHTS[tables_kind],
        "trained_model": views.KIND_LABELS[kind],
        "trained_tables_kind": views.KIND_LABELS[tables_kind],
        "trained_tables_layer": layer,
        **inputs,
    },
)
