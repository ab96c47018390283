"""Lookup table: j - i, clipped, the index table, the w^K / w^V tables, and the gathered a^K."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import figure, inset, weights_caption, window_caption
from explorer.figures.heatmaps import Panel, make_scale, panel_grid
from explorer.figures.notes import clip_note
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, int_slider
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair
from explorer.stories.shaw import views
from explorer.weights.example import axis_labels

params = current_params()
pair = current_pair()
n, k, d = params.length, params.k, params.head_dim
rows, cols = axis_labels(params)
view = views.lookup_view(params)
start, stop = params.window
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}

st.title("Lookup table")
weights_caption(params)
st.markdown(
    "Pair (i, j) uses the learned vector for its clipped distance (Shaw et al. 2018, eqs. 3-4). "
    f"Here n = {n}, k = {k}: {2 * k + 1} table rows of size d_z = {d}."
)
st.latex(formulas.CLIP)
st.latex(rf"{formulas.A_K}, \qquad \text{{table row }} {formulas.INDEX}")
window_caption(params)

distances = [
    Panel(view.distance, title="distance j - i", cell_text=view.distance.astype(int), **at),
    Panel(view.clipped, title=f"clipped to ±{k}", cell_text=view.clipped.astype(int), **at),
]
# Each on its own scale: at n = 1024 j - i spans ±1023 and a shared scale would blank ±k.
distance_scales = [
    make_scale("diverging", [view.distance]),
    make_scale("diverging", [view.clipped], zrange=(-max(k, 1), max(k, 1))),
]
index_scale = make_scale("index", [view.index], zrange=(0, max(2 * k, 1)))
c1, c2 = st.columns([2, 1])
with c1:
    figure(
        panel_grid(distances, distance_scales, columns=2, max_width=700),
        "distance",
        shape=(n, n),
        caption=f"Each panel has its own scale centred at 0: j - i spans ±{n - 1}, the clipped "
        f"distances stop at ±{k}, so the band |j - i| <= {k} is what the right panel shows.",
    )
with c2:
    index_panel = Panel(
        view.index, title="index into the table", cell_text=view.index.astype(int), **at
    )
    figure(
        panel_grid([index_panel], index_scale, max_width=340),
        "index",
        shape=(n, n),
        caption=f"values 0..{2 * k}",
    )
st.info(clip_note(n, k), icon=":material/lightbulb:")
inset(distances, distance_scales, "lookup_zoom")
pair_card(params, pair)

st.subheader("The tables w^K and w^V")
table_rows = [f"w{r - k:+d}" if r != k else "w0" for r in range(2 * k + 1)]
tables = [
    Panel(
        z,
        title=name,
        x_title="channel",
        y_title="row (distance)",
        y_labels=table_rows,
        x_symbol="channel",
        y_symbol="row",
    )  # fmt: skip
    for z, name in ((view.table_k, "w^K"), (view.table_v, "w^V"))
]
table_scale = make_scale("diverging", [view.table_k, view.table_v])
figure(
    panel_grid(tables, table_scale, columns=2),
    "tables",
    shape=view.table_k.shape,
    caption="w^K and w^V, rows w_-k .. w_k. " + table_scale.caption,
)

st.subheader("The gathered a^K, one slice at a time")
st.markdown(
    f"a^K has shape (n, n, d_z) = ({n}, {n}, {d}): the tensor the efficient methods never "
    "build. Here it is read one slice at a time straight from the table, so its size never "
    "matters."
)


@fragment
def a_k_slice() -> None:
    """One slice of a^K (reruns only this part)."""
    how = choice(
        "view a^K", ["by channel", "by query row"], "ak_view", kind="radio", horizontal=True
    )
    if how == "by channel":
        channel = int_slider("channel", 0, d - 1, "ak_channel") if d > 1 else 0
        block = views.gathered_channel(params, channel)
        panel = Panel(block, title=f"a^K[:, :, {channel}]", **at)
        figure(
            panel_grid([panel], table_scale),
            "a_k_channel",
            latex=rf"a^K_{{ij}}[{channel}] = w^K_{{\operatorname{{clip}}(j - i,\, k)}}[{channel}]",
            shape=(n, n),
            caption="Same colour scale as the tables.",
        )
        inset([panel], table_scale, "ak_zoom")
    elif pair is not None:  # the picked pair's query row, its key's row outlined
        query = pair.i
        st.caption(f"Query row i = {query}, of the picked pair: key j = {pair.j} is outlined.")
    else:
        query = int_slider("query row i", 0, n - 1, "ak_row") if n > 1 else 0
    if how == "by query row":
        block = views.gathered_row(params, query)
        panel = Panel(
            block,
            title=f"a^K[{query}, :, :] (query {query})",
            x_title="channel",
            y_title="key j",
            y_labels=cols,
            row_offset=start,
            x_symbol="channel",
            y_symbol="j",
        )
        figure(
            panel_grid([panel], table_scale),
            "a_k_row",
            latex=rf"a^K_{{{query}j}} = w^K_{{\operatorname{{clip}}(j - {query},\, k)}}",
            shape=(n, d),
            caption=("" if not params.windowed else f"keys {start}-{stop - 1} of {n}. ")
            + "Same colour scale as the tables; row j is table row "
            + f"clip(j - {query}, {k}) + {k}.",
        )


a_k_slice()

labels = position_labels(params, start, stop)
pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
distances = [str(r) for r in range(-params.k, params.k + 1)]
download_view(
    "lookup",
    params,
    {
        "distance": Labelled(view.distance, "j - i", **pairs),
        "clipped": Labelled(view.clipped, "clip(j - i, k)", **pairs),
        "index": Labelled(view.index, "clip(j - i, k) + k", **pairs),
        "w_K": Labelled(
            view.table_k,
            "w^K, row r = distance r - k",
            rows=distances,
            corner="distance \\ channel",
        ),
        "w_V": Labelled(
            view.table_v,
            "w^V, row r = distance r - k",
            rows=distances,
            corner="distance \\ channel",
        ),
    },
)
