"""Multi-head and masks: every step of multi-head attention with its shape, the padding and
look-ahead masks through the softmax, and why q · k is divided by sqrt(d_k)."""

import numpy as np
import streamlit as st

from explorer.figures.draw import agreement_badge, figure, markdown_table, shape_text
from explorer.figures.heatmaps import (
    Panel,
    grid_columns,
    make_scale,
    own_scales,
    own_scales_caption,
    panel_grid,
)
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.widgets import choice, md_escape, text_box
from explorer.stories.multihead.masks import (
    MASK_KINDS,
    TOKENS_DEFAULT,
    mask_note,
    mask_view,
    parse_token_ids,
)
from explorer.stories.multihead.notes import drawn_note, scope_note, shares_note
from explorer.stories.multihead.plots import channel_cell_px
from explorer.stories.multihead.views import TRAINED_MODEL, heads_spec, multihead_view
from explorer.weights.trained import sequence

params = current_params()
view = multihead_view(heads_spec(params))
h, rows, cols, d = view.weights.shape[0], view.rows, view.cols, view.x.shape[1]
c = d // h
n = view.keys
shapes = {name: shape for name, _, shape in view.steps}  # of the computation run, b = 1
labels = view.labels or None
unit = "character" if params.trained else "position"

st.title("Multi-head and masks")
if params.trained:
    source = (
        f"the {len(sequence(params))} typed characters"
        if params.text
        else f"{params.length} held-out characters of the corpus"
    )
    st.caption(
        f":material/school: **Weights: trained**: layer {params.layer} of `{TRAINED_MODEL}`, "
        "the family's model without position (plain causal multi-head attention, d_model = "
        f"128, 4 heads, 3 layers), a character model trained on Python's help topics, reading "
        f"{source}. Its layer's W^Q, W^K, W^V (the three row blocks of its qkv weight) and W^O "
        "are loaded into the multi-head module below with zero biases (the model has none), and "
        "x is the layer's LayerNorm of the residual stream entering it. The sidebar's k does "
        "not apply: no position scheme enters here."
    )
else:
    st.caption(
        f":material/casino: **Weights: random, untrained** (seed {params.seed}). The token "
        "vectors and W^Q, W^K, W^V, W^O with their biases are seeded random draws, not "
        "learned; the sidebar's weights switch loads a trained model's layer instead. The "
        "sidebar's k does not apply: no position scheme enters here."
    )
st.markdown(
    "Before any position scheme: Vaswani et al. (2017, section 3.2.2) run h attentions side "
    "by side, each on its own d_model / h channels of Q, K and V, and mix their outputs with "
    "W^O. A mask hides keys from the softmax. (Why each head divides q · k by √d_k is on the "
    "Attention basics page.)"
)

# ---- 1. multi-head attention ---------------------------------------------------------------
st.header("Multi-head attention, every step with its shape", divider="gray")
st.latex(
    r"\operatorname{MultiHead}(X) = \operatorname{Concat}(\mathrm{head}_0, \dots, "
    r"\mathrm{head}_{h-1})\,W^O,\qquad \mathrm{head}_m = \operatorname{softmax}\Bigl("
    r"\frac{Q_m K_m^\top}{\sqrt{d_k}} + M\Bigr) V_m"
)
mask_words = {
    "none": "no mask: every query sees every key",
    "causal": "look-ahead (causal) mask: query i sees keys j <= i",
    "padding": f"padding mask: the last {params.n_pad} key(s) are padding",
    "causal-padding": f"look-ahead mask and the last {params.n_pad} key(s) as padding",
}[params.mask]
st.caption(
    f"h = {h} heads, d_model = {d}, d_k = d_model / h = {c}; {mask_words}. "
    + scope_note(view, params.length, params.trained)
)
with st.expander("Every step and its shape", expanded=False):
    st.markdown(
        markdown_table(
            {
                "step": [name for name, _, _ in view.steps],
                "formula": [formula for _, formula, _ in view.steps],
                "shape": [shape_text(shape) for _, _, shape in view.steps],
            }
        )
    )

