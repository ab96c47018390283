"""Skew: relative-indexed logits -> absolute-indexed by a pad, a reshape and a slice (Huang 2018),
told step by step, with one picked value followed through every step."""

from functools import partial

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import agreement_badge, plotly_chart, source_caption, window_caption
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.failures import fragment
from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice, head_picker, md_escape
from explorer.pair.controls import current_pair, pair_schemes, pick_cell, rerun_whole_page
from explorer.stories.shift import skew_text as text
from explorer.stories.shift.controls import pick_from_chart, stepper
from explorer.stories.shift.skew import E_R, STEP_TEXT, STEPS, skew_story
from explorer.stories.shift.skew_figures import cells_figure
from explorer.stories.shift.skew_image import image_figure, inset_window, is_small
from explorer.stories.shift.skew_tables import skew_tables
from explorer.stories.shift.stepping import locate
from explorer.weights.reading import axis_labels

INSET_KEY = "chart_skew_inset"
CONFIG = {"displaylogo": False}

params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table

st.title("Skew")
source_caption(params)
st.markdown(text.intro(params.length, params.window, params.windowed))
formulas.latex(formulas.SKEW)
formulas.latex(E_R)
window_caption(params, "every step")
if params.windowed:
    st.caption(text.window_note(params.length, params.window))


@fragment
def story_panel(params: ViewParams) -> None:
    rerun_whole_page()  # a click here picked a pair: the sidebar and the URL must show it
    labels = axis_labels(params)[0] if params.tokens else None
    with st.container(horizontal=True, vertical_alignment="bottom"):
        variant = choice("skew variant", text.VARIANTS, "skew_kind")
        head = head_picker(params.heads, "skew_head")
    masked = text.is_masked(variant, params.mask)
    if variant == text.VARIANTS[0]:
        st.caption(text.variant_note(params.mask, masked))
    story = skew_story(params, head, masked)

    number, write_r = stepper(
        "skew", [1, 2, 3, 4], "write each cell's distance r",
        format_func=lambda s: f"{s} {text.STEP_WORDS[s]}",
    )  # fmt: skip
    name = STEPS[number - 1]
    i, j, following = text.followed_cell(params.window, current_pair())
    if following:  # no pick on the window: follow a cell near the middle
        st.caption(following)
    places = locate(story, i, j)
    place = places[number - 1]

    step = story.step(name)
    chart_key = f"chart_skew_{'masked' if masked else 'unmasked'}_{name}"
    title = f"{number}. {text.STEP_WORDS[number]}  {step.shape}"
    formulas.latex(step.formula)
    st.caption(STEP_TEXT[name])
    left, right = st.columns([2, 1], gap="medium")
    with left:
        if is_small(story, name):
            fig = cells_figure(
                story, name, place, labels, title=title, width_px=560, write_r=write_r
            )
            plotly_chart(
                fig, key=chart_key, width="stretch", selection_mode="points", config=CONFIG,
                on_select=partial(pick_from_chart, chart_key, story, name, pick_cell),
            )  # fmt: skip
            st.caption(text.cells_caption(masked, step.shape, write_r))
        else:
            fig = image_figure(story, params, head, name, place, title=title, width_px=560)
            plotly_chart(fig, key=chart_key, width="stretch", config=CONFIG)
            st.caption(text.IMAGE_CAPTION)
        st.info(md_escape(text.distance_note(story, head, params.k)), icon=":material/lightbulb:")
    with right:
        picked = text.picked_cell(story, i, j, params.k, labels)
        st.markdown(picked.heading)
        for line in picked.latex:
            formulas.latex(line)
        if picked.caption:
            st.caption(picked.caption)
        if picked.info:
            st.info(picked.info, icon=":material/block:")
        st.markdown(text.place_lines(story, places))
        if not is_small(story, name) and place is not None:
            rows, cols = inset_window(step, place)
            inset = cells_figure(
                story, name, place, labels, rows=rows, cols=cols, width_px=280,
                title=f"around the picked value in step {number}",
            )  # fmt: skip
            plotly_chart(
                inset, key=INSET_KEY, width="stretch", selection_mode="points", config=CONFIG,
                on_select=partial(pick_from_chart, INSET_KEY, story, name, pick_cell),
            )  # fmt: skip
    agreement_badge("skew vs definition on the valid cells, every head", story.max_diff)
    # the cell followed goes to params.json only: the link holds a pair only when one is picked
    extra = {"skew_kind": variant, "skew_head": head, "_followed_cell": [i, j]}
    download_view("skew", params, skew_tables(params, story, head), extra=extra, where=st)
    metrics = text.memory_metrics(story, params.length, params.head_dim, params.heads)
    for column, (label, value, about) in zip(st.columns(3), metrics, strict=True):
        column.metric(label, value, help=about)


story_panel(params)
