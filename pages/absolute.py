"""Absolute vs relative: the sinusoidal encoding, its PE · PE similarity, the relative index."""

import streamlit as st

from explorer import compute
from explorer.controls import current_params
from explorer.draw import agreement_badge, chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata

params = current_params()
n, d_model = params.length, params.d_model
rows, cols = axis_labels(params)
view = compute.encoding_view(params)
start = params.window[0]
hover = pair_customdata(view.index, start, start)
at = {"row_offset": start, "col_offset": start}
note = window_note(params)

st.title("Absolute vs relative")
st.markdown(
    "The Transformer's sinusoid adds an absolute position to every token: "
    "PE[pos, 2m] = sin(pos / 10000^(2m/d)), PE[pos, 2m+1] = cos(pos / 10000^(2m/d)). "
    "Its dot products depend only on the offset: PE_i · PE_j = Σ_m cos(ω_m (j - i)), constant "
    "along every diagonal, like the relative index table. Relative representations learn that "
    "function of j - i directly, and clip it at ±k."
)
window_caption(params, "every heatmap (the encoding: its rows)")
chart(
    heatmap(
        view.encoding,
        title="sinusoidal encoding PE",
        x_title="channel",
        y_title="position",
        y_labels=rows,
        height=360,
        row_offset=start,
    ),
    "sinusoidal_encoding",
    view.encoding,
    formula="PE (n, d_model)",
    shape=(n, d_model),
    note="" if not params.windowed else f"positions {start}-{params.window[1] - 1} of {n}",
)
c1, c2 = st.columns(2)
with c1:
    chart(
        heatmap(
            view.similarity,
            title="similarity PE_i · PE_j",
            x_labels=cols,
            y_labels=rows,
            customdata=hover,
            **at,
        ),
        "encoding_similarity",
        view.similarity,
        formula="PE_i · PE_j = Σ_m cos(ω_m (j - i))",
        shape=(n, n),
        note=note,
    )
with c2:
    chart(
        heatmap(
            view.index,
            title=f"relative index clip(j - i, {params.k}) + {params.k}",
            x_labels=cols,
            y_labels=rows,
            scale="index",
            customdata=hover,
            cell_text=view.index.astype(int),
            zrange=(0, max(2 * params.k, 1)),
            **at,
        ),
        "relative_index",
        view.index,
        formula="clip(j - i, k) + k",
        shape=(n, n),
        note=note,
    )
agreement_badge("PE · PE along each diagonal (depends only on j - i)", view.diagonal_spread)
