"""Attention basics: where attention comes from (a decoder reading its encoder), additive and
dot-product scores on the same states, and the worked example of scaled dot-product attention
to edit: cross-attention, and self-attention as the case where queries and keys are one."""

import numpy as np
import streamlit as st

from explorer.figures.draw import agreement_badge, chart, figure
from explorer.figures.plots import heatmap
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view
from explorer.frame.widgets import choice, int_slider, md_escape, text_box
from explorer.stories.basics import views
from explorer.stories.basics.scaling import (
    KEYS_DEFAULT,
    KEYS_MAX,
    KEYS_MIN,
    NOTE_D_K,
    SATURATION_SAMPLES,
    SPREAD_SAMPLES,
    saturation_figure,
    scale_note,
    scale_view,
    spread_figure,
)
from relpos_lab.copy_task import CopyConfig, shipped_copy_results

params = current_params()
config = CopyConfig()

st.title("Attention basics")
if params.trained:
    shipped = shipped_copy_results()
    held_out = shipped["held_out"]
    st.caption(
        f":material/school: **Weights: trained**: the copy model, an encoder-decoder with "
        f"additive attention trained for {shipped['steps']} steps ({shipped['seconds']:.0f} s "
        f"on one core) to copy the first {config.n_out} of {config.n_in} random items; on "
        f"{held_out['sequences']:,} held-out sequences it copies "
        f"{held_out['item_accuracy']:.0%} of the items. Every tensor below is the model's own; "
        "the sidebar's n, k, d_model, heads and mask do not apply to this page."
    )
else:
    st.caption(
        f":material/casino: **Weights: random, untrained** (seed {params.seed}): the copy "
        "model's architecture with seeded random weights, so its alignment is not one a model "
        "found; the sidebar's weights switch draws the trained model instead (its n, k, "
        "d_model, heads and mask do not apply to this page)."
    )
st.markdown(
    "Before position: how a query picks what to read. A decoder producing output $i$ scores "
    "every encoder state $h_j$ against its own state $s_{i-1}$, turns the scores into weights "
    "with a softmax and reads the weighted sum of the states (Bahdanau et al. 2015):"
)
st.latex(
    r"e_{ij} = v_a^\top \tanh\!\left(W_a s_{i-1} + U_a h_j\right),\qquad "
    r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{j'} \exp e_{ij'}},\qquad "
    r"c_i = \sum_j \alpha_{ij} h_j"
)

# ---- 1. the alignment a model learned ------------------------------------------------------
st.header("1 · The alignment a copy model learned")
st.markdown(
    f"The task: read {config.n_in} random items from 1 to {config.n_features - 1} and output the "
    f"first {config.n_out}. Nothing in the sequence predicts the next item, so a decoder that "
    "copies must look back at the right input: its weights $\\alpha_{ij}$ show where."
)
items_text = text_box(
    "input items (whole numbers, spaces between)",
    "items",
    views.ITEMS_DEFAULT,
    80,
    help=f"{config.n_out} to {views.ITEMS_MAX} items from 1 to {config.n_features - 1}; the "
    f"model was trained on {config.n_in}.",
)
try:
    items = views.parse_items(items_text, config.n_features, config.n_out)
except ValueError as error:
    st.warning(
        md_escape(f"{error}; showing {views.ITEMS_DEFAULT} instead."), icon=":material/warning:"
    )
    items = views.parse_items(views.ITEMS_DEFAULT, config.n_features, config.n_out)
