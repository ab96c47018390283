"""Transformer-XL shift: the position terms (b) + (d) computed once per distance, then moved
from the relative layout to the absolute one by a pad, a reshape and a slice (Dai et al. 2019,
Appendix B), told step by step with one picked cell followed through every step."""

from functools import partial

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import (
    agreement_badge,
    bytes_text,
    markdown_table,
    plotly_chart,
    weights_caption,
)
from explorer.figures.notes import favoured_distance_note
from explorer.frame.controls import clicked_cell, current_params
from explorer.frame.downloads import download_view
from explorer.frame.failures import fragment
from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice, head_picker, int_number, int_slider, md_escape, toggle
from explorer.stories.shift.rel_shift import (
    CHECK_QUERIES,
    MEMORY_MAX,
    STEP_TEXT,
    STEP_WORDS,
    STEPS,
    STORY_QUERIES,
    ShiftStory,
    holds_text,
    shift_check,
    shift_story,
    story_tables,
    wrong_cells,
)
from explorer.stories.shift.rel_shift_figures import step_figure
from explorer.stories.shift.stepping import locate, result_cell_of

MEMORY_DEFAULT = 2
STEP_LABELS = [f"{number} {word}" for number, word in enumerate(STEP_WORDS, start=1)]

params = current_params()
n = params.length

st.title("Transformer-XL shift")
weights_caption(params, scheme="xl")
st.markdown(
    "Transformer-XL adds to the content logit three terms (Dai et al. 2019, Sec. 3.3). The two "
    "that depend on position, (b) and (d), need one score per query and distance. The "
    "reference code computes them against every distance a query may see, in the *relative* "
    "layout (column c is the distance j - i = c - (K - 1)), and moves them to the *absolute* "
    "layout (column j is key j) with `rel_shift`: a pad, a reshape and a slice, no gather "
    "(Appendix B). The paper indexes its sinusoid R by i - j; every distance on this page is "
    "written j - i, as on every other page, so distance j - i = -3 reads R_3."
)
st.latex(formulas.XL_LOGIT)
st.latex(formulas.XL_POSITION)
st.markdown(
    "With no memory (M = 0) these are exactly the steps of the Music Transformer's masked skew "
    "on the Skew page: the same pad on the left, the same reshape, the same dropped first row, "
    "and the same wrong cells above the diagonal that the causal mask removes."
)


def pick_from_chart(chart_key: str, story: ShiftStory, name: str) -> None:
    """A click on a cell of a step picks the result cell that shows the same value."""
    clicked = clicked_cell(chart_key)
    if clicked is None:
        return
    row, col = clicked
    cell = result_cell_of(story, name, row, col)
    if cell is not None:
        st.session_state["xl_i"], st.session_state["xl_j"] = cell


def shift_step(delta: int) -> None:
    current = st.session_state.get("xl_step") or STEP_LABELS[0]
    at = STEP_LABELS.index(current) + delta
    st.session_state["xl_step"] = STEP_LABELS[min(max(at, 0), len(STEP_LABELS) - 1)]


def place_lines(story: ShiftStory, places) -> str:
    """A markdown table: where the picked value sits in every step."""
    lines = ["| step | where | value |", "|---|---|---|"]
    for label, name, place in zip(STEP_LABELS, STEPS, places, strict=True):
        step = story.step(name)
        if place is None:
            lines.append(f"| {label} | not there yet (the pad is added in step 2) | |")
            continue
        r, c = place.row, place.col
        if name in ("input", "padded"):
            column = f"column {c} (j - i = {step.x_ticks[c]})"
            where = f"query i = {r}, " + ("the pad column" if step.pad[r, c] else column)
        elif name == "result":
            where = f"i = {r}, key j = {c}"
        else:
            where = f"row {r}, column {c}"
        lines.append(f"| {label} | {where} | {place.value:.4g} |")
    return "\n".join(lines)


def picked_summary(story: ShiftStory, i: int, j: int) -> None:
    """The picked cell: its distance, the input cell it copies, by the shift and by definition."""
    m, position = story.memory, story.position(i)
    result = story.step("result")
    code = int(result.code[i, j])
    source, column, distance = (int(a[i, j]) for a in result.origin())
    where = f"input row {source}, column {column} (j - i = {distance})"
    where = "the zero pad" if code == 0 else where
    st.markdown(
        "\n".join(
            [
                "| picked cell | |",
                "|---|---|",
                f"| (i, j) | ({i}, {j}){' (a memory key)' if j < m else ''} |",
                f"| query position M + i | {position} |",
                f"| distance j - (M + i) | {story.distance[i, j]} |",
                f"| source cell | {where} |",
                f"| by the shift | {float(result.z[i, j]):.4g} |",
                f"| by the definition | {float(story.definition[i, j]):.4g} |",
            ]
        )
    )
    if story.valid[i, j]:
        st.success(
            f"j = {j} <= M + i = {position}: the shift gives {holds_text(story, code)}, "
            "the definition's value.",
            icon=":material/check:",
        )
    else:
        what = "the zero pad" if code == 0 else f"{holds_text(story, code)}, from the next row"
        st.info(
            f"j = {j} > M + i = {position}: a key after the query. The shift puts {what} here, "
            "not the term; Transformer-XL masks these cells.",
            icon=":material/block:",
        )


