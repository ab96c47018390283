"""Compare schemes: any two position schemes on the same q, k, v, their attention weights side
by side and the difference."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import figure, source_caption, window_caption
from explorer.figures.notes import read_on_window
from explorer.frame.controls import current_params
from explorer.frame.downloads import download_view
from explorer.frame.widgets import head_picker, md_escape
from explorer.pair.card import pair_note
from explorer.pair.controls import pair_schemes
from explorer.stories.family import exports, panels, text, views
from explorer.stories.family.controls import scheme_picker, scheme_settings
from explorer.weights.source import source_of
from relpos_core.schemes.catalogue import scheme_entry

params = current_params()
source = source_of(params)
n, heads = params.length, params.heads
start, stop = params.window

st.title("Compare schemes")
source_caption(params, scheme="each")
intro = st.empty()  # written once both schemes are picked
left, right = st.columns(2)
with left:
    a = scheme_picker("scheme A", "compare_a")
with right:
    b = scheme_picker("scheme B", "compare_b")
intro.markdown(text.compare_intro(source, (a, b)))
head = head_picker(heads, "compare_head")  # a row of its own: eight heads fit
settings = scheme_settings(params, compare_a=a, compare_b=b)
for column, name, letter in zip(st.columns(2), (a, b), "AB", strict=True):
    with column:
        st.markdown(f"**{letter}: {scheme_entry(name).title}**, adds to the logit")
        formulas.latex(scheme_entry(name).position_formula)
        st.caption(md_escape(settings.config(name, params).text or "no settings"))

missing = views.unavailable_schemes(params, settings)
for name in dict.fromkeys((a, b)):
    if name in missing:
        st.warning(
            md_escape(f"{scheme_entry(name).title} cannot run on this view: {missing[name]}."),
            icon=":material/warning:",
        )
running = {letter: name for letter, name in (("A", a), ("B", b)) if name not in missing}
pair_schemes(*dict.fromkeys(running.values()))  # each scheme drawn or refused on its own
if running:
    window_caption(params)


on_window = read_on_window(params)
if not running:  # neither can run here: the warnings above say why; the settings still download
    arrays = {}
elif len(running) == 1:  # the other scheme cannot run: this one alone, and no difference
    ((letter, name),) = running.items()
    weights = views.scheme_weights(params, settings.config(name, params))
    alone = panels.one_scheme_weights(params, weights, letter, name, head)
    figure(alone.figure, "compare_weights", shape=(n, n), caption=alone.caption)
    pair_note(f"{letter}'s weights", range(start, stop), range(start, stop))
    st.info(
        md_escape(text.scheme_note(letter, name, weights, head, source)) + on_window,
        icon=":material/lightbulb:",
    )
    st.caption(md_escape(text.alone_note(letter, "B" if letter == "A" else "A")))
    arrays = exports.one_scheme_arrays(params, letter, name, weights)
else:
    both = views.compare_view(params, settings.config(a, params), settings.config(b, params))
    side_by_side = panels.compare_weights(params, both, a, b, head)
    figure(side_by_side.figure, "compare_weights", shape=(2, n, n), caption=side_by_side.caption)
    pair_note("both schemes' weights and their difference", range(start, stop), range(start, stop))
    st.info(
        md_escape(
            text.scheme_note("A", a, both.weights_a, head, source)
            + " "
            + text.scheme_note("B", b, both.weights_b, head, source)
        )
        + on_window,
        icon=":material/lightbulb:",
    )
    difference = panels.compare_difference(params, both, head)
    c1, c2 = st.columns([3, 2])
    with c1:
        figure(difference.figure, "compare_diff", shape=(n, n), caption=difference.caption)
    with c2:
        rows_text = f"query rows {start}-{stop - 1}, " if params.windowed else ""
        st.metric(
            f"largest |α_B - α_A|, head {head}",
            f"{both.weight_diff[head]:.3g}",
            help=f"Over {rows_text}every one of the {n} keys.",
        )
        st.metric(f"largest |z_B - z_A|, head {head}", f"{both.output_diff[head]:.3g}")
        st.caption(
            md_escape(
                "Over " + (rows_text or "every query, ") + "every key and channel. "
                "z includes a value term where the scheme has one (Shaw; Music with values)."
            )
        )
    arrays = exports.compare_arrays(params, a, b, both)

download_view(
    "compare",
    params,
    arrays,
    extra={
        "compare_a": a,
        "compare_b": b,
        "compare_head": head,
        **exports.changed_settings(settings, "scheme", "built_for"),
        **exports.compare_models(source, a, b),
    },
)
