"""Relative logits: every head's relative term, one head in detail, four methods that agree,
and tensor2tensor's six steps drawn as the tensors they are."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import agreement_badge, figure, inset, weights_caption, window_caption
from explorer.figures.heatmaps import (
    Panel,
    grid_columns,
    make_scale,
    own_scales,
    own_scales_caption,
    panel_grid,
    pooled_note,
)
from explorer.figures.notes import band_note, clip_note
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, head_picker, shared_scale_picker
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair
from explorer.stories.shaw import views
from explorer.weights.example import axis_labels

params = current_params()
n, d, heads = params.length, params.head_dim, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
size = stop - start
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}

st.title("Relative logits")
weights_caption(params)
st.markdown(
    "The logit of query i for key j has a content term and a relative term (Shaw et al. 2018, "
    "eq. 4). Every chart shows a term as it enters the softmax, the factor 1/√d_z included "
    "(as on every page): the queries are scaled first, as tensor2tensor does."
)
st.latex(rf"{formulas.LOGIT} = {formulas.CONTENT_TERM} + {formulas.RELATIVE_TERM}")
st.latex(formulas.A_K)
window_caption(params)
if params.windowed:
    st.caption(
        "The relative term depends on j - i only, so on the window it equals the relative term "
        f"of the window's {size} queries over a sequence of {size}: every method below runs on "
        "that block."
    )
view = views.logits_view(params)

st.subheader(f"Every head's relative term ({heads} heads)")
rel_scale = make_scale("diverging", list(view.relative))
grid_side = 256 if size > 256 else 512
grid = [Panel(view.relative[h], title=f"head {h}", **at) for h in range(heads)]
figure(
    panel_grid(
        grid,
        rel_scale,
        columns=grid_columns(heads),
        image_side=grid_side,
    ),
    "logits_heads",
    shape=(1, heads, n, n),
    caption=rel_scale.caption + " " + pooled_note(grid, grid_side),
)

st.info(
    band_note(n, params.k) + (" " + clip_note(n, 0) if params.k == 0 else ""),
    icon=":material/lightbulb:",
)
head = head_picker(heads, "logits_head")
st.subheader(f"Head {head}: content and relative term")
detail = [
    Panel(view.content[head], title=f"content term, head {head}", **at),
    Panel(view.relative[head], title=f"relative term, head {head}", **at),
]
shared = shared_scale_picker("logits_scale")
detail_scale = make_scale("diverging", [p.z for p in detail]) if shared else None
detail_scales = detail_scale or own_scales("diverging", detail)
figure(
    panel_grid(detail, detail_scales, columns=2),
    "logits_head",
    latex=rf"{formulas.CONTENT_TERM} \qquad {formulas.RELATIVE_TERM}",
    shape=(n, n),
    caption=(
        detail_scale.caption + " The relative term is small beside the content term."
        if detail_scale
        else own_scales_caption(detail_scales)
    ),
)
inset(detail, detail_scales, "logits_zoom")
pair_card(params, current_pair(), head, with_output=False)

st.subheader("Every method, one relative term")
badges = st.container(horizontal=True)
with badges:
    for method, max_diff in view.max_diff.items():
        agreement_badge(f"{method} vs definition", max_diff)
m_loop, m_mat = view.definition.shape[1], view.einsum.shape[1]
if m_loop < size:
    st.caption(
        f"The definition is a Python loop over pairs: it runs on the window's top-left {m_loop} "
        f"x {m_loop} block ({m_loop * m_loop} pairs), and the badges compare that block, every "
        "head. The relative term depends on j - i only, so the block is exactly that corner."
    )

METHODS = {
    "definition": (
        "loop over (i, j)",
        r"q_i \cdot w^K_{\operatorname{clip}(j-i,\,k)} / \sqrt{d_z}",
    ),
    "einsum": ("einsum over the gathered a^K", r"\mathrm{einsum}(bhid,\,ijd \to bhij)"),
    "matmul": ("transpose, reshape, matmul", r"\text{tensor2tensor's relative attention inner}"),
}
relative_scale = make_scale("diverging", [view.relative[head]])


@fragment
def one_method() -> None:
    """One method's relative term for the picked head (reruns only this part)."""
    method = choice("method", list(METHODS), "logits_method")
    values = getattr(view, method)[head]
    side = values.shape[0]
    block = "" if side == size else f"the top-left {side} x {side} block of the window"
    title, latex = METHODS[method]
    figure(
        panel_grid([Panel(values, title=f"{title}, head {head}", **at)], relative_scale),
        "relative_method",
        latex=latex,
        shape=(1, heads, side, side),
        caption=", ".join(
            p for p in (block, "on the colour scale of the relative term's own values") if p
        ),
    )


one_method()

st.subheader("tensor2tensor's six steps, as the tensors they are")
st.markdown(
    "A tensor of shape (A, B, R, C) is drawn as a grid of its R x C slices, one per (a, b). "
    "The matmul is batched over queries: each query i multiplies its b·h rows by its own "
    "a^K_i, of shape (n_k, d). The queries come in scaled by 1/√d_z, so the last step is the "
    "relative term drawn above."
    + (f" Here on the window's block: n_q = n_k = {size}." if params.windowed else "")
)
steps = views.matmul_steps(params)
STEP_NAMES = {
    "q": "1 queries",
    "a_k": "a^K gathered",
    "q_t": "2 transposed",
    "q_t_r": "3 reshaped",
    "product": "4 matmul",
    "product_r": "5 reshaped",
    "result": "6 transposed back",
}


@fragment
def one_step() -> None:
    """One step of the six, its tensor as a grid of slices (reruns only this part)."""
    names = [s.name for s in steps]
    name = choice("step", names, "t2t_step", format_func=STEP_NAMES.get)
    step = next(s for s in steps if s.name == name)
    lead = step.axes[:-2]
    panels = [
        Panel(
            z,
            title=", ".join(f"{a} = {v}" for a, v in zip(lead, index, strict=True)),
            x_title=step.axes[-1],
            y_title=step.axes[-2],
            x_symbol=step.axes[-1],
            y_symbol=step.axes[-2],
        )
        for z, index in zip(step.slices, step.index, strict=True)
    ]
    scale = make_scale("diverging", [p.z for p in panels])
    shown = len(panels)
    figure(
        panel_grid(panels, scale, columns=grid_columns(shown), image_side=256),
        f"t2t_{name}",
        shape=step.shape,
        caption=f"{step.formula}. Axes ({', '.join(step.axes)}); "
        + (
            f"the first {shown} of {step.slice_count} slices."
            if shown < step.slice_count
            else f"all {shown} slice(s)."
        )
        + " "
        + scale.caption
        + " "
        + pooled_note(panels, 256),
    )


one_step()

labels = position_labels(params, start, stop)
pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
download_view(
    "logits",
    params,
    {
        "content_term": Labelled(
            view.content, "q_i . k_j / sqrt(d_z) per head", **pairs, split="head"
        ),
        "relative_term": Labelled(
            view.relative, "q_i . a^K_ij / sqrt(d_z) per head", **pairs, split="head"
        ),
    },
    extra={"logits_head": head},
)
