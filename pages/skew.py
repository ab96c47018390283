"""Skew: relative-indexed logits -> absolute-indexed, by pad, reshape and slice (Huang 2018)."""

import numpy as np
import streamlit as st

from explorer import compute
from explorer.controls import choice, current_params, head_picker, toggle
from explorer.draw import agreement_badge, bytes_text, chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata, shade_cells
from relpos_core.lookup import relative_index

params = current_params()
n, d, heads = params.length, params.head_dim, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
size = stop - start
index = relative_index(size, size, params.k).numpy()  # the window is diagonal: same j - i
note = window_note(params)

st.title("Skew")
st.markdown(
    "Instead of gathering a^K (n, n, d), multiply the queries by one embedding per distance, "
    "S = Q Er^T, where column c of S is distance r = c - (n - 1). Row i needs column "
    "j - i + n - 1 at key j: the skew shifts every row by its own offset using only a pad, a "
    "reshape and a slice (Huang et al. 2018, Sec. 3.4.1)."
)
window_caption(params, "every step")
if params.windowed:
    st.caption(
        f"The steps are the skew of the window's {size} queries over a sequence of {size} "
        "(relative logits depend on j - i only, so its result is exactly the window of the "
        f"full result); the memory figures are for the full n = {n}."
    )
controls = st.container(horizontal=True)
with controls:
    kind = choice("skew", ["masked (causal)", "unmasked (two-sided)"], "skew_kind")
    head = head_picker(heads, "skew_head")
    show_distance = toggle("write each cell's distance r", "skew_distance", value=True)
masked = kind.startswith("masked")
view = compute.skew_view(params, head, masked)

m1, m2, m3 = st.columns(3)
m1.metric(
    "skew needs Er",
    bytes_text(view.bytes_skew),
    help=f"({n if masked else 2 * n - 1}, {d}) float32",
)
m2.metric(
    "materialized a^K needs",
    bytes_text(view.bytes_materialized),
    help=f"({n}, {n}, {d}) float32: the einsum and matmul paths",
)
m3.metric("logits (every path)", bytes_text(view.bytes_logits), help=f"({heads}, {n}, {n})")


def draw_step(step: int) -> None:
    panel, distance, pad = view.panels[step], view.distances[step], view.pads[step]
    text = np.where(pad, "pad", distance.astype(str)) if show_distance else None
    is_result = panel.name == "result"
    custom = np.stack([distance, np.where(pad, np.nan, 0)], axis=-1).astype(np.float32)
    fig = heatmap(
        panel.z,
        title=f"{step + 1}. {panel.name}  {panel.shape}",
        x_title=panel.cols_title,
        y_title=panel.rows_title,
        x_labels=cols if is_result else None,
        y_labels=rows if panel.name in ("input", "padded", "result") else None,
        row_offset=start if panel.name in ("input", "padded", "result") else 0,
        col_offset=start if is_result else 0,
        customdata=custom,
        hovertemplate="row=%{y}  col=%{x}<br>holds distance r=%{customdata[0]}"
        "<br>value=%{z:.4g}<extra></extra>",
        cell_text=text,
    )
    if is_result and masked:
        shade_cells(fig, view.invalid, "invalid: not a relative logit", start, start)
    elif not is_result:
        shade_cells(fig, pad, "pad", start if panel.name != "reshaped" else 0)
    chart(
        fig,
        f"skew_{'masked' if masked else 'unmasked'}_{panel.name}",
        panel.z,
        formula=panel.formula,
        shape=panel.shape,
        note=note if is_result else "",
    )
    if is_result and masked:
        st.caption(
            "Shaded: cells above the diagonal hold the pad zero (j = i + 1) or a value of the "
            "next query row, not q_i · w_clip(j-i,k). The causal mask removes exactly these."
        )


for first in range(0, len(view.panels), 2):
    for column, step in zip(st.columns(2), range(first, first + 2), strict=True):
        with column:
            draw_step(step)

c1, c2 = st.columns(2)
with c1:
    if masked:
        chart(
            heatmap(
                view.masked_result,
                title="skew result with the causal mask applied",
                x_labels=cols,
                y_labels=rows,
                customdata=pair_customdata(index, start, start),
                row_offset=start,
                col_offset=start,
            ),
            "skew_causal_result",
            view.masked_result,
            formula="S_rel[i, j] for j <= i, blank above",
            shape=(n, n),
            note=note,
        )
    else:
        st.markdown("The unmasked skew is valid everywhere: nothing needs masking.")
with c2:
    definition = np.where(view.invalid, np.nan, view.definition).astype(np.float32)
    chart(
        heatmap(
            definition,
            title="definition q_i · w^K[clip(j - i, k) + k]",
            x_labels=cols,
            y_labels=rows,
            customdata=pair_customdata(index, start, start),
            row_offset=start,
            col_offset=start,
        ),
        "skew_definition",
        definition,
        formula="q_i · a^K_ij",
        shape=(n, n),
        note=note,
    )
agreement_badge("skew vs definition on the valid cells, every head", view.max_diff)
