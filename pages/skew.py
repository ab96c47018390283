"""Skew: relative-indexed logits -> absolute-indexed by a pad, a reshape and a slice (Huang 2018),
told step by step, with one picked value followed through every step."""

from functools import partial

import numpy as np
import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import (
    agreement_badge,
    bytes_text,
    plotly_chart,
    weights_caption,
    window_caption,
)
from explorer.figures.notes import favoured_distance_note
from explorer.frame.controls import clicked_cell, current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.failures import fragment
from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice, head_picker, md_escape, toggle
from explorer.pair.controls import current_pair, pick_cell, rerun_whole_page
from explorer.stories.shift.skew import (
    E_R,
    STEP_TEXT,
    STEPS,
    SkewStory,
    skew_story,
)
from explorer.stories.shift.skew_figures import cells_figure, image_figure, inset_window, is_small
from explorer.stories.shift.stepping import locate, result_cell_of
from explorer.weights.example import axis_labels

STEP_WORDS = {1: "relative", 2: "padded", 3: "reshaped", 4: "sliced"}
VARIANTS = ("follows the mask", "masked (causal)", "unmasked (two-sided)")
INSET_KEY = "chart_skew_inset"

params = current_params()
n, d, heads = params.length, params.head_dim, params.heads
start, stop = params.window

st.title("Skew")
weights_caption(params)
st.markdown(
    "Instead of gathering $a^K$, an $(n, n, d_z)$ tensor, multiply the queries by one "
    "embedding per distance, $S = Q E_r^\\top$: column $c$ of $S$ is the distance "
    "$r = c - (L - 1)$, the relative layout. Row $i$ needs column $j - i + L - 1$ at key $j$: "
    "the skew shifts every row by its own offset with only a pad, a reshape and a slice "
    "(Huang et al. 2018, Sec. 3.4.1). $L$ is the paper's name for the sequence length: here "
    f"$L = n = {n}$"
    + (f" (the steps run on the window, $L = {stop - start}$)" if params.windowed else "")
    + "."
)
st.latex(formulas.SKEW)
st.latex(E_R)
window_caption(params, "every step")
if params.windowed:
    st.caption(
        f"The steps are the skew of the window's {stop - start} queries over a sequence of "
        f"{stop - start} (relative logits depend on j - i only, so its result is exactly the "
        f"window of the full result); the memory figures are for the full n = {n}."
    )


def masked_by_default(view: ViewParams) -> bool:
    """The skew that fits the sidebar's mask: Huang's masked skew under a causal mask."""
    return "causal" in view.mask


def pick_from_chart(chart_key: str, params: ViewParams, head: int, masked: bool, name: str) -> None:
    """A click on a cell of a step picks the result cell that shows the same value."""
    clicked = clicked_cell(chart_key)
    if clicked is None:
        return
    row, col = clicked
    cell = result_cell_of(skew_story(params, head, masked), name, row, col)
    if cell is not None:
        pick_cell(*cell)


def shift_step(delta: int) -> None:
    current = st.session_state.get("skew_step") or 1
    st.session_state["skew_step"] = min(max(current + delta, 1), 4)


def place_lines(story: SkewStory, places, labels) -> str:
    """A markdown table: where the picked value sits in every step."""
    lines = ["| step | where | value |", "|---|---|---|"]
    for number, (name, place) in enumerate(zip(STEPS, places, strict=True), start=1):
        step = story.step(name)
        if place is None:
            where = "not there yet (the pad is added in step 2)"
            value = ""
        else:
            if name in ("input", "padded"):
                where = f"row i = {place.y}, column r = {place.x}"
                if step.pad[place.row, place.col]:
                    where = f"row i = {place.y}, the pad column"
            elif name == "reshaped":
                where = f"row {place.y}, column {place.x}"
            else:
                where = f"row i = {place.y}, column j = {place.x}"
            value = f"{place.value:.4g}"
        lines.append(f"| {number} {STEP_WORDS[number]} | {where} | {value} |")
    return "\n".join(lines)


