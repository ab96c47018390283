"""Relative logits: every head's relative term, one head in detail, four methods that agree,
and tensor2tensor's six steps drawn as the tensors they are."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import agreement_badge, figure, inset, source_caption, window_caption
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_part, download_view
from explorer.frame.failures import fragment
from explorer.frame.widgets import choice, head_picker, shared_scale_picker
from explorer.pair.card import pair_card
from explorer.pair.controls import current_pair, pair_schemes
from explorer.stories.shaw import logits_figures, text
from explorer.stories.shaw import logits_views as views
from explorer.stories.shaw.logits_figures import METHODS, STEP_NAMES

params = current_params()
pair_schemes("shaw")  # the sidebar gives the pair's row of Shaw's table
heads = params.heads

st.title("Relative logits")
source_caption(params)
st.markdown(text.LOGITS_INTRO)
formulas.latex(rf"{formulas.LOGIT} = {formulas.CONTENT_TERM} + {formulas.RELATIVE_TERM}")
formulas.latex(formulas.A_K)
window_caption(params)
if params.windowed:
    st.caption(text.logits_window(params))
view = views.logits_view(params)

st.subheader(f"Every head's relative term ({heads} heads)")
grid = logits_figures.relative_heads(params, view)
figure(grid.fig, "logits_heads", shape=grid.shape, caption=grid.caption)

st.info(text.relative_note(params), icon=":material/lightbulb:")
head = head_picker(heads, "logits_head")
st.subheader(f"Head {head}: content and relative term")
shared = shared_scale_picker("logits_scale")
terms = logits_figures.terms_figure(params, view, head, shared)
figure(
    terms.fig,
    "logits_head",
    latex=rf"{formulas.CONTENT_TERM} \qquad {formulas.RELATIVE_TERM}",
    shape=terms.shape,
    caption=terms.caption,
)
inset(terms.panels, terms.scale, "logits_zoom")
pair_card(params, current_pair(), head, with_output=False)

st.subheader("Every method, one relative term")
st.markdown(text.METHODS_NOTE)
with st.container(horizontal=True):
    for method, max_diff in view.max_diff.items():
        agreement_badge(text.badge_label(params, method, view.compared[method]), max_diff)
block = text.definition_block(params, view.definition.shape[1])
if block:
    st.caption(block)


@fragment
def one_method() -> None:
    """One method's relative term for the picked head (reruns only this part)."""
    method = choice("method", list(METHODS), "logits_method")
    chart = logits_figures.method_figure(params, view, head, method)
    figure(
        chart.fig, "relative_method", latex=chart.latex, shape=chart.shape, caption=chart.caption
    )


one_method()

st.subheader("tensor2tensor's six steps, as the tensors they are")
steps = views.matmul_steps(params)
st.markdown(text.t2t_intro(params, queries=steps[0].shape[-2]))  # Q: (b, h, n_q, d)


@fragment
def one_step() -> None:
    """One step of the six, its tensor as a grid of slices (reruns only this part)."""
    name = choice("step", [s.name for s in steps], "t2t_step", format_func=STEP_NAMES.get)
    step = next(s for s in steps if s.name == name)
    chart = logits_figures.step_figure(step)
    figure(chart.fig, f"t2t_{name}", shape=chart.shape, caption=chart.caption)
    download_part("t2t_step", logits_figures.step_arrays(params, step))


one_step()

download_view(
    "logits", params, logits_figures.logits_arrays(params, view), extra={"logits_head": head}
)
