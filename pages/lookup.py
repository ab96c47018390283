"""Lookup table: j - i, clipped, the index table, the w^K / w^V tables, and the gathered a^K."""

import numpy as np
import streamlit as st

from explorer import compute
from explorer.controls import choice, current_params, int_slider
from explorer.draw import chart, window_caption, window_note
from explorer.example import axis_labels
from explorer.plots import heatmap, pair_customdata

params = current_params()
n, k, d = params.length, params.k, params.head_dim
rows, cols = axis_labels(params)
view = compute.lookup_view(params)
start, stop = params.window
hover = pair_customdata(view.index, start, start)
at = {"row_offset": start, "col_offset": start}  # where the window sits in the (n, n) matrix
note = window_note(params)

st.title("Lookup table")
st.markdown(
    "Pair (i, j) uses the learned vector for its clipped distance: "
    "a^K_ij = w^K[clip(j - i, k) + k] (Shaw et al. 2018, eqs. 3-4). "
    f"Here n = {n}, k = {k}: {2 * k + 1} table rows of size d = {d}."
)
window_caption(params)

c1, c2, c3 = st.columns(3)
with c1:
    chart(
        heatmap(
            view.distance,
            title="distance j - i",
            x_labels=cols,
            y_labels=rows,
            scale="diverging",
            customdata=hover,
            cell_text=view.distance.astype(int),
            **at,
        ),
        "distance",
        view.distance,
        formula="j - i",
        shape=(n, n),
        note=note,
    )
with c2:
    chart(
        heatmap(
            view.clipped,
            title=f"clipped to ±{k}",
            x_labels=cols,
            y_labels=rows,
            scale="diverging",
            customdata=hover,
            cell_text=view.clipped.astype(int),
            **at,
        ),
        "clipped",
        view.clipped,
        formula="clip(j - i, k) = max(-k, min(k, j - i))",
        shape=(n, n),
        note=note,
    )
with c3:
    chart(
        heatmap(
            view.index,
            title="index into the table",
            x_labels=cols,
            y_labels=rows,
            scale="index",
            customdata=hover,
            cell_text=view.index.astype(int),
            zrange=(0, max(2 * k, 1)),
            **at,
        ),
        "index",
        view.index,
        formula="clip(j - i, k) + k  in [0, 2k]",
        shape=(n, n),
        note=note,
    )

st.subheader("The learned tables")
table_rows = [f"w{r - k:+d}" if r != k else "w0" for r in range(2 * k + 1)]
c1, c2 = st.columns(2)
with c1:
    chart(
        heatmap(
            view.table_k,
            title="w^K",
            x_title="channel",
            y_title="row (distance)",
            y_labels=table_rows,
        ),
        "table_k",
        view.table_k,
        formula="w^K = (w_-k, ..., w_k)",
        shape=view.table_k.shape,
    )
with c2:
    chart(
        heatmap(
            view.table_v,
            title="w^V",
            x_title="channel",
            y_title="row (distance)",
            y_labels=table_rows,
        ),
        "table_v",
        view.table_v,
        formula="w^V = (w_-k, ..., w_k)",
        shape=view.table_v.shape,
    )

st.subheader("The gathered a^K, one slice at a time")
st.markdown(
    f"a^K has shape (n, n, d) = ({n}, {n}, {d}): the tensor the efficient methods never build. "
    "Here it is read one slice at a time straight from the table, so its size never matters."
)
how = choice("view a^K", ["by channel", "by query row"], "ak_view", radio=True, horizontal=True)
if how == "by channel":
    channel = int_slider("channel", 0, d - 1, "ak_channel") if d > 1 else 0
    block = compute.gathered_channel(params, channel)
    chart(
        heatmap(
            block,
            title=f"a^K[:, :, {channel}]",
            x_labels=cols,
            y_labels=rows,
            customdata=hover,
            **at,
        ),
        "a_k_channel",
        block,
        formula=f"a^K_ij[{channel}] = w^K[clip(j - i, k) + k, {channel}]",
        shape=(n, n),
        note=note,
    )
else:
    query = int_slider("query row i", 0, n - 1, "ak_row") if n > 1 else 0
    block = compute.gathered_row(params, query)
    chart(
        heatmap(
            block,
            title=f"a^K[{query}, :, :] (query {query})",
            x_title="channel",
            y_title="key j",
            y_labels=cols,
            customdata=np.stack(
                [
                    np.broadcast_to((np.arange(start, stop) - query)[:, None], block.shape),
                    np.broadcast_to(
                        (np.clip(np.arange(start, stop) - query, -k, k) + k)[:, None], block.shape
                    ),
                ],
                axis=-1,
            ),
            row_offset=start,
            hovertemplate="i=" + str(query) + "  j=%{y}  channel=%{x}<br>j - i=%{customdata[0]}"
            "<br>index=%{customdata[1]}<br>value=%{z:.4g}<extra></extra>",
        ),
        "a_k_row",
        block,
        formula=f"a^K_{query}j = w^K[clip(j - {query}, k) + k]",
        shape=(n, d),
        note="" if not params.windowed else f"keys {start}-{stop - 1} of {n}",
    )