def picked_summary(story: SkewStory, i: int, j: int, labels) -> None:
    """The picked cell: its distance, its table row, its value by the skew and by definition."""
    row, col = i - story.start, j - story.start
    names = f"$i = {i}$, $j = {j}$"
    if labels is not None:
        names = f'$i = {i}$ "{md_escape(labels[i])}", $j = {j}$ "{md_escape(labels[j])}"'
    st.markdown(f"**Picked cell** {names}")
    value = float(story.steps[-1].z[row, col])
    if story.valid[row, col]:
        table_row = int(story.table_rows[row, col])
        st.latex(
            rf"j - i = {j - i},\quad \operatorname{{clip}}({j - i}, {params.k}) + {params.k}"
            rf" = {table_row}"
        )
        column = j - i + story.length - 1
        st.latex(  # two lines: the column beside the chart is narrow
            rf"\begin{{aligned}} S^{{\mathrm{{rel}}}}_{{{i},{j}}} &= q_{{{i}}} \cdot "
            rf"(E_r)_{{{column}}} \\ &= q_{{{i}}} \cdot w^K_{{{table_row - params.k}}} \\ "
            rf"&= {value:.4g}"
            r"\end{aligned}"
        )
        st.caption(
            r"Definition $q_i \cdot w^K_{\operatorname{clip}(j - i, k)}$ = "
            f"{float(story.definition[row, col]):.4g}. "
            f"$E_r$'s row {j - i + story.length - 1} is $w^K_{{{table_row - params.k}}}$, "
            f"stored as table row {table_row}"
            + (
                " (the distance is beyond ±k: the edge row repeats)."
                if abs(j - i) > params.k
                else "."
            )  # fmt: skip
        )
    else:
        cell = slice(row, row + 1), slice(col, col + 1)
        source, distance, pad = (int(a[0, 0]) for a in story.steps[-1].origin(*cell))
        holds = "the pad zero" if pad else f"$q_{{{source}}} \\cdot (E_r)$ at $r = {distance}$"
        st.info(
            f"(i, j) = ({i}, {j}) is above the diagonal: it is not a relative logit but holds "
            f"{holds}. The causal mask removes it.",
            icon=":material/block:",
        )


def offer_download(
    params: ViewParams, story: SkewStory, variant: str, head: int, i: int, j: int
) -> None:
    """One zip: the four steps of this head with their axes, and the definition."""
    positions = position_labels(params, start, stop)
    tables = {}
    for number, name in enumerate(STEPS, start=1):
        step = story.step(name)
        if name in ("input", "padded"):
            pad = step.pad.all(axis=0)
            cols = ["pad" if p else f"r={r}" for r, p in zip(step.x, pad, strict=True)]
            rows, corner = positions, "query i \\ distance r"
        elif name == "reshaped":
            cols, rows, corner = [str(c) for c in step.x], [str(r) for r in step.y], "row \\ column"
        else:
            cols, rows, corner = positions, positions, "query i \\ key j"
        tables[f"step{number}_{STEP_WORDS[number]}"] = Labelled(
            step.z, f"step {number} of the skew, head {head}", rows=rows, cols=cols, corner=corner
        )
    tables["definition"] = Labelled(
        story.definition,
        f"q_i . w^K[clip(j - i, k) + k], head {head}: equals step 4 on the valid cells",
        rows=positions,
        cols=positions,
        corner="query i \\ key j",
    )
    extra = {"skew_kind": variant, "skew_head": head, "i": i, "j": j}
    download_view("skew", params, tables, extra=extra, where=st)


