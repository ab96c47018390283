"""Predict: a family model's next character and the attention behind it, text it writes one
character at a time, and the bits it spends along a passage past its training length."""

from pathlib import Path

import numpy as np
import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import chart, plotly_chart, png_config, shape_text
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import choice, int_number, int_slider, md_escape
from explorer.stories.predict import controls, exports, extension, figures, text, views
from explorer.stories.predict import heads as grid_heads
from explorer.weights.source import own_models_caption, source_of

params = current_params()  # the sidebar's text and n; its weights switch does not apply here
opened = st.session_state.pop(controls.OPEN_KEY, None)
if opened is not None:  # a map of the grid below was clicked, its page's controls were set
    controls.open_page(Path(__file__).resolve().parent / opened[0], opened[1])

st.title("Predict")
st.caption(own_models_caption(source_of(params), text.MODELS, text.UNTRAINED))
st.markdown(text.INTRO)
name = choice("model", text.MODEL_NAMES, "predict_model", default="alibi")
config = views.model_config(name)
st.caption(md_escape(text.model_line(name, config)))
source = views.text_of(params)
view = views.next_view(name, source)
context = config.context
ceiling = float(np.log2(config.vocab))  # bits of a uniform guess: the colour scale's top
if view.unread:
    st.warning(md_escape(text.unread_line(view)), icon=":material/warning:")

st.subheader("1 · The next character")
formulas.latex(text.NEXT_FORMULA)
st.caption(md_escape(text.source_line(params, view)))
chart(
    figures.top_figure(view.top_chars, view.top_probs),
    "predict_top",
    shape=view.top_probs.shape,
    note="The ten most likely of the model's vocabulary; '\ufffd' is the id of every "
    "character it cannot read.",
)
st.info(md_escape(text.top_note(view)), icon=":material/lightbulb:")
st.markdown("**The last character's attention, every layer and head**")
formulas.latex(text.ATTENTION_FORMULA)
fig, scale_caption = figures.attention_figure(view.attention, view.labels)
chart(fig, "predict_attention", shape=view.attention.shape, note=scale_caption)
st.info(md_escape(text.attention_note(view)), icon=":material/lightbulb:")

st.subheader("2 · Writing, one character at a time")
formulas.latex(text.SAMPLE_FORMULA)
st.caption(text.SAMPLE_WORDS)
c1, c2, c3, c4 = st.columns(4)
with c1:
    count = int_slider("characters", 0, views.GENERATE_MAX, "predict_count", 40)
with c2:
    temperature = choice(
        "temperature T", views.TEMPERATURES, "predict_temperature", kind="select_slider",
        default=0.8,
    )  # fmt: skip
with c3:
    top_k = int_slider("top-k", 1, config.vocab - 1, "predict_top_k", 10)  # not the unknown id
with c4:
    seed = int_number("seed", 0, 2**31 - 1, "predict_seed", 0)
gen = views.generate(name, source, count, temperature, top_k, seed)
step = None  # the attention behind one written character, when there is one
if gen.chars:
    st.markdown(text.written(gen))
    written_box = st.container()  # drawn once the picked character is known
    st.markdown("**The attention that wrote a character**")
    formulas.latex(text.WRITER_FORMULA)
    with st.columns([1, 3])[0]:
        t = int_number(
            "written character t", 0, len(gen.chars) - 1, controls.CHARACTER_KEY, 0,
            help="Or click a character above.",
        )  # fmt: skip
    with written_box:
        chart(
            figures.written_figure(gen, t, ceiling),
            "predict_written",
            shape=gen.probs.shape,
            note=text.generation_caption(gen, temperature, top_k, seed),
            on_click=controls.pick_character,
        )
    step = views.writing_step(name, source, count, temperature, top_k, seed, t)
    fig, scale_caption = figures.step_figure(step)
    chart(
        fig, "predict_step", shape=step.attention.shape,
        note=text.step_caption(step, gen, scale_caption),
    )  # fmt: skip
    st.info(md_escape(text.step_note(step)), icon=":material/lightbulb:")
else:
    st.caption("No characters to write: move *characters* above 0.")

st.subheader("3 · The loss along a passage, past the training length")
length = choice(
    "passage length", views.PASSAGE_LENGTHS, "predict_length", kind="select_slider",
    default=views.PASSAGE_LENGTHS[-1],
)  # fmt: skip
rope_type = choice(extension.LABEL, extension.EXTENSIONS, "predict_extension", help=extension.HELP)
loss = extension.with_extension(views.loss_along(length), rope_type)
st.caption(md_escape(text.passage_line(loss, context)))
chart(
    figures.bits_figure(loss.text, loss.bits[name], context, ceiling), "predict_bits",
    shape=loss.bits[name].shape,
    note=text.bits_caption(text.model_label(name), context, ceiling, config.vocab),
)  # fmt: skip
names = extension.curve_names(rope_type, length, context)
formulas.latex(extension.running_formula(rope_type))
chart(
    figures.running_mean_figure({n: loss.running_mean(n) for n in names}, names, context),
    "predict_running", shape=(len(names), length),
    note="Every model on the same passage; shaded: past the training length.",
)  # fmt: skip
for note in extension.notes(loss, rope_type, context):
    st.info(md_escape(note), icon=":material/lightbulb:")

st.subheader("4 · Every head at a glance")
formulas.latex(text.GRID_FORMULA)
heads = grid_heads.heads_view(name, source)
grid = figures.heads_figure(heads.weights, heads.readings, heads.labels)
st.caption(md_escape(text.grid_line(heads, config)))
link = grid_heads.head_link(name, 0, 0)  # None: no page draws this model's heads further
shape = f"shape {shape_text(heads.weights.shape)} · "
caption = shape + text.grid_caption(grid.caption, name, link)
plotly_chart(
    grid.figure,
    key=controls.GRID_CHART,
    caption=caption,
    width="content",
    config=png_config("predict_heads"),
    **({} if link is None else controls.grid_clicks(name, grid.clickable)),
)
st.caption(md_escape(caption))
st.info(md_escape(text.grid_note(heads)), icon=":material/lightbulb:")

download_view(
    "predict",
    params,
    exports.arrays(view, gen, step, loss, heads, name),
    extra={
        "predict_model": name, "predict_count": count, "predict_temperature": temperature,
        "predict_top_k": top_k, "predict_seed": seed, "predict_length": length,
        "predict_extension": rope_type,
        **({} if step is None else {"predict_char": step.t}),
    },
)  # fmt: skip