seed = 0 if params.trained else params.seed  # the seed draws random weights only
copy = views.copy_view(items, params.trained, seed)
inputs = [f"{j}: {x}" for j, x in enumerate(items)]
outputs = [f"{i}: → {y}" for i, y in enumerate(copy.predicted)]
weight_text = np.vectorize(lambda w: f"{w:.2f}")(copy.weights)
chart(
    heatmap(
        copy.weights,
        title="α, the weights each output puts on each input",
        x_title="input j: item",
        y_title="output i: predicted item",
        x_labels=inputs,
        y_labels=outputs,
        scale="sequential",
        zrange=(0.0, 1.0),
        cell_text=weight_text,
        height=260,
    ),
    "basics_alignment",
    shape=copy.weights.shape,
    note="Rows: the outputs (the item predicted after →); columns: the inputs; linear colour "
    "scale from 0 to 1; each row sums to 1.",
)
top = copy.weights.argmax(1)
right = sum(p == x for p, x in zip(copy.predicted, items, strict=False))
st.info(
    md_escape(
        " ".join(
            f"Output {i} puts {copy.weights[i, j]:.0%} of its weight on input {j} (item "
            f"{items[j]}) and predicts {copy.predicted[i]}."
            for i, j in enumerate(top)
        )
        + f" {right} of {config.n_out} items copied."
        + (
            f" The model was trained on {config.n_in} inputs; this sequence has {len(items)}."
            if len(items) != config.n_in
            else ""
        )
    ),
    icon=":material/lightbulb:",
)
agreement_badge("the model's scores e_ij vs the definition by loops", copy.additive_diff)
st.caption(
    "This is already **cross-attention**: the queries (decoder states, "
    f"{config.n_out} of them) and the keys (encoder states, {len(items)}) come from different "
    "sequences of different lengths."
)

# ---- 2. additive against dot product -------------------------------------------------------
st.header("2 · Additive against dot-product scores, on the same states")
st.markdown(
    "The transformer replaces the small network $a(s, h)$ by a dot product of the two vectors, "
    "scaled by 1/√d: no parameters of its own, one matrix product for every pair, but "
    "the two vectors must have the same width (here both are "
    f"{copy.state_width} wide). Below, both on the states of section 1:"
)
left, right_column = st.columns(2)
with left:
    st.latex(r"e_{ij} = v_a^\top \tanh\!\left(W_a s_{i-1} + U_a h_j\right)")
    st.caption(
        f"W_a, U_a: ({copy.additive_width}, {copy.state_width}) each, v_a: "
        f"({copy.additive_width},): {copy.additive_width * (2 * copy.state_width + 1):,} "
        "learned numbers. What the model uses."
    )
with right_column:
    st.latex(r"e_{ij} = \frac{s_{i-1} \cdot h_j}{\sqrt{d}}")
    st.caption(f"d = {copy.state_width}; nothing learned. Not what this model was trained with.")
panels = {
    "additive scores e": copy.additive,
    "dot-product scores e": copy.dot,
    "additive weights α": copy.weights,
    "dot-product weights α": copy.dot_weights,
}
for row in (
    ("additive scores e", "dot-product scores e"),
    ("additive weights α", "dot-product weights α"),
):
    for column, name in zip(st.columns(2), row, strict=True):
        with column:
            values = panels[name]
            is_weight = "weights" in name
            chart(
                heatmap(
                    values,
                    title=name,
                    x_title="input j",
                    y_title="output i",
                    x_labels=inputs,
                    y_labels=[f"{i}" for i in range(len(values))],
                    scale="sequential" if is_weight else "diverging",
                    zrange=(0.0, 1.0) if is_weight else None,
                    cell_text=np.vectorize(lambda w: f"{w:.2f}")(values),
                    height=240,
                ),
                "basics_" + name.replace(" ", "_").replace("α", "alpha"),
                shape=values.shape,
            )
st.caption("Scores on a diverging scale centred at 0, each panel its own; weights from 0 to 1.")
agreement_badge("dot-product scores vs the definition by loops", copy.dot_diff)


def reads(weights: np.ndarray) -> str:
    """Which input each output reads most, and with how much of its weight."""
    top = weights.argmax(1)
    return (
        f"outputs read inputs {', '.join(map(str, top))} with "
        f"{', '.join(f'{weights[i, j]:.0%}' for i, j in enumerate(top))} of their weight"
    )


st.info(
    md_escape(
        f"Additive, the model's own scores: {reads(copy.weights)}. Dot product of the same "
        f"states: {reads(copy.dot_weights)}."
        + (
            " The model learned W_a, U_a and v_a to pick the input to copy; the plain dot "
            "product of the same states was never trained to."
            if params.trained
            else ""
        )
    ),
    icon=":material/lightbulb:",
)

