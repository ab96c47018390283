"""Check your implementation: a visitor's own code, run on their machine on this page's inputs;
its uploaded output beside the definition, every differing cell outlined, the verdict in words,
the sidebar's picked pair outlined with its numbers. Nothing uploaded is run: the page reads
numbers only."""

from pathlib import Path

import streamlit as st

from explorer.figures.draw import figure
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.navigation import PAGES
from explorer.frame.widgets import choice, head_picker, md_escape
from explorer.pair.controls import current_pair
from explorer.stories.check import controls, figures, text, views
from explorer.stories.check.inputs import length
from explorer.stories.check.pair import PairPlace, mark_pair, pair_place, values_text, where_text
from explorer.stories.check.upload import MAX_MB
from explorer.weights.source import no_model_caption, source_of
from relpos_core.check import KINDS

HERE = Path(__file__).resolve().parent  # page_link by absolute path: any entry script works
params = current_params()
source = source_of(params)
n = length(params)

st.title("Check your implementation")
st.markdown(text.INTRO)
kind = choice("what you implemented", list(KINDS), "check_kind", default=next(iter(KINDS)))
st.markdown(f"**The convention.** {md_escape(KINDS[kind].convention)}")
own = controls.own_value(kind)
reference = views.reference(kind, params, own)
st.caption(source.caption() if reference.inputs.from_view else no_model_caption(text.NO_TENSORS))
inputs_name = f"check_{kind}_inputs.npz"
st.caption(text.inputs_caption(reference.inputs, n, text.source_words(source)))
if mask_words := text.mask_note(kind, params.mask, params.causal, params.n_pad):
    st.caption(md_escape(mask_words))

# ---- 1. run your code on these inputs ---------------------------------------------------------
st.header("1 · Run yours on these inputs", divider="gray")
if reference.inputs.arrays:
    st.download_button(
        "Download the inputs (.npz)",
        views.inputs_file(reference),
        file_name=inputs_name,
        mime="application/octet-stream",
        key="check_inputs",
        icon=":material/download:",
    )
st.code(text.run_code(reference.inputs, inputs_name), language="python", wrap_lines=True)

# ---- 2. upload what it returned ---------------------------------------------------------------
st.header("2 · Upload what it returned", divider="gray")
# no type=: Streamlit's own check of the name (a NUL, another extension) fails before the page
# runs, on its error page; read_upload refuses those in words
upload = st.file_uploader(
    text.UPLOAD_LABEL,
    key=f"check_upload_{kind}",  # one per kind: a file for one kind is not judged as another's
    help=text.UPLOAD_HELP,
    max_upload_size=MAX_MB,
)
count = figures.head_count(reference.output)
head = head_picker(count, "check_head") if count > 1 else 0
verdict = None
if upload is not None:
    memo = st.session_state.setdefault("_check_upload_verdict", {})
    verdict = views.remembered_verdict(
        memo, upload.file_id, kind, params, upload.name, upload.getvalue(), own
    )
    if isinstance(verdict, str):  # the file could not be read
        st.warning(md_escape(verdict), icon=":material/report:")
        verdict = None
place = pair_place(kind, reference.inputs.case_dict, reference.output, current_pair())

if verdict is not None and verdict.got is None:  # cannot: its shape, NaN
    st.warning(md_escape(verdict.text), icon=":material/report:")
    verdict = None

page = next(p for p in PAGES if p.file == KINDS[kind].page)
if verdict is None:
    fig, caption = figures.reference_figure(kind, reference.output, reference.compared, head)
    caption = text.reference_caption(reference.convention, head, count) + " " + caption
    if isinstance(place, PairPlace):
        mark_pair(fig, kind, place)
    figure(fig, "check_reference", shape=reference.output.shape, caption=caption)
else:
    note = text.verdict_note(md_escape(verdict.text), page.title)
    if verdict.ok:
        st.success(note, icon=":material/check_circle:")
    else:
        st.warning(note, icon=":material/cancel:")
    fig, caption = figures.comparison_figure(
        kind, verdict.expected, verdict.got, verdict.differing, reference.compared, head
    )
    if isinstance(place, PairPlace):
        mark_pair(fig, kind, place)
    figure(fig, "check_comparison", shape=(3, *reference.output.shape), caption=caption)
if isinstance(place, PairPlace):  # the definition in the convention the upload follows
    want, got = (reference.output, None) if verdict is None else (verdict.expected, verdict.got)
    exact = KINDS[kind].exact
    numbers = values_text(kind, place, head, want, reference.compared, got, exact)
    st.caption(md_escape(f"{where_text(kind, place)} {numbers}"))
elif isinstance(place, str):
    st.caption(md_escape(place))
st.page_link(HERE / page.file, label=f"How this step works: {page.title}", icon=page.icon)
st.info(text.COMMAND.format(kind=kind), icon=":material/terminal:")

download_view(
    "check",
    params,
    {
        "definition": reference.output,
        **({"yours": verdict.got} if verdict is not None else {}),
    },
    extra={"check_kind": kind},
)