row_at = {"y_labels": labels, "x_title": "channel", "x_symbol": "channel"}
x_title = f"x = LN(residual entering layer {params.layer})" if params.trained else "x"
st.subheader("x to Q, K, V: d_model wide")
split_of = choice(
    "projection", ["Q", "K", "V"], "multihead_split",
    help="Which of Q, K, V the figures below draw, whole and split into heads.",
)  # fmt: skip
projected = {"Q": view.q, "K": view.k, "V": view.v}[split_of]
key_rows = {"y_title": "key j", "y_symbol": "j"} if split_of != "Q" else {}
qkv = [
    Panel(view.x, title=x_title, **row_at),
    Panel(projected, title=f"{split_of} = x W^{split_of}", **row_at, **key_rows),
]
qkv_scales = own_scales("diverging", qkv)
figure(
    panel_grid(qkv, qkv_scales, columns=2, cell_px=channel_cell_px(rows, d)),
    "multihead_qkv",
    latex=r"Q = X W^Q + b^Q,\quad K = X W^K + b^K,\quad V = X W^V + b^V,\qquad "
    r"W^Q, W^K, W^V \in \mathbb{R}^{d_{model} \times d_{model}}",
    shape=shapes[split_of.lower()],
    caption=f"Q is (1, queries, d_model) = {shape_text(shapes['q'])}; x, K and V are (1, keys, "
    f"d_model) = {shape_text(shapes['k'])}; rows 0-{rows - 1} drawn. "
    + own_scales_caption(qkv_scales),
)

st.subheader(f"Split into {h} heads: (b, h, n, d_model / h)")
split = {"Q": view.q_heads, "K": view.k_heads, "V": view.v_heads}[split_of]
head_at = {**row_at, "x_title": "channel in head"}
key_at = {"y_title": "key j", "y_symbol": "j"} if split_of != "Q" else {}
split_panels = [Panel(split[m], title=f"{split_of}_{m}", **head_at, **key_at) for m in range(h)]
split_scale = make_scale("diverging", [p.z for p in split_panels])
figure(
    panel_grid(
        split_panels, split_scale, columns=grid_columns(h, 2), cell_px=channel_cell_px(rows, c)
    ),
    "multihead_split",
    latex=rf"{split_of}_m = {split_of}_{{[\,:,\; m d_k\,:\,(m+1) d_k\,]}},\quad d_k = "
    rf"d_{{model}} / h = {c}",
    shape=shapes[f"{split_of.lower()}_heads"],
    caption=f"No new numbers: head m gets columns {c}m to {c}m + {c - 1} of {split_of} above "
    "(split_heads is a reshape and a transpose). " + split_scale.caption,
)

st.subheader("Each head's weights")
weight_at = {"x_labels": labels, "y_labels": labels}
weight_panels = [
    Panel(np.where(view.hidden, np.nan, view.weights[m]), title=f"head {m}", **weight_at)
    for m in range(h)
]
weight_scale = make_scale("weights", [p.z for p in weight_panels], n_keys=n)
per_row = 2 if rows > 16 and h <= 4 else 4  # the main picture: larger cells when few heads
figure(
    panel_grid(weight_panels, weight_scale, columns=grid_columns(h, per_row)),
    "multihead_weights",
    latex=r"\alpha^{(m)} = \operatorname{softmax}_j\Bigl(\frac{Q_m K_m^\top}{\sqrt{d_k}} + M"
    r"\Bigr),\qquad M_{ij} = -\infty \text{ where key } j \text{ is hidden, else } 0",
    shape=shapes["weights"],
    caption=("Hidden cells (the mask's 1s) are blank; their weight is exactly 0. "
             if params.mask != "none" else "No cell is hidden. ") + weight_scale.caption,
)  # fmt: skip
st.info(md_escape(drawn_note(view, unit)), icon=":material/lightbulb:")

st.subheader("Each head's output, concatenated, then W^O")
final = [
    Panel(view.concat, title="Concat(head_0, ..., head_h-1)", **row_at),
    Panel(view.output, title="output = Concat W^O + b^O", **row_at),
]
final_scales = own_scales("diverging", final)
figure(
    # one above the other: channel c of the output sits under channel c of the concatenation
    panel_grid(final, final_scales, columns=1, cell_px=channel_cell_px(rows, d)),
    "multihead_output",
    latex=r"\mathrm{head}_m = \alpha^{(m)} V_m,\qquad \operatorname{Concat}(\mathrm{head}_0, "
    r"\dots, \mathrm{head}_{h-1}) \in \mathbb{R}^{n \times d_{model}},\qquad "
    r"\operatorname{MultiHead} = \operatorname{Concat}(\dots)\, W^O + b^O",
    shape=shapes["output"],
    caption=f"Each head's output {shape_text(shapes['head_outputs'])}: row i is the average of "
    "that head's value rows, weighted by row i of its weights. The concatenation sets them side "
    f"by side (merge_heads): channels {c}m to {c}m + {c - 1} are head m's. Both panels are "
    f"(1, queries, d_model) = {shape_text(shapes['output'])}. " + own_scales_caption(final_scales),
)
st.info(md_escape(shares_note(view.head_share)), icon=":material/lightbulb:")
agreement_badge(
    "module = the definition, one head at a time (softmax(Q_m K_mᵀ / √d_k) V_m, concat, W^O)",
    view.definition_diff,
)
if view.model_diff is not None:
    agreement_badge(
        f"output = what `{TRAINED_MODEL}`'s own attention layer {params.layer} returns "
        "(torch's fused attention)",
        view.model_diff,
    )