# ---- 3. the worked example -----------------------------------------------------------------
st.header("3 · Query, key and value: the worked example")
st.markdown(
    "Generalise the decoder state to a **query** $q_i$, the encoder states to **keys** $k_j$ "
    "(what is compared) and **values** $v_j$ (what is read): scaled dot-product attention "
    "(Vaswani et al. 2017). The matrices below are the attention introduction's own; edit "
    "them and the weights and the output follow."
)
st.latex(
    r"\operatorname{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V"
)
source = choice(
    "queries",
    ["typed Q (cross-attention)", "the keys themselves (self-attention)"],
    "example_source",
    help="Self-attention: every position of one sequence queries all of them, Q = K.",
)
boxes = st.columns(3)
with boxes[0]:
    q_text = text_box("Q (rows: queries)", "example_q", views.EXAMPLE_Q, 200)
with boxes[1]:
    k_text = text_box("K (rows: keys)", "example_k", views.EXAMPLE_K, 200)
with boxes[2]:
    v_text = text_box("V (rows: values, one per key)", "example_v", views.EXAMPLE_V, 200)
st.caption(
    f"Rows separated by ';', numbers by spaces; at most {views.MATRIX_ROWS_MAX} rows of "
    f"{views.MATRIX_COLS_MAX} numbers."
)
try:
    k = views.parse_matrix("K", k_text)
    v = views.parse_matrix("V", v_text)
    q = k if source.startswith("the keys") else views.parse_matrix("Q", q_text)
    example = views.example_view(q, k, v)
except ValueError as error:
    st.warning(
        md_escape(f"{error}. Showing the example's own matrices."), icon=":material/warning:"
    )
    q, k, v = (
        views.parse_matrix(n, t)
        for n, t in (("Q", views.EXAMPLE_Q), ("K", views.EXAMPLE_K), ("V", views.EXAMPLE_V))
    )
    example = views.example_view(q, k, v)


def numbers(values: np.ndarray) -> np.ndarray:
    """Cell text: 4 significant digits, and 0 for float rounding (|x| below 1e-9 of the
    panel's largest)."""
    tiny = 1e-9 * max(float(np.abs(values).max()), 1e-30)
    return np.vectorize(lambda x: "0" if abs(x) <= tiny else f"{x:.4g}")(values)


n_q, n_k = example.weights.shape
queries = [f"q{i}" for i in range(n_q)]
keys = [f"k{j}" for j in range(n_k)]
top_row = st.columns(3)
for column, (name, values, y, x, scale) in zip(
    top_row,
    (
        ("Q", example.q, queries, [f"{c}" for c in range(example.q.shape[1])], "diverging"),
        ("K", example.k, keys, [f"{c}" for c in range(example.k.shape[1])], "diverging"),
        ("V", example.v, keys, [f"{c}" for c in range(example.v.shape[1])], "diverging"),
    ),
    strict=True,
):
    with column:
        chart(
            heatmap(values, title=name, x_title="channel", y_title="row", x_labels=x,
                    y_labels=y, scale=scale, cell_text=numbers(values), height=250),
            f"example_{name.lower()}",
            shape=values.shape,
        )  # fmt: skip
channels = [f"{c}" for c in range(example.v.shape[1])]
bottom = (  # name, values, x title, x labels, scale, colour range
    ("logits Q Kᵀ / √d_k", example.logits, "key j", keys, "diverging", None),
    ("weights α", example.weights, "key j", keys, "sequential", (0.0, 1.0)),
    ("output α V", example.output, "channel", channels, "diverging", None),
)
for column, (name, values, x_title, x, scale, zrange) in zip(st.columns(3), bottom, strict=True):
    with column:
        chart(
            heatmap(values, title=name, x_title=x_title, y_title="query i", x_labels=x,
                    y_labels=queries, scale=scale, zrange=zrange, cell_text=numbers(values),
                    height=250),
            "example_" + name.split()[0],
            shape=values.shape,
        )  # fmt: skip
agreement_badge("weights and output vs the definition by loops", example.max_diff)
st.caption(
    "Output difference relative to the largest |value| in V. Scores on a diverging scale "
    "centred at 0, each panel its own; weights from 0 to 1."
)
ties = [
    f"query {i} splits its weight over keys {', '.join(map(str, np.flatnonzero(row > 0.01)))}"
    if (row > 0.01).sum() > 1
    else f"query {i} reads key {int(row.argmax())} alone ({row.max():.0%})"
    for i, row in enumerate(example.weights)
]
st.info(
    md_escape(
        "; ".join(ties)
        + f". {n_q} queries over {n_k} keys: "
        + ("self-attention, Q = K." if source.startswith("the keys") else "cross-attention.")
    ),
    icon=":material/lightbulb:",
)

