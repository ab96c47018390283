"""Transformer-XL shift: the position terms (b) + (d) computed once per distance, then moved
from the relative layout to the absolute one by a pad, a reshape and a slice (Dai et al. 2019,
Appendix B), told step by step with one picked cell followed through every step."""

from functools import partial

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import agreement_badge, plotly_chart, source_caption
from explorer.figures.tables import markdown_table
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.failures import fragment
from explorer.frame.params import ViewParams
from explorer.frame.widgets import head_picker, int_slider, md_escape
from explorer.pair.controls import current_pair, pick_cell, rerun_whole_page
from explorer.stories.shift import rel_shift_text as text
from explorer.stories.shift.controls import pick_from_chart, stepper
from explorer.stories.shift.rel_shift import MEMORY_MAX, STEP_TEXT, STEPS, shift_check, shift_story
from explorer.stories.shift.rel_shift_figures import step_figure
from explorer.stories.shift.rel_shift_tables import story_tables, wrong_cells
from explorer.stories.shift.stepping import locate
from explorer.weights.source import source_of
from relpos_core.schemes.catalogue import scheme_entry

MEMORY_DEFAULT = 2

params = current_params()
n = params.length

st.title("Transformer-XL shift")
source_caption(params, scheme="xl")
st.markdown(text.INTRO)
formulas.latex(scheme_entry("xl").logit_formula)
formulas.latex(scheme_entry("xl").position_formula)
st.markdown(text.LIKE_THE_SKEW)


def pick_sequence_pair(memory: int, row: int, column: int) -> None:
    """A click on result cell (row, column) picks the sidebar's pair (i, j) = (row, column - M);
    a memory key (column < M) is no position of the sequence: nothing is picked."""
    if column >= memory:
        pick_cell(row, column - memory)


@fragment
def story_panel(params: ViewParams) -> None:
    rerun_whole_page()  # a click here picked a pair: the sidebar and the URL must show it
    with st.container(horizontal=True, vertical_alignment="bottom"):
        memory = int_slider(
            "memory length M", 0, MEMORY_MAX, "xl_mem", value=MEMORY_DEFAULT,
            help=text.MEMORY_HELP,
        )  # fmt: skip
        head = head_picker(params.heads, "xl_head")
    story = shift_story(params, head, memory)
    for note in text.story_notes(story, n):
        st.caption(note)

    label, write = stepper("xl", text.STEP_LABELS, "write each cell's distance j - i")
    number = text.STEP_LABELS.index(label)
    name = STEPS[number]

    cell, following = text.followed_cell(story, current_pair())  # (row i, column M + j)
    st.caption(following)
    places = locate(story, *cell) if cell else (None,) * len(STEPS)
    step = story.step(name)
    formulas.latex(step.formula)
    st.caption(STEP_TEXT[name])
    chart_key = f"chart_xl_{name}"
    left, right = st.columns([2, 1], gap="medium")
    with left:
        fig = step_figure(
            story, name, places[number], write_distance=write,
            title=f"{label}  ({step.shape[0]}, {step.shape[1]})",
        )  # fmt: skip
        plotly_chart(
            fig, key=chart_key, width="stretch", selection_mode="points",
            on_select=partial(pick_from_chart, chart_key, story, name,
                              partial(pick_sequence_pair, memory)),
            config={"displaylogo": False},
        )  # fmt: skip
        st.caption(text.chart_caption(story, name, picked=places[number] is not None))
        st.info(md_escape(text.distance_note(story)), icon=":material/lightbulb:")
    if cell:
        with right:
            picked = text.picked_cell(story, *cell)
            st.markdown(picked.table)
            if picked.right:
                st.success(picked.verdict, icon=":material/check:")
            else:
                st.info(picked.verdict, icon=":material/block:")
            st.markdown(text.place_lines(story, places))

    wrong = wrong_cells(story)
    with st.expander(f"The {len(wrong['i'])} wrong cells of the result (key j > i)"):
        st.markdown(markdown_table(wrong))

    check = shift_check(params, memory)
    agreement_badge(text.check_label(check, n), check.max_diff)
    st.badge(text.wrong_badge(check), icon=":material/block:", color="orange")
    if check.queries < n:
        st.caption(text.CHECK_NOTE)
    metrics = text.memory_metrics(check, n)
    for column, (metric, value, about) in zip(st.columns(2), metrics, strict=True):
        column.metric(metric, value, help=about)
    extra: dict[str, object] = {"xl_mem": memory, "xl_head": head}
    extra |= source_of(params).provenance("xl")
    download_view("rel_shift", params, story_tables(story), extra=extra, where=st)


story_panel(params)
