"""The controls the Skew and Transformer-XL shift pages share: a stepper through the steps
(◀, the step, ▶, and whether each cell writes its distance) and a click on a cell of a step
that picks the result cell showing the same value."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from explorer.frame.chart_events import clicked_cell
from explorer.frame.screen import PHONE_WIDTH
from explorer.frame.widgets import choice, toggle
from explorer.stories.shift.stepping import Stepped, result_cell_of

# What a phone's row leaves the steps between ◀ and ▶ (each about 40 px and a 16 px gap).
STEPS_ROOM = PHONE_WIDTH - 2 * (40 + 16)


def shift_step(key: str, options: Sequence[object], delta: int) -> None:
    """Move the step picker ``key`` ``delta`` steps along ``options``, stopping at the ends."""
    current = st.session_state.get(key)
    at = list(options).index(current) if current in options else 0
    st.session_state[key] = options[min(max(at + delta, 0), len(options) - 1)]


def stepper(
    prefix: str, options: Sequence[object], distance_label: str, format_func=str
) -> tuple[object, bool]:
    """One row: ◀, the step (URL key ``<prefix>_step``), ▶; under it the toggle that writes
    each cell's distance (``<prefix>_distance``). Returns the step picked and the toggle."""
    key = f"{prefix}_step"
    # One row that never wraps: on a phone a wrapping row put ◀, the steps and ▶ on a line
    # each; here the steps take the width left between the arrows, as a select box on a
    # phone where their buttons would not fit it.
    with st.container(horizontal=True, wrap=False, vertical_alignment="bottom",
                      key=f"{prefix}_stepper"):  # fmt: skip
        st.button("◀", key=f"{prefix}_prev", on_click=shift_step, args=(key, options, -1),
                  help="previous step")  # fmt: skip
        picked = choice(
            "step", options, key, format_func=format_func, width="stretch", room=STEPS_ROOM
        )
        st.button("▶", key=f"{prefix}_next", on_click=shift_step, args=(key, options, 1),
                  help="next step")  # fmt: skip
    write = toggle(distance_label, f"{prefix}_distance", value=True)
    return picked, write


def pick_from_chart(
    chart_key: str, story: Stepped, name: str, pick: Callable[[int, int], None]
) -> None:
    """A click on a cell of step ``name`` picks (``pick(i, j)``) the result cell that shows the
    same value, if there is one."""
    clicked = clicked_cell(chart_key)
    if clicked is None:
        return
    cell = result_cell_of(story, name, *clicked)
    if cell is not None:
        pick(*cell)
