"""Absolute vs relative: the sinusoidal encoding, its PE · PE similarity, the relative index."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import agreement_badge, figure, inset, window_caption
from explorer.figures.heatmaps import Panel, panel_grid
from explorer.figures.scales import make_scale
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.pair.card import pair_note
from explorer.pair.controls import pair_schemes
from explorer.stories.family.length_curves import (
    bits_per_character,
    curves_table,
    length_curves,
    length_figure,
    lengths_caption,
)
from explorer.stories.shaw import views
from explorer.weights.reading import axis_labels
from explorer.weights.source import no_model_caption

params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table
n, d_model, k = params.length, params.d_model, params.k
rows, cols = axis_labels(params)
view = views.encoding_view(params)
start, stop = params.window
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}

st.title("Absolute vs relative")
st.caption(
    no_model_caption(
        "its heatmaps are the sinusoid's definition for the sidebar's n and d_model, and its "
        "length curves are results shipped with the family's trained models (named under the "
        "chart), read from file, not run here"
    )
)
st.markdown(
    "The Transformer's sinusoid adds an absolute position to every token. Its dot products "
    "depend only on the offset, PE_i · PE_j = Σ_m cos(ω_m (j - i)): constant along every "
    "diagonal, like the relative index table. Relative representations learn that function of "
    "j - i directly, and clip it at ±k."
)
st.subheader("What fails without position")
WHY_MODELS = ("nope", "sinusoidal", "shaw")
curves = length_curves(WHY_MODELS)
st.markdown(bits_per_character(curves))
longest = int(curves.lengths.max())
figure(
    length_figure(curves),
    "why_position",
    caption=lengths_caption(curves),
)
st.markdown(
    f"At the training length, {curves.context} characters, a model with no position scores "
    f"{curves.at('nope', curves.context):.2f} bits per character; the absolute sinusoid "
    f"{curves.at('sinusoidal', curves.context):.2f} and Shaw's relative positions "
    f"({curves.described('shaw')}) "
    f"{curves.at('shaw', curves.context):.2f}. At {longest} characters the sinusoid, which "
    f"never saw positions past {curves.context - 1}, rises to "
    f"{curves.at('sinusoidal', longest):.2f}; the relative model, which sees only distances, "
    f"to {curves.at('shaw', longest):.2f}."
)

st.subheader("The sinusoid, and why its similarity depends on j - i only")
formulas.latex(formulas.SINUSOID)
window_caption(params, "every heatmap (the encoding: its rows)")
encoding = Panel(
    view.encoding,
    title="sinusoidal encoding PE",
    x_title="channel",
    y_title="position p",
    y_labels=rows,
    row_offset=start,
    x_symbol="channel",
    y_symbol="p",
)
figure(
    panel_grid([encoding], make_scale("diverging", [view.encoding], zrange=(-1.0, 1.0))),
    "sinusoidal_encoding",
    shape=(n, d_model),
    caption="Diverging colour scale from -1 to 1"
    + ("" if not params.windowed else f"; positions {start}-{stop - 1} of {n}"),
)
similarity = Panel(view.similarity, title="similarity PE_i · PE_j", **at)
# Its size is the point (largest on the diagonal, equal along each one): a sequential scale
# from its own least to its largest value, not a diverging one around 0.
similarity_scale = make_scale("sequential", [view.similarity])
index = Panel(
    view.index,
    title=f"relative index clip(j - i, {k}) + {k}",
    cell_text=view.index.astype(int),
    **at,
)
c1, c2 = st.columns(2)
with c1:
    figure(
        panel_grid([similarity], similarity_scale, max_width=480),
        "encoding_similarity",
        shape=(n, n),
        caption=similarity_scale.caption.replace("; one scale for every panel", "")
        + f" Every diagonal holds one value; the main one is the largest, d_model / 2 = "
        f"{d_model // 2}.",
    )
with c2:
    figure(
        panel_grid(
            [index], make_scale("index", [view.index], zrange=(0, max(2 * k, 1))), max_width=480
        ),
        "relative_index",
        latex=formulas.INDEX,
        shape=(n, n),
    )
pair_note("the similarity and the index table", range(start, stop), range(start, stop))
inset([similarity], similarity_scale, "absolute_zoom")
agreement_badge("PE · PE along each diagonal (depends only on j - i)", view.diagonal_spread)

start, stop = params.window
labels = position_labels(params, start, stop)
pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
download_view(
    "absolute",
    params,
    {
        "encoding": Labelled(
            view.encoding, "sinusoidal PE", rows=labels, corner="position \\ channel"
        ),
        "similarity": Labelled(
            view.similarity,
            "PE_i . PE_j",
            rows=labels,
            cols=labels,
            corner="position i \\ position j",
        ),
        "index": Labelled(view.index, "clip(j - i, k) + k", **pairs),
        "bits_per_character": curves_table(curves),
    },
)