# ---- 4. why sqrt(d_k) ----------------------------------------------------------------------
st.header("4 · Why divide by √d_k")
st.markdown(
    "For q and k with independent unit-variance entries, q · k is a sum of d_k products of "
    "variance 1: its variance is d_k (Vaswani et al. 2017, footnote 4). Unscaled, wider heads "
    "give wider-spread logits, the largest of a row pulls ahead, and the softmax turns almost "
    "one-hot, where its gradients vanish. Dividing by √d_k keeps the spread at 1 for every d_k."
)
slider_column, _ = st.columns([1, 2])
with slider_column:
    keys_per_row = int_slider(
        "n keys per row", KEYS_MIN, KEYS_MAX, "scale_keys", KEYS_DEFAULT,
        help="How many keys one query's softmax spreads over, in the right-hand chart.",
    )  # fmt: skip
scales = scale_view(keys_per_row, params.seed)
m_dk = len(scales.d_k)
left, right = st.columns(2)
with left:
    figure(
        spread_figure(scales.d_k, scales.unscaled_std, scales.scaled_std),
        "scale_spread",
        latex=r"\operatorname{Var}(q \cdot k) = \sum_{c=1}^{d_k} \operatorname{Var}(q_c k_c) "
        r"= d_k,\qquad \operatorname{std}\Bigl(\tfrac{q \cdot k}{\sqrt{d_k}}\Bigr) = 1",
        shape=(m_dk,),
        caption=f"Two curves of {m_dk} values, d_k = 1 to {int(scales.d_k[-1])}: the std of "
        f"{SPREAD_SAMPLES} seeded random pairs (q, k) with N(0, 1) entries per d_k "
        f"(seed {params.seed}); both axes log.",
    )
with right:
    figure(
        saturation_figure(scales.d_k, scales.unscaled_max, scales.scaled_max, keys_per_row),
        "scale_saturation",
        latex=r"\mathbb{E}\bigl[\max_j \alpha_{ij}\bigr],\quad \alpha_{ij} = "
        r"\operatorname{softmax}_j\bigl(q_i \cdot k_j / s\bigr),\quad s \in \{1, \sqrt{d_k}\}",
        shape=(m_dk,),
        caption=f"Two curves of {m_dk} values: the mean over {SATURATION_SAMPLES} seeded "
        f"random rows of one query and {keys_per_row} keys of the row's largest weight; d_k log.",
    )
st.info(md_escape(scale_note(scales, NOTE_D_K)), icon=":material/lightbulb:")


d_k_rows = [str(int(v)) for v in scales.d_k]
download_view(
    "basics",
    params,
    {
        "alignment": Labelled(
            copy.weights,
            "alpha: output i over input j",
            rows=outputs,
            cols=inputs,
            corner="output i \\ input j",
        ),
        "additive_scores": Labelled(
            copy.additive, "e_ij, additive", rows=outputs, cols=inputs, corner="output i \\ input j"
        ),
        "dot_scores": Labelled(
            copy.dot,
            "s . h / sqrt(d), same states",
            rows=outputs,
            cols=inputs,
            corner="output i \\ input j",
        ),
        "example_weights": Labelled(
            example.weights,
            "softmax(Q K^T / sqrt(d_k))",
            rows=queries,
            cols=keys,
            corner="query i \\ key j",
        ),
        "score_spread": Labelled(
            np.stack([scales.unscaled_std, scales.scaled_std], 1),
            "std of q.k and of q.k / sqrt(d_k)",
            rows=d_k_rows,
            cols=["q.k", "q.k/sqrt(d_k)"],
            corner="d_k \\ std of",
        ),
        "softmax_saturation": Labelled(
            np.stack([scales.unscaled_max, scales.scaled_max], 1),
            f"mean largest weight of a row of {keys_per_row} keys",
            rows=d_k_rows,
            cols=["unscaled", "scaled"],
            corner="d_k \\ largest weight",
        ),
        "example_output": Labelled(
            example.output, "alpha V", rows=queries, corner="query i \\ channel"
        ),
    },
    extra={
        "_model": "copy" if params.trained else f"copy, random seed {params.seed}",
        "items": " ".join(map(str, items)),
        "scale_keys": keys_per_row,
    },
)
