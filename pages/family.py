"""Position schemes: every scheme of the catalogue on the same q, k, v; one in detail, which
of them are functions of j - i, and their terms against the distance (the Compare schemes page
puts two side by side)."""

import streamlit as st

from explorer.figures import draw, formulas
from explorer.figures.beyond_reading import beyond_note
from explorer.figures.heatmaps import Scale, panel_grid
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_part, download_view
from explorer.frame.failures import fragment
from explorer.frame.screen import is_phone
from explorer.frame.widgets import head_picker, md_escape, shared_scale_picker
from explorer.pair.controls import mark_picked_distance, pair_schemes
from explorer.stories.family import controls, exports, length_curves, panels, tables, text, views
from explorer.stories.family.learned_terms import learned_terms
from explorer.stories.family.plots import learned_figure
from explorer.stories.family.term_reads import reads_note, reads_table, term_reads
from explorer.weights.source import source_of
from relpos_core.schemes.catalogue import scheme_entry

params = current_params()
source = source_of(params)
n, heads = params.length, params.heads

st.title("Position schemes")
draw.source_caption(params, scheme="each")
st.markdown(text.intro())
name = controls.scheme_picker("scheme", "scheme")
pair_schemes(name)  # the sidebar's pick: Shaw's table row only where Shaw's scheme is drawn
entry = scheme_entry(name)

# ---- 1. one scheme in detail ---------------------------------------------------------------
st.header(f"1 · {entry.title}")
st.caption(md_escape(entry.paper))
formulas.latex(entry.logit_formula)
st.markdown("Its position term, drawn below:")
formulas.latex(entry.position_formula)
if entry.note:
    st.caption(md_escape(entry.note))
st.caption(md_escape(f"Parameters: {entry.parameters_text}."))
settings = controls.scheme_settings(params, name)
config = settings.config(name, params)


@fragment
def one_head(view: views.PositionView, scales: tuple[Scale, ...]) -> None:
    """One head's position term with exact values; each of its terms where the scheme's entry
    titles them (Transformer-XL's four), reruns alone."""
    head = head_picker(heads, "family_head")
    panel = panels.head_panel(view, params, name, head)
    start, stop = params.window
    if stop - start > 128:  # the grid above is an image: exact values in a zoom
        draw.inset(panel, scales[head], "family_zoom")
    else:
        caption = f"The colour scale of head {head} above; hover for exact values."
        fig = panel_grid(panel, scales[head], max_width=520)
        draw.figure(fig, "family_head", shape=(n, n), caption=caption)
    if entry.term_titles:
        terms = panels.each_term(params, config, head)
        count = len(entry.term_titles)
        st.markdown(text.terms_heading(entry, head))
        draw.figure(terms.figure, "family_terms", shape=(count, n, n), caption=terms.caption)
        reads = term_reads(params, config, head)
        st.markdown(f"**What each term reads**, head {head}\n\n{reads_table(reads, name)}")
        st.caption(md_escape(reads_note(reads, name)))


missing = views.unavailable_schemes(params, settings)  # scheme -> why it cannot run here
draw.window_caption(params)
view = None
if name in missing:
    warning = f"{entry.title} cannot run on this view: {missing[name]}."
    st.warning(md_escape(warning), icon=":material/warning:")
else:
    view = views.position_view(params, config)
    grid = panels.heads_grid(view, params, config, shared_scale_picker("family_scale"))
    draw.figure(grid.figure, "family_heads", shape=(1, heads, n, n), caption=grid.caption)
    one_head(view, grid.scales)

# ---- 2. shift invariance and memory ----------------------------------------------------------
profiles = views.family_profiles(params, settings)  # the schemes that can run here
first = profiles.get(name) or next(iter(profiles.values()))
st.header("2 · A function of j - i only?")
st.markdown(text.toeplitz_intro(first, params))
st.markdown(tables.toeplitz_table(profiles, name, n))
if missing:
    st.caption(md_escape(text.missing_note(missing)))
st.caption(text.memory_note(params, name))

# ---- 3 and 4. distance profile, extrapolation -----------------------------------------------
st.header("3 · Against the distance j - i")


def beyond_table(trained_length: int, marked: str) -> None:
    """What each scheme does past the distances a training length holds, in words."""
    st.subheader("4 · Beyond the trained length")
    st.markdown(md_escape(text.beyond_intro(trained_length, marked)))
    st.markdown(tables.beyond_table(settings, params))


@fragment
def profile_chart() -> None:
    """Every scheme's profile on one chart, the trained length marked (reruns alone)."""
    pick = controls.profile_controls(heads, first.with_content, n)
    fig = panels.profile_chart(profiles, first, name, pick)
    picked = mark_picked_distance(fig)
    formulas.latex(formulas.PROFILE)
    png = draw.png_config("family_profile")
    draw.plotly_chart(fig, key="chart_family_profile", width="stretch", config=png)
    download_part("profile", exports.profile_arrays(profiles, pick))
    caption = text.profile_caption(first, params, name, pick, schemes=len(profiles), picked=picked)
    st.caption(md_escape(caption))
    beyond_table(pick.built_for, "dotted lines")


@fragment
def learned_chart(models: tuple[tuple[str, str], ...]) -> None:
    """What each trained scheme learned against j - i, one small chart each (reruns alone)."""
    part = controls.learned_part()
    learned = learned_terms(models)
    curves = learned.titled_curves(part, params.layer, params.k)
    fig = learned_figure(learned.distance, curves, learned.context, columns=2 if is_phone() else 3)
    picked = mark_picked_distance(fig)
    png = draw.png_config("family_learned")
    draw.plotly_chart(fig, key="chart_family_learned", width="stretch", config=png)
    st.caption(md_escape(text.learned_caption(learned, part, params.layer, picked)))
    note = beyond_note(learned.distance, curves, learned.context)
    st.info(md_escape(note), icon=":material/lightbulb:")
    beyond_table(learned.context, "dashed lines above")


models = source.scheme_models()  # trained weights: what each scheme's model learned
learned_chart(models) if models else profile_chart()

st.subheader("How far each scheme reaches, measured")
measured = length_curves.family_lengths()  # one model per scheme, and nope and sinusoidal
fig = length_curves.length_figure(measured, height=420)
draw.figure(fig, "family_lengths", caption=length_curves.lengths_caption(measured))
st.info(length_curves.reach_note(measured), icon=":material/lightbulb:")

# ---- download --------------------------------------------------------------------------------
arrays = exports.family_arrays(source, name, view, profiles, first, measured)
download_view("family", params, arrays, extra=exports.family_extra(name, settings, source, models))
