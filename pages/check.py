"""Check your implementation: a visitor's own code, run on their machine on this page's inputs;
its uploaded output beside the definition, the differing cells outlined, the verdict in words.
Nothing uploaded is run: the page reads numbers only."""

from pathlib import Path

import streamlit as st

from explorer.figures.draw import figure
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.navigation import PAGES
from explorer.frame.widgets import choice, head_picker, md_escape
from explorer.stories.check import controls, figures, text, views
from explorer.stories.check.inputs import length
from explorer.stories.check.upload import FORMATS, MAX_MB, UploadProblem
from explorer.weights.source import no_model_caption, source_of
from relpos_core.check import KINDS

HERE = Path(__file__).resolve().parent  # page_link by absolute path: any entry script works
params = current_params()
source = source_of(params)
n = length(params)

st.title("Check your implementation")
st.markdown(text.INTRO)
kind = choice("what you implemented", list(KINDS), "check_kind", default="shaw")
st.markdown(f"**The convention.** {md_escape(KINDS[kind].convention)}")
heads = controls.alibi_heads(kind)
reference = views.reference(kind, params, heads)
st.caption(source.caption() if reference.inputs.from_view else no_model_caption(text.NO_TENSORS))
inputs_name = f"check_{kind}_inputs.npz"
st.caption(text.inputs_caption(reference.inputs, n, text.source_words(source)))

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
upload = st.file_uploader(
    "your output",
    type=list(FORMATS),
    key=f"check_upload_{kind}",  # one per kind: a file for one kind is not judged as another's
    help=text.UPLOAD_HELP,
    max_upload_size=MAX_MB,
)
count = figures.head_count(reference.output)
head = head_picker(count, "check_head") if count > 1 else 0
verdict = None
if upload is not None:
    try:
        verdict = views.verdict_on_upload(kind, params, upload.name, upload.getvalue(), heads)
    except UploadProblem as problem:
        st.warning(md_escape(str(problem)), icon=":material/report:")

page = next(p for p in PAGES if p.file == KINDS[kind].page)
if verdict is None:
    fig, caption = figures.reference_figure(kind, reference.output, reference.compared, head)
    caption = text.reference_caption(reference.convention, head, count) + " " + caption
    figure(fig, "check_reference", shape=reference.output.shape, caption=caption)
elif verdict.got is None:
    st.warning(md_escape(verdict.text), icon=":material/report:")  # cannot: shape or NaN
else:
    note = text.verdict_note(md_escape(verdict.text), page.title)
    if verdict.ok:
        st.success(note, icon=":material/check_circle:")
    else:
        st.warning(note, icon=":material/cancel:")
    fig, caption = figures.comparison_figure(
        kind, verdict.expected, verdict.got, verdict.differing, reference.compared, head
    )
    figure(fig, "check_comparison", shape=(3, *reference.output.shape), caption=caption)
st.page_link(HERE / page.file, label=f"How this step works: {page.title}", icon=page.icon)
st.info(text.COMMAND.format(kind=kind), icon=":material/terminal:")

download_view(
    "check",
    params,
    {
        "definition": reference.output,
        **({"yours": verdict.got} if verdict is not None and verdict.got is not None else {}),
    },
    extra={"check_kind": kind},
)
