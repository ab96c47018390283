"""Relative logits: QK^T, and q_i · a^K_ij by the definition, by einsum and by t2t's matmul."""

import streamlit as st

from explorer import compute
from explorer.controls import current_params, head_picker
from explorer.draw import agreement_badge, chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata
from relpos_core.lookup import relative_index

params = current_params()
n, d, heads = params.length, params.head_dim, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
size = stop - start
index = relative_index(size, size, params.k).numpy()  # the window is diagonal: same j - i
at = {"row_offset": start, "col_offset": start}
note = window_note(params)

st.title("Relative logits")
st.markdown(
    "The logit of query i for key j has a content part and a relative part "
    "(Shaw et al. 2018, eq. 4): e_ij = (q_i · k_j + q_i · a^K_ij) / sqrt(d). "
    "The relative part is computed here three ways, which must agree."
)
window_caption(params)
if params.windowed:
    st.caption(
        "The relative term depends on j - i only, so on the window it equals the relative term "
        f"of the window's {size} queries over a sequence of {size}: every method below runs on "
        "that block."
    )
head = head_picker(heads, "logits_head")
view = compute.logits_view(params, head)
m_loop, m_mat = view.definition.shape[0], view.einsum.shape[0]

badges = st.container(horizontal=True)
with badges:
    for method in ("einsum", "matmul", "skew", "bucket"):
        agreement_badge(f"{method} vs definition", view.max_diff[method])
if m_loop < size:
    st.caption(
        f"The definition is a Python loop over pairs: it runs on the first {m_loop} query rows "
        f"of the window ({m_loop * size} pairs); the badges compare those rows, every head."
    )

c1, c2 = st.columns(2)
with c1:
    chart(
        heatmap(
            view.content,
            title=f"content logits QK^T, head {head}",
            x_labels=cols,
            y_labels=rows,
            customdata=pair_customdata(index, start, start),
            **at,
        ),
        "content_logits",
        view.content,
        formula="q_i · k_j",
        shape=(1, heads, n, n),
        note=note,
    )
with c2:
    chart(
        heatmap(
            view.definition,
            title="relative term by the definition (loop over i, j)",
            x_labels=cols,
            y_labels=rows,
            customdata=pair_customdata(index[:m_loop], start, start),
            **at,
        ),
        "relative_definition",
        view.definition,
        formula="e_ij = q_i · w^K[clip(j - i, k) + k], one pair at a time",
        shape=(1, heads, m_loop, size),
        note=note,
    )
c1, c2 = st.columns(2)
with c1:
    chart(
        heatmap(
            view.einsum,
            title="relative term by einsum over the gathered a^K",
            x_labels=cols,
            y_labels=rows,
            customdata=pair_customdata(index[:m_mat], start, start),
            **at,
        ),
        "relative_einsum",
        view.einsum,
        formula='einsum("bhid,ijd->bhij", q, a^K)',
        shape=(1, heads, m_mat, size),
        note="" if m_mat == size else f"first {m_mat} query rows: a^K is kept under 16 MB",
    )
with c2:
    chart(
        heatmap(
            view.matmul,
            title="relative term by transpose -> reshape -> matmul",
            x_labels=cols,
            y_labels=rows,
            customdata=pair_customdata(index[:m_mat], start, start),
            **at,
        ),
        "relative_matmul",
        view.matmul,
        formula="tensor2tensor's _relative_attention_inner",
        shape=(1, heads, m_mat, size),
        note="" if m_mat == size else f"first {m_mat} query rows: a^K is kept under 16 MB",
    )

st.subheader("tensor2tensor's six steps, every intermediate")
st.markdown(
    "Each tensor is drawn with its leading axes merged into rows (C order), so a transpose "
    "reorders rows and a reshape changes nothing. The matmul is batched over queries: each "
    "query i multiplies its b·h rows by its own a^K_i, of shape (n_k, d)."
    + (f" Here on the window's block: n_q = n_k = {size}." if params.windowed else "")
)
panels = compute.matmul_panels(params)
for first in range(0, len(panels), 4):
    for column, panel in zip(st.columns(4), panels[first : first + 4], strict=False):
        with column:
            chart(
                heatmap(
                    panel.z,
                    title=f"{panel.name}  {panel.shape}",
                    x_title=panel.cols_title,
                    y_title=panel.rows_title,
                ),
                f"t2t_{panel.name}",
                panel.z,
                formula=panel.formula,
                shape=panel.shape,
                note=panel.note,
            )