def offer_download(story: ShiftStory, head: int, memory: int, i: int, j: int) -> None:
    """One zip: the five steps of this head with their axes, the definition, the wrong cells."""
    extra = {"xl_mem": memory, "xl_head": head, "xl_i": i, "xl_j": j}
    if params.trained:
        extra["_model"] = "xl"
    download_view("rel_shift", params, story_tables(story), extra=extra, where=st)


@fragment
def story_panel(params: ViewParams) -> None:
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        memory = int_slider(
            "memory length M", 0, MEMORY_MAX, "xl_mem", value=MEMORY_DEFAULT,
            help="Cached positions of the previous segment before the queries: K = Q + M keys.",
        )  # fmt: skip
        head = head_picker(params.heads, "xl_head")
    story = shift_story(params, head, memory)
    q_len, k_len = story.queries, story.keys
    if n > STORY_QUERIES:
        st.caption(
            f"n = {n} queries: the steps are drawn for the first {STORY_QUERIES} of them "
            f"(Q = {q_len}, K = {k_len}), where every cell stays readable. Their right cells "
            "(j <= M + i) hold the values of the first rows of the shift of all n queries; "
            "their wrong cells hold other leftovers there, as that shift has more keys."
        )
    st.caption(f"Q = {q_len} queries after M = {memory} memory positions: K = {k_len} keys.")

    stepper = st.container(horizontal=True, vertical_alignment="bottom")
    with stepper:
        st.button("◀", key="xl_prev", on_click=shift_step, args=(-1,), help="previous step")
        label = choice("step", STEP_LABELS, "xl_step")
        st.button("▶", key="xl_next", on_click=shift_step, args=(1,), help="next step")
        write = toggle("write each cell's distance j - i", "xl_distance", value=True)
    number = STEP_LABELS.index(label)
    name = STEPS[number]

    pick = st.container(horizontal=True, vertical_alignment="bottom")
    with pick:
        i = int_number("picked query i", 0, q_len - 1, "xl_i", q_len // 2)
        j = int_number("picked key j", 0, k_len - 1, "xl_j", max(q_len // 2 - 1, 0))
    places = locate(story, i, j)
    step = story.step(name)
    st.latex(step.formula)
    st.caption(STEP_TEXT[name])
    chart_key = f"chart_xl_{name}"
    left, right = st.columns([2, 1], gap="medium")
    with left:
        fig = step_figure(
            story, name, places[number], write_distance=write,
            title=f"{label}  ({step.shape[0]}, {step.shape[1]})",
        )  # fmt: skip
        plotly_chart(
            fig,
            key=chart_key,
            width="stretch",
            on_select=partial(pick_from_chart, chart_key, story, name),
            selection_mode="points",
            config={"displaylogo": False},
        )
        st.caption(
            "Colour: the value, (b) + (d) of head "
            f"{head}, on one scale for every step. Each cell shows the distance j - i of the "
            "value it holds for the query it came from (pad: the padding zero). Outlined in "
            "black: values that become right result cells. Hatched and outlined in red: "
            "values that become wrong result cells (j > M + i). Greyed: what the slice drops."
            + (
                " The dashed line separates the memory keys (m) from the segment's."
                if memory and name == "result"
                else ""
            )  # fmt: skip
            + " Gold: the picked value. Click a cell to pick the value it holds."
        )
        note = favoured_distance_note(
            story.definition, story.distance, story.valid, f"head {head}'s (b) + (d)"
        )
        st.info(md_escape(note), icon=":material/lightbulb:")
    with right:
        picked_summary(story, i, j)
        st.markdown(place_lines(story, places))

    wrong = wrong_cells(story)
    with st.expander(f"The {len(wrong['i'])} wrong cells of the result (j > M + i)"):
        st.markdown(markdown_table(wrong))

    check = shift_check(params, memory)
    scope = (f"all {check.queries} queries" if check.queries == n
             else f"the first {check.queries} of the {n} queries")  # fmt: skip
    agreement_badge(
        f"rel_shift vs the scheme's gathered (b) + (d) on j <= M + i, every head, {scope}",
        check.max_diff,
    )
    st.badge(
        f"{check.wrong_cells} of {check.cells} cells per head have j > M + i: the shift "
        "gets them wrong and Transformer-XL masks them",
        icon=":material/block:",
        color="orange",
    )
    if check.queries < n:
        st.caption(
            f"The check runs the shift on at most {CHECK_QUERIES} queries (every row's right "
            "cells depend on that row alone)."
        )
    m1, m2 = st.columns(2)
    m1.metric(
        "every term at n (estimate)",
        bytes_text(check.logit_bytes),
        help=f"TransformerXL.logit_bytes({n}, {n + memory}): the four terms, their sum and "
        "the position work, float32, batch 1",
    )
    m2.metric(
        "of which position work",
        bytes_text(check.position_bytes),
        help=f"TransformerXL.position_bytes({n}, {n + memory}): R, W_R R and (q + v)(W_R R)^T",
    )
    offer_download(story, head, memory, i, j)


story_panel(params)