# ---- 2. masks --------------------------------------------------------------------------------
st.header("Masks: padding and look-ahead, and what softmax does with them", divider="gray")
st.markdown(
    "Two masks, in the convention of the attention introduction and the TensorFlow tutorial "
    "it follows: **1 = hidden**, 0 = visible (the other pages draw the complement, *allowed*). "
    "The padding mask hides the keys whose token id is 0 from every query; the look-ahead mask "
    "hides the keys after each query; together, a cell is hidden if either hides it."
)
left, right = st.columns([3, 2])
with left:
    typed = text_box(
        "token ids (0 = padding)", "multihead_tokens", TOKENS_DEFAULT, 200,
        help="Whole numbers separated by spaces, one per token; 0 is the padding id.",
    )  # fmt: skip
with right:
    kind = choice("mask applied", list(MASK_KINDS), "multihead_mask", default="both")
try:
    tokens = parse_token_ids(typed)
except ValueError as error:
    st.warning(
        md_escape(f"token ids (0 = padding): {error}; showing {TOKENS_DEFAULT!r} instead"),
        icon=":material/warning:",
    )
    tokens = parse_token_ids(TOKENS_DEFAULT)
masks = mask_view(tokens, kind, params.seed)
n_ids = len(tokens)
st.markdown(  # inline code: a code block would load a syntax highlighter (1.8 MB) for 3 lines
    "  \n".join(
        f"`{line}`"  # integer ids and a printed tensor: no backtick to escape
        for line in (
            f"create_padding_mask([{list(tokens)}])  # (1, 1, 1, {n_ids})",
            " ".join(masks.padding_text.split()),
            f"create_look_ahead_mask({n_ids})  # ({n_ids}, {n_ids})",
        )
    )
)
ids = [str(t) for t in tokens]
pair_at = {"x_labels": ids, "y_labels": ids, "x_title": "key j (token id)",
           "y_title": "query i (token id)"}  # fmt: skip
