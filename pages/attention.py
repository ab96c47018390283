"""Attention: every head's weights side by side, one head in detail, the tokens as lines."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import (
    agreement_badge,
    figure,
    inset,
    plotly_chart,
    png_config,
    weights_caption,
    window_caption,
)
from explorer.figures.heatmaps import (
    IMAGE_SIDE,
    Panel,
    grid_columns,
    make_scale,
    panel_grid,
    pooled_note,
)
from explorer.figures.notes import focus_note
from explorer.figures.token_view import (
    LINES_PER_HEAD,
    TOKENS_MAX,
    WEIGHT_MIN,
    focus_from_click,
    parse_focus,
    token_view,
)
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, head_picker, md_escape
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair
from explorer.stories.shaw import views
from explorer.weights.example import axis_labels

params = current_params()
pair = current_pair()
n, d, heads = params.length, params.head_dim, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
size = stop - start
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}

st.title("Attention")
weights_caption(params)
st.markdown(
    "Shaw et al. 2018, eqs. 2-4: the logit, the weights over the keys the mask allows, "
    "and the output, each with a relative term."
)
for formula in (formulas.LOGIT, formulas.WEIGHT, formulas.OUTPUT):
    st.latex(formula)
mask_text = {
    "none": "no mask: every query sees every key",
    "causal": "causal mask: query i sees keys j <= i",
    "padding": f"padding mask: the last {params.n_pad} key(s) are padding",
    "causal-padding": f"causal mask and the last {params.n_pad} key(s) as padding",
}[params.mask]
st.caption(f"{mask_text}. Masked cells are blank (grey). d_z = {d}.")
window_caption(params)
if params.windowed:
    st.caption(
        f"Each of the window's query rows is computed against all {n} keys (softmax needs "
        "them all): rows are independent, so the window is exact."
    )
if params.n_pad == n:
    st.warning("Every key is padding: all weights and outputs are zero (no key to attend to).")

weights = views.attention_weights_heads(params)  # (h, W, W)
scale = make_scale("weights", list(weights), n_keys=n)
st.subheader(f"Every head's weights α ({heads} heads)")
grid_side = 256 if size > 256 else 512
grid = [Panel(weights[h], title=f"head {h}", **at) for h in range(heads)]
figure(
    panel_grid(grid, scale, columns=grid_columns(heads), image_side=grid_side),
    "attention_heads",
    shape=(1, heads, n, n),
    caption=scale.caption + " " + pooled_note(grid, grid_side),
)

head = head_picker(heads, "attention_head")
view = views.attention_view(params, head)
st.subheader(f"Head {head}")
detail = [
    Panel(view.weights, title=f"weights α, head {head}", **at),
    Panel(view.masked_logits, title=f"logits e, head {head}", **at),
]
logit_scale = make_scale("diverging", [view.masked_logits])
c1, c2 = st.columns(2)
with c1:
    figure(panel_grid(detail[:1], scale, max_width=480), "attention_weights", shape=(n, n))
with c2:
    if size <= IMAGE_SIDE:
        figure(
            panel_grid(detail[1:], logit_scale, max_width=480),
            "attention_logits",
            shape=(n, n),
            caption=logit_scale.caption.replace("; one scale for every panel", ""),
        )
    else:  # the weights are an image: their exact values here, the logits further down
        inset(detail[:1], scale, "attention_zoom")
pair_card(params, pair, head)
st.info(
    focus_note(view.weights, head) + (" Read on the window." if params.windowed else ""),
    icon=":material/lightbulb:",
)
if params.windowed:
    st.caption(
        f"The weights drawn are the window's keys only: each row puts between "
        f"{view.weight_inside[0]:.1%} and {view.weight_inside[1]:.1%} of its weight on them "
        "(100% over all keys)."
    )


def focus_token() -> None:
    """A click on a token keeps only its lines; a click that clears the selection (the same
    token again, or a double click) shows them all."""
    event = st.session_state.get("chart_attention_tokens")
    points = event["selection"]["points"] if event else []
    picked = focus_from_click(points)
    if picked is not None:
        st.session_state["token_focus"] = picked
    elif not points:
        st.session_state["token_focus"] = "all"


if params.tokens:
    st.subheader("The tokens, as BertViz draws them")
    shown = range(start, start + min(TOKENS_MAX, size))
    names = {"all": "every token"} | {
        f"{side}{p}": f"{word} {p}: {labels[p]}"  # the axes' labels: whitespace made visible
        for side, word, labels in (("q", "query", rows), ("k", "key", cols))
        for p in shown
    }
    with st.columns([1, 2])[0]:  # a third of the width: its options are short
        focus = choice(
            "lines of",
            list(names),
            "token_focus",
            kind="select",
            format_func=names.get,
            help="Keep only one token's lines, as a query (its weights over the keys) or as a key "
            "(the queries that read it). Clicking a token in the figure picks it; clicking it "
            "again, or a double click, shows every token.",
        )
    tokens_view = token_view(
        weights,
        params.tokens,
        offset=start,
        focus=parse_focus(focus),
        pair=None if pair is None else (pair.i, pair.j),
    )
    plotly_chart(
        tokens_view.figure,
        key="chart_attention_tokens",
        width="content",
        on_select=focus_token,
        selection_mode="points",
        config=png_config("attention_tokens"),
    )
    left_out = []
    if tokens_view.tokens_shown < tokens_view.tokens_total:
        left_out.append(
            f"the first {tokens_view.tokens_shown} of {tokens_view.tokens_total} tokens"
        )
    left_out.append(
        f"lines for weights of at least {WEIGHT_MIN}, at most {LINES_PER_HEAD} per "
        f"head ({tokens_view.lines_shown} of {tokens_view.lines_total} drawn)"
    )
    st.caption(
        md_escape(
            "Query tokens left, key tokens right; a line's width and opacity grow with α, one "
            "colour per head (click a head in the legend to hide it, a token to keep only its "
            "lines)"
            + (f"; the black line is the picked pair ({pair.i}, {pair.j})" if pair else "")
            + ". Drawn: "
            + "; ".join(left_out)
            + "."
        )
    )
    repeated = sorted({t for t in params.tokens if params.tokens.count(t) > 1})
    if repeated:
        st.info(
            md_escape(
                "Repeated tokens (" + ", ".join(repeated[:8]) + ") have identical content, so "
                "identical queries, keys and values: only the relative term tells the copies "
                "apart."
            ),
            icon=":material/lightbulb:",
        )


@fragment
def more_of_the_head() -> None:
    """The rest of one head's computation, one picture at a time (reruns only this part)."""
    what = choice(
        f"more of head {head}",
        ["the output, split", "the logits", "the mask"],
        "attention_more",
    )
    panels: list[Panel]
    if what == "the output, split":
        out_at = {"row_offset": start, "y_labels": rows, "x_title": "channel", "x_symbol": "c"}
        panels = [
            Panel(view.content_output, title="content part", **out_at),
            Panel(view.relative_output, title="relative part", **out_at),
            Panel(view.output, title="output z", **out_at),
        ]
        latex = rf"{formulas.OUTPUT} = {formulas.CONTENT_OUTPUT} + {formulas.RELATIVE_OUTPUT}"
        key, shape = "attention_output", (n, d)
        panel_scale = make_scale("diverging", [p.z for p in panels])
    elif what == "the logits":
        panels = [
            Panel(view.content_logits * view.scale, title="content term", **at),
            Panel(view.relative_logits * view.scale, title="relative term", **at),
            Panel(view.masked_logits, title="e = their sum, masked", **at),
        ]
        latex = rf"e_{{ij}} = {formulas.CONTENT_TERM} + {formulas.RELATIVE_TERM}"
        key, shape = "attention_terms", (n, n)
        panel_scale = make_scale("diverging", [p.z for p in panels])
    else:
        panels = [Panel(view.allowed, title="allowed (1 = may attend)", **at)]
        latex, key, shape = "", "attention_mask", (n, n)
        panel_scale = make_scale("index", [view.allowed], zrange=(0.0, 1.0))
    figure(
        panel_grid(panels, panel_scale, columns=len(panels)),
        key,
        latex=latex,
        shape=shape,
        caption=panel_scale.caption,
    )
    if what == "the output, split":
        agreement_badge(
            "z = content part + relative part",
            float(abs(view.output - view.content_output - view.relative_output).max()),
        )


more_of_the_head()

labels = position_labels(params, start, stop)
pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
download_view(
    "attention",
    params,
    {
        "weights": Labelled(weights, "alpha_ij per head, on the window", **pairs, split="head"),
        "logits": Labelled(view.masked_logits, f"e_ij of head {head}, masked cells empty", **pairs),
        "output": Labelled(
            view.output, f"z_i of head {head}", rows=labels, corner="query i \\ channel"
        ),
        "content_output": Labelled(
            view.content_output, "sum_j alpha_ij v_j", rows=labels, corner="query i \\ channel"
        ),
        "relative_output": Labelled(
            view.relative_output, "sum_j alpha_ij a^V_ij", rows=labels, corner="query i \\ channel"
        ),
    },
    extra={"attention_head": head},
)
