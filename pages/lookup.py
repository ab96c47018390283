"""Lookup table: j - i, clipped, the index table, the w^K / w^V tables, and the gathered a^K."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import figure, inset, source_caption, window_caption
from explorer.figures.notes import clip_note
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_part, download_view
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, int_slider
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair, pair_schemes
from explorer.stories.shaw import lookup_figures, text, views

params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table
pair = current_pair()
n, k, d = params.length, params.k, params.head_dim
view = views.lookup_view(params)

st.title("Lookup table")
source_caption(params)
st.markdown(text.lookup_intro(params))
formulas.latex(formulas.CLIP)
formulas.latex(rf"{formulas.A_K}, \qquad \text{{table row }} {formulas.INDEX}")
window_caption(params)

distances = lookup_figures.distance_figure(params, view)
index = lookup_figures.index_figure(params, view)
c1, c2 = st.columns([2, 1])
with c1:
    figure(distances.fig, "distance", shape=distances.shape, caption=distances.caption)
with c2:
    figure(index.fig, "index", shape=index.shape, caption=index.caption)
st.info(clip_note(n, k, params.causal), icon=":material/lightbulb:")
inset(distances.panels, distances.scale, "lookup_zoom", refit=True)
pair_card(params, pair)

st.subheader("The tables w^K and w^V")
tables = lookup_figures.tables_figure(params, view)
figure(tables.fig, "tables", shape=tables.shape, caption=tables.caption)

st.subheader("The gathered a^K, one slice at a time")
st.markdown(text.a_k_intro(params))


@fragment
def a_k_slice() -> None:
    """One slice of a^K (reruns only this part)."""
    how = choice(
        "view a^K", ["by channel", "by query row"], "ak_view", kind="radio", horizontal=True
    )
    if how == "by channel":
        channel = int_slider("channel", 0, d - 1, "ak_channel") if d > 1 else 0
        block = views.gathered_channel(params, channel)
        chart = lookup_figures.channel_figure(params, block, channel, tables.scale)
        figure(
            chart.fig, "a_k_channel", latex=chart.latex, shape=chart.shape, caption=chart.caption
        )
        inset(chart.panels, chart.scale, "ak_zoom")
        download_part("a_k", lookup_figures.channel_arrays(params, chart, channel))
        return
    if pair is not None:  # the picked pair's query row, its key's row outlined
        query = pair.i
        st.caption(f"Query row i = {query}, of the picked pair: key j = {pair.j} is outlined.")
    else:
        query = int_slider("query row i", 0, n - 1, "ak_row") if n > 1 else 0
    chart = lookup_figures.row_figure(
        params, views.gathered_row(params, query), query, tables.scale
    )
    figure(chart.fig, "a_k_row", latex=chart.latex, shape=chart.shape, caption=chart.caption)
    download_part("a_k", lookup_figures.row_arrays(params, chart, query))


a_k_slice()

download_view("lookup", params, lookup_figures.lookup_arrays(params, view))