broadcast = np.broadcast_to(masks.padding, (n_ids, n_ids))
mask_panels = [
    Panel(broadcast, title="padding (1, 1, 1, n), over every query", **pair_at,
          cell_text=broadcast.astype(int)),
    Panel(masks.look_ahead, title="look-ahead (n, n)", **pair_at,
          cell_text=masks.look_ahead.astype(int)),
    Panel(masks.mask, title=f"applied: {kind}", **pair_at, cell_text=masks.mask.astype(int)),
]  # fmt: skip
figure(
    panel_grid(mask_panels, make_scale("index", [p.z for p in mask_panels], zrange=(0, 1)),
               columns=3),
    "multihead_masks",
    latex=r"M^{\mathrm{pad}}_{ij} = [\,t_j = 0\,],\quad M^{\mathrm{look}}_{ij} = [\,j > i\,],"
    r"\quad M^{\mathrm{both}} = \max\bigl(M^{\mathrm{pad}}, M^{\mathrm{look}}\bigr)"
    r"\qquad (1 = \text{hidden})",
    shape=(n_ids, n_ids),
    caption="1 = hidden (yellow), 0 = visible (purple). The padding mask is one row, shape "
    f"(1, 1, 1, {n_ids}), drawn broadcast over the {n_ids} queries as the softmax sees it.",
)  # fmt: skip
hidden = masks.mask != 0
shown_logits = np.where(hidden, np.nan, masks.logits)
logit_scale = make_scale("diverging", [masks.logits])
weights_text = np.where(hidden, "0", np.char.mod("%.2f", masks.weights))
logit_panels = [
    Panel(masks.logits, title="logits e = q·k / √d_k", **pair_at,
          cell_text=np.char.mod("%.1f", masks.logits)),
    Panel(shown_logits, title=f"masked ({kind}): hidden = -∞", **pair_at,
          cell_text=np.where(hidden, "", np.char.mod("%.1f", masks.logits))),
]  # fmt: skip
weights_panel = Panel(masks.weights, title="weights α", **pair_at, cell_text=weights_text)
weight_scale_m = make_scale("weights", [masks.weights], n_keys=n_ids)
figure(
    panel_grid([*logit_panels, weights_panel], [logit_scale, logit_scale, weight_scale_m],
               columns=3),
    "multihead_mask_weights",
    latex=r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{l:\, M_{il} = 0} \exp e_{il}}"
    r"\ \text{ where } M_{ij} = 0,\qquad \alpha_{ij} = 0 \ \text{ where } M_{ij} = 1",
    shape=(1, 1, n_ids, n_ids),
    caption=f"Seeded random q, k (d_k = 16, seed {params.seed}) give the logits. Masked "
    "logits: hidden cells blank (-∞ before the softmax, not -1e9). Weights: every value "
    "drawn, hidden cells exactly 0 (written 0); each row renormalised over the keys it sees. "
    + own_scales_caption([logit_scale, logit_scale, weight_scale_m]),
)  # fmt: skip
st.info(md_escape(mask_note(masks.mask, masks.weights)), icon=":material/lightbulb:")
sees = ~hidden
row_sums = masks.weights.sum(axis=1)
agreement_badge(
    "weights on hidden cells are exactly 0", float(np.abs(masks.weights[hidden]).max(initial=0)),
    tolerance=0.0,
)  # fmt: skip
agreement_badge(
    "each row that sees a key sums to 1",
    float(np.abs(row_sums[sees.any(axis=1)] - 1).max(initial=0)),
)

# ---- download --------------------------------------------------------------------------------
positions = position_labels(params, 0, cols)
query_rows = positions[:rows]
channels = {"corner": "position \\ channel"}
pairs = {"rows": query_rows, "cols": positions, "corner": "query i \\ key j"}
token_pairs = {"rows": ids, "cols": ids, "corner": "query token id \\ key token id"}
download_view(
    "multihead",
    params,
    {
        "x": Labelled(view.x, "the input rows drawn", rows=query_rows, **channels),
        "q": Labelled(view.q, "Q = x W^Q + b^Q", rows=query_rows, **channels),
        "k": Labelled(view.k, "K = x W^K + b^K", rows=positions, **channels),
        "v": Labelled(view.v, "V = x W^V + b^V", rows=positions, **channels),
        "q_heads": Labelled(
            view.q_heads, "Q split into heads", rows=query_rows, split="head", **channels
        ),
        "k_heads": Labelled(
            view.k_heads, "K split into heads", rows=positions, split="head", **channels
        ),
        "v_heads": Labelled(
            view.v_heads, "V split into heads", rows=positions, split="head", **channels
        ),
        "weights": Labelled(
            np.where(view.hidden, np.nan, view.weights),
            "alpha per head, hidden cells empty",
            split="head",
            **pairs,
        ),
        "head_outputs": Labelled(
            view.head_outputs, "head_m = alpha V_m", rows=query_rows, split="head", **channels
        ),
        "concat": Labelled(view.concat, "Concat(heads)", rows=query_rows, **channels),
        "output": Labelled(view.output, "Concat W^O + b^O", rows=query_rows, **channels),
        "mask_padding": Labelled(
            masks.padding,
            "1 = hidden key (token id 0)",
            cols=ids,
            rows=["all queries"],
            corner="\\ key token id",
        ),
        "mask_look_ahead": Labelled(masks.look_ahead, "1 = hidden (j > i)", **token_pairs),
        "mask_applied": Labelled(masks.mask, f"{kind}, 1 = hidden", **token_pairs),
        "mask_logits": Labelled(masks.logits, "q.k / sqrt(d_k), before the mask", **token_pairs),
        "mask_weights": Labelled(
            masks.weights, "softmax over visible keys, 0 where hidden", **token_pairs
        ),
    },  # fmt: skip
    extra={
        "multihead_split": split_of,
        "multihead_mask": kind,
        "multihead_tokens": " ".join(ids),
        **(
            {"_model": TRAINED_MODEL, "_characters": sequence(params)[:rows]}
            if params.trained
            else {}
        ),
    },  # fmt: skip
)
