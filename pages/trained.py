"""Length generalization: two small trained encoders at lengths they never saw, their learned
distance tables, attention on an input."""

import streamlit as st

from explorer.figures.draw import chart, figure
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import choice, md_escape
from explorer.pair.card import pair_note, pair_row_note
from explorer.stories.generalization import plots, text, views
from explorer.stories.generalization.controls import input_controls
from explorer.weights.source import own_models_caption, source_of

params = current_params()  # the sidebar does not apply here; its weights go into the download

gen = views.generalization_view()
k, shift = gen.config["k"], gen.task["shift"]

st.title("Length generalization")
st.caption(own_models_caption(source_of(params), text.MODELS, text.UNTRAINED))
st.markdown(text.intro(gen))

st.subheader("Accuracy at every length")
chart(
    plots.generalization_figure(gen.lengths, gen.curves, gen.train_max_len, gen.min_len),
    "trained_generalization",
    formula=text.GENERALIZATION_FORMULA,
    shape=gen.table.shape,
    note=text.generalization_columns(gen),
)
st.caption(text.GENERALIZATION_NOTE)
with st.expander("Training loss"):
    chart(plots.loss_figure(gen.loss_curves), "trained_loss", shape=gen.losses.shape)

st.subheader("Learned distance tables $w^K$ and $w^V$")
tables_kind = choice(
    "tables", ["relative", "random"], "trained_tables_kind", format_func=views.KIND_LABELS.get
)
layer = choice("layer", list(range(gen.config["layers"])), "trained_tables_layer")
tables = views.tables_view(tables_kind, layer)
for column, name, table, cos in zip(
    st.columns(2),
    ("w^K", "w^V"),
    (tables.w_k, tables.w_v),
    (tables.cos_k, tables.cos_v),
    strict=True,
):
    key = name[-1].lower()
    with column:
        st.markdown(text.table_heading(name, k))
        fig = plots.table_figure(name, table, layer, tables.distances)
        chart(fig, f"trained_w_{key}", shape=table.shape)
        st.markdown(text.cosine_heading(name))
        fig = plots.cosine_figure(name, cos, tables.distances)
        chart(fig, f"trained_cos_{key}", shape=cos.shape)
st.caption(text.tables_note(k, shift))
pair_row_note("both tables and on both cosine similarities", k)

st.subheader("Attention on an input")
kind = choice("model", list(views.KIND_LABELS), "trained_model", format_func=views.KIND_LABELS.get)
picked = input_controls(gen)
if picked.warning:
    st.warning(md_escape(picked.warning), icon=":material/warning:")

view = views.prediction_view(kind, picked.tokens)
n = len(view.tokens)
st.markdown(text.accuracy_line(kind, view, gen.train_max_len))
st.markdown(text.target_line(shift))
figure(  # at its own width: each id in a cell wide enough for it
    plots.prediction_figure(view.tokens, view.target, view.prediction, blank=views.BLANK),
    "trained_prediction",
    shape=(3, n),
    caption="✓: the prediction equals the target; ✗: it does not.",
)
grids, scale = plots.attention_grids(view.weights, gen.train_max_len)
for layer_index, fig in enumerate(grids):
    figure(
        fig,
        f"trained_attention_{layer_index}",
        latex=text.attention_latex(layer_index),
        shape=view.weights.shape[1:],
        caption=text.attention_caption(scale.caption, n, gen.train_max_len),
    )

pair_note("every layer's weights", range(n), range(n), detail=" (every head)")

download_view(
    "trained",
    None,
    views.download_arrays(gen, tables_kind, layer, kind, view),
    extra={
        "weights": params.weights,
        **views.shown_record(kind, tables_kind, layer),
        **picked.record,
    },
)
