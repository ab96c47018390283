"""Long context: which of RoPE's rotary pairs turn within the training length, how its logit
decays with distance, what position interpolation, NTK-aware scaling, YaRN and Llama 3's rule
do to the trained RoPE model, and whether the family's models sink attention on the first
characters (StreamingLLM's question)."""

import streamlit as st

from explorer.figures import draw, formulas
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import md_escape
from explorer.pair.controls import current_pair
from explorer.stories.long_context import exports, figures, text, views
from explorer.weights.source import own_models_caption, source_of
from relpos_core.schemes.catalogue import ROPE_SCALINGS

params = current_params()
n = params.length
pair = current_pair()  # read at its distance j - i, the only thing RoPE's logit sees of it

st.title("Long context")
st.caption(
    own_models_caption(
        source_of(params),
        "the family's trained models, as trained (RoPE's in sections 2 and 3, every scheme's "
        "in section 4)",
        "section 1 and the bound in section 2 read no weights at all",
    )
)
st.markdown(
    "A RoPE model trained on 64 characters fails past them, while ALiBi holds (Position schemes, "
    "section 4). Why, and what do the published fixes change? Every figure below reads the "
    "family's own trained models."
)

# ---- 1. wavelengths ---------------------------------------------------------------------------
st.header("1 · Which pairs turn within the training length")
base = exports.base_picker()
w = views.wavelengths(base, n)
d = views.decay(base)
at = None if pair is None else views.at_distance(w, d, pair.distance)
picked = " Solid black: the picked pair's |j - i|." if at is not None and at.distance else ""
draw.figure(
    figures.wavelength_figure(w, at),
    "lc_wavelengths",
    latex=figures.FORMULA_WAVELENGTH,
    caption="Blue: pairs that turn fully within the training length; orange and hatched: those "
    "that never do. Dashed: the training length and the page's n." + picked,
)
st.info(md_escape(text.wavelength_note(w)), icon=":material/lightbulb:")
if at is not None:
    st.info(md_escape(text.pair_note(at, pair.i, pair.j)), icon=":material/lightbulb:")

# ---- 2. long-term decay -----------------------------------------------------------------------
st.header("2 · Long-term decay, bound and trained")
layer = exports.layer_picker(d.mean_logit.shape[0], "lc_decay_layer")
draw.figure(
    figures.decay_figure(d, layer, at),
    "lc_decay",
    latex=figures.FORMULA_DECAY,
    caption=text.decay_caption(*views.DECAY) + text.decay_marks(at),
)
st.info(md_escape(text.decay_note(d, layer)), icon=":material/lightbulb:")
if at is not None:
    st.info(md_escape(text.pair_decay_note(at, layer)), icon=":material/lightbulb:")

# ---- 3. context extension ---------------------------------------------------------------------
st.header("3 · Context extension: what each rule does to the frequencies")
factor = exports.factor_picker()
head_dim, trained_base, context = views.trained_rope()
for scaling in ROPE_SCALINGS:
    st.markdown(f"**{md_escape(scaling.title)}** ({scaling.rope_type})")
    formulas.latex(scaling.rule)
    st.caption(
        md_escape(text.rule_values(scaling.rope_type, factor, context, dict(scaling.defaults)))
    )
s = views.scaled(factor)
draw.figure(
    figures.scaled_figure(s, at),
    "lc_scaled",
    caption=f"Each rule's wavelength per pair on the trained model (d = {head_dim}, base "
    f"{trained_base:,.0f}, L0 = {context}); dynamic NTK at n = s·L0." + picked,
)
st.info(md_escape(text.scaled_note(s)), icon=":material/lightbulb:")

st.subheader("Zero-shot on the trained RoPE model")
m = views.measured()
rule = exports.rule_picker(views.FIXED)
rows = exports.rows_of(m, rule)
draw.figure(
    figures.zero_shot_figure(m, rows),
    "lc_zero_shot",
    caption="Held-out bits per character (fewer is better) at 1x to 16x the training length, "
    "one line per scaling (a marker and dash each), nothing retrained: only the rotary "
    "frequencies change. Command: "
    "python -m relpos_lab.family long.",
)
st.info(md_escape(text.zero_shot_note(m, rows)), icon=":material/lightbulb:")

# ---- 4. attention sinks -----------------------------------------------------------------------
st.header("4 · Where attention sinks")
sink_layer = exports.layer_picker(next(iter(m.share.values())).shape[0], "lc_sink_layer")
draw.figure(
    figures.sink_figure(m, sink_layer),
    "lc_sinks",
    latex=figures.FORMULA_SINK,
    caption=text.sink_caption(m, *views.SINK),
)
st.info(md_escape(text.sink_note(m, sink_layer)), icon=":material/lightbulb:")
st.markdown(text.window_table(m))

download_view(
    "long_context",
    params,
    exports.arrays(w, d, s, m, layer, sink_layer, at),
    extra={"base": base, "s": factor},
)
