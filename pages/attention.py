"""Attention, per head: logits -> masked logits -> softmax weights -> the output, split in two."""

import streamlit as st

from explorer import compute
from explorer.controls import current_params, head_picker, md_escape
from explorer.draw import agreement_badge, chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata

params = current_params()
n, d, heads = params.length, params.head_dim, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
index = compute.window_index(params)  # the window's pairs
hover = pair_customdata(index, start, start)
at = {"row_offset": start, "col_offset": start}
note = window_note(params)

st.title("Attention")
st.markdown(
    "e_ij = (q_i · k_j + q_i · a^K_ij) / sqrt(d), α_ij = softmax_j(e_ij) over the keys the mask "
    "allows, z_i = Σ_j α_ij v_j + Σ_j α_ij a^V_ij (Shaw et al. 2018, eqs. 2-4)."
)
tokens = params.tokens
if tokens:
    shown = [token.replace("`", "'") for token in tokens[:64]]  # inline code shows the rest as is
    st.markdown("Tokens: " + " · ".join(f"`{token}`" for token in shown))
    repeated = sorted({t for t in tokens if tokens.count(t) > 1})
    if repeated:
        st.info(
            md_escape(
                "Repeated tokens (" + ", ".join(repeated[:8]) + ") have identical content, so "
                "identical queries, keys and values: their rows of QK^T are the same, and only "
                "the relative term tells the copies apart."
            ),
            icon=":material/lightbulb:",
        )
mask_text = {
    "none": "no mask: every query sees every key",
    "causal": "causal mask: query i sees keys j <= i",
    "padding": f"padding mask: the last {params.n_pad} key(s) are padding",
    "causal-padding": f"causal mask and the last {params.n_pad} key(s) as padding",
}[params.mask]
st.caption(f"{mask_text}. Masked cells are blank. Scale 1/sqrt(d) with d = {d}.")
window_caption(params)
if params.windowed:
    st.caption(
        f"Each of the window's query rows is computed against all {n} keys (softmax needs "
        "them all), for the selected head only: rows are independent, so the window is exact."
    )

head = head_picker(heads, "attention_head")
view = compute.attention_view(params, head)

c1, c2, c3 = st.columns(3)
with c1:
    chart(
        heatmap(
            view.scaled_logits,
            title=f"logits e_ij, head {head}",
            x_labels=cols,
            y_labels=rows,
            customdata=hover,
            **at,
        ),
        "attention_logits",
        view.scaled_logits,
        formula="(q_i · k_j + q_i · a^K_ij) / sqrt(d)",
        shape=(n, n),
        note=note,
    )
with c2:
    chart(
        heatmap(
            view.masked_logits,
            title="masked logits",
            x_labels=cols,
            y_labels=rows,
            customdata=hover,
            **at,
        ),
        "attention_masked_logits",
        view.masked_logits,
        formula="e_ij, blank where masked",
        shape=(n, n),
        note=note,
    )
with c3:
    chart(
        heatmap(
            view.weights,
            title="weights α (softmax over keys)",
            x_labels=cols,
            y_labels=rows,
            scale="sequential",
            customdata=hover,
            **at,
        ),
        "attention_weights",
        view.weights,
        formula="α_ij = softmax_j(e_ij)",
        shape=(n, n),
        note=note,
    )
if params.n_pad == n:
    st.warning("Every key is padding: all weights and outputs are zero (no key to attend to).")
with st.expander("the two logit terms and the mask", expanded=False):
    c1, c2, c3 = st.columns(3)
    with c1:
        chart(
            heatmap(
                view.content_logits,
                title="content q_i · k_j",
                x_labels=cols,
                y_labels=rows,
                customdata=hover,
                **at,
            ),
            "attention_content_logits",
            view.content_logits,
            formula="q_i · k_j",
            shape=(n, n),
            note=note,
        )
    with c2:
        chart(
            heatmap(
                view.relative_logits,
                title="relative q_i · a^K_ij",
                x_labels=cols,
                y_labels=rows,
                customdata=hover,
                **at,
            ),
            "attention_relative_logits",
            view.relative_logits,
            formula="q_i · a^K_ij",
            shape=(n, n),
            note=note,
        )
    with c3:
        chart(
            heatmap(
                view.allowed,
                title="mask (1 = may attend)",
                x_labels=cols,
                y_labels=rows,
                scale="sequential",
                zrange=(0.0, 1.0),
                **at,
            ),
            "attention_mask",
            view.allowed,
            formula="allowed_ij",
            shape=(n, n),
            note=note,
        )

st.subheader("The output, split")
c1, c2, c3 = st.columns(3)
for column, (name, title, formula, z) in zip(
    (c1, c2, c3),
    (
        ("content_output", "Σ_j α_ij v_j", "content part", view.content_output),
        ("relative_output", "Σ_j α_ij a^V_ij", "relative part", view.relative_output),
        ("output", "z_i = sum of both", "output", view.output),
    ),
    strict=True,
):
    with column:
        chart(
            heatmap(z, title=title, x_title="channel", y_labels=rows, row_offset=start),
            f"attention_{name}",
            z,
            formula=formula,
            shape=(n, d),
            note="" if not params.windowed else f"query rows {start}-{stop - 1} of {n}",
        )
agreement_badge(
    "z = content part + relative part",
    float(abs(view.output - view.content_output - view.relative_output).max()),
)
if params.windowed:
    st.caption(
        f"The weights drawn are the window's keys only: each row puts between "
        f"{view.weight_inside[0]:.1%} and {view.weight_inside[1]:.1%} of its weight on them "
        "(100% over all keys)."
    )