@fragment
def story_panel(params: ViewParams) -> None:
    rerun_whole_page()  # a click here picked a pair: the sidebar and the URL must show it
    labels = axis_labels(params)[0] if params.tokens else None
    controls = st.container(horizontal=True, vertical_alignment="bottom")
    with controls:
        variant = choice("skew variant", VARIANTS, "skew_kind")
        head = head_picker(heads, "skew_head")
    masked = masked_by_default(params) if variant == VARIANTS[0] else variant == VARIANTS[1]
    if variant == VARIANTS[0]:
        st.caption(
            f"The sidebar's mask is {params.mask}: showing the "
            + (
                "masked skew (Huang et al.: distances -(L-1)..0 only)."
                if masked
                else "unmasked skew (distances -(L-1)..L-1)."
            )  # fmt: skip
        )
    story = skew_story(params, head, masked)

    stepper = st.container(horizontal=True, vertical_alignment="bottom")
    with stepper:
        st.button("◀", key="skew_prev", on_click=shift_step, args=(-1,), help="previous step")
        number = choice(
            "step", [1, 2, 3, 4], "skew_step", format_func=lambda s: f"{s} {STEP_WORDS[s]}"
        )
        st.button("▶", key="skew_next", on_click=shift_step, args=(1,), help="next step")
        write_r = toggle("write each cell's distance r", "skew_distance", value=True)
    name = STEPS[number - 1]

    pair = current_pair()
    if pair is not None and start <= min(pair.i, pair.j) and max(pair.i, pair.j) < stop:
        i, j = pair.i, pair.j
    else:  # no pick on the window: follow a cell near the middle
        i = start + (stop - start) // 2
        j = max(start, i - 2)
        st.caption(
            f"Following (i, j) = ({i}, {j}), near the middle: click a cell of a step, or set "
            "query i and key j in the sidebar, to follow another value."
        )
    places = locate(story, i, j)
    place = places[number - 1]

    step = story.step(name)
    chart_key = f"chart_skew_{'masked' if masked else 'unmasked'}_{name}"
    title = f"{number}. {STEP_WORDS[number]}  {step.shape}"
    st.latex(step.formula)
    st.caption(STEP_TEXT[name])
    left, right = st.columns([2, 1], gap="medium")
    with left:
        if is_small(story, name):
            fig = cells_figure(
                story, name, place, labels, title=title, width_px=560, write_r=write_r
            )
            plotly_chart(
                fig,
                key=chart_key,
                width="stretch",
                on_select=partial(pick_from_chart, chart_key, params, head, masked, name),
                selection_mode="points",
                config={"displaylogo": False},
            )
            st.caption(
                "Each cell shows the distance r of the value it holds (pad: a padding zero). "
                "Outlined: the cells whose values become relative logits; greyed: padding, "
                "cells the slice drops"
                + (", and cells the causal mask removes." if masked else ".")
                + " Click a cell to pick the value it holds."
            )
        else:
            fig = image_figure(story, params, head, name, place, title=title, width_px=560)
            plotly_chart(fig, key=chart_key, width="stretch",
                         config={"displaylogo": False})  # fmt: skip
            st.caption(
                "One pixel per cell, on the same diverging scale as every step. Outlined: the "
                "cells whose values become relative logits; greyed: the rest. The dotted cross "
                "marks the picked value; the inset on the right has its neighbourhood's exact "
                "values and distances."
            )
        rows, cols = np.indices(story.valid.shape)
        note = favoured_distance_note(
            story.definition, cols - rows, story.valid, f"head {head}'s relative logit"
        )
        st.info(md_escape(note), icon=":material/lightbulb:")
    with right:
        picked_summary(story, i, j, labels)
        st.markdown(place_lines(story, places, labels))
        if not is_small(story, name) and place is not None:
            rows, cols = inset_window(step, place)
            inset = cells_figure(
                story, name, place, labels, rows=rows, cols=cols, width_px=280,
                title=f"around the picked value in step {number}",
            )  # fmt: skip
            plotly_chart(
                inset,
                key=INSET_KEY,
                width="stretch",
                on_select=partial(pick_from_chart, INSET_KEY, params, head, masked, name),
                selection_mode="points",
                config={"displaylogo": False},
            )
    agreement_badge("skew vs definition on the valid cells, every head", story.max_diff)
    offer_download(params, story, variant, head, i, j)
    m1, m2, m3 = st.columns(3)
    m1.metric(
        "skew needs $E_r$",
        bytes_text(story.bytes_skew),
        help=f"({n if masked else 2 * n - 1}, {d}) float32 for the "
        + ("masked" if masked else "unmasked")
        + " skew",
    )
    m2.metric(
        "materialized $a^K$ needs",
        bytes_text(story.bytes_materialized),
        help=f"({n}, {n}, {d}) float32: the einsum and matmul paths",
    )
    m3.metric("logits (every path)", bytes_text(story.bytes_logits), help=f"({heads}, {n}, {n})")


story_panel(params)
