"""Compare schemes: any two position schemes on the same q, k, v, their attention weights side
by side and the difference."""

import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import figure, weights_caption, window_caption
from explorer.figures.heatmaps import Panel, make_scale, panel_grid, pooled_note
from explorer.figures.notes import focus_note
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.widgets import head_picker, md_escape
from explorer.stories.family import views
from explorer.stories.family.controls import DEFAULTS, scheme_picker, scheme_settings
from explorer.weights.example import axis_labels
from explorer.weights.schemes import SCHEME_LABELS
from explorer.weights.trained import model_for
from relpos_core.schemes import SCHEMES

params = current_params()
n, heads = params.length, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}
LABELS = SCHEME_LABELS

st.title("Compare schemes")
weights_caption(params, scheme="each")
st.markdown(
    "Two trained models of the family on the same characters. They are identical but for how "
    "position enters (same data, seed and steps), and each draws its own queries, keys and "
    "values: every difference comes from position, directly in the logit and through what "
    "each model learned around it."
    if params.trained
    else "Two position schemes on the same queries, keys and values (the sidebar's): the "
    "content term q_i · k_j / √d is the same, so every difference in the weights comes from "
    "what each scheme adds for position."
)
left, right = st.columns(2)
with left:
    a = scheme_picker("scheme A", "compare_a", DEFAULTS.compare_a)
with right:
    b = scheme_picker("scheme B", "compare_b", DEFAULTS.compare_b)
head = head_picker(heads, "compare_head")  # a row of its own: eight heads fit
settings = scheme_settings(params, compare_a=a, compare_b=b)
for column, name, letter in zip(st.columns(2), (a, b), "AB", strict=True):
    with column:
        st.markdown(f"**{letter}: {SCHEMES[name].title}**, adds to the logit")
        st.latex(formulas.SCHEME_FORMULAS[name][1])
        text = settings.config(name, params).text
        st.caption(md_escape(text or "no settings"))

missing = views.unavailable_schemes(params, settings)
for name in dict.fromkeys((a, b)):
    if name in missing:
        st.warning(
            md_escape(f"{SCHEMES[name].title} cannot run on this view: {missing[name]}."),
            icon=":material/warning:",
        )
if a in missing or b in missing:
    st.stop()
window_caption(params)
both = views.compare_view(params, settings.config(a, params), settings.config(b, params))
mask_note = "" if params.mask == "none" else f" Masked cells ({params.mask} mask) are blank."
weights = [
    Panel(both.weights_a[head], title=f"A: {LABELS[a]}, α, head {head}", **at),
    Panel(both.weights_b[head], title=f"B: {LABELS[b]}, α, head {head}", **at),
]
weight_scale = make_scale("weights", [p.z for p in weights], n_keys=n)
figure(
    panel_grid(weights, weight_scale, columns=2, image_side=256),
    "compare_weights",
    shape=(2, n, n),
    caption=weight_scale.caption + mask_note + " " + pooled_note(weights, 256),
)
st.info(
    f"A, {LABELS[a]}: {focus_note(both.weights_a[head], head)} B, {LABELS[b]}: "
    f"{focus_note(both.weights_b[head], head)}"
    + (" Read on the window." if params.windowed else ""),
    icon=":material/lightbulb:",
)
difference = [Panel(both.difference[head], title=f"B - A, head {head}", **at)]
diff_range = views.colour_range([both.difference[head]])
diff_scale = make_scale("diverging", [both.difference[head]], zrange=diff_range.zrange)
c1, c2 = st.columns([3, 2])
with c1:
    figure(
        panel_grid(difference, diff_scale, max_width=480, image_side=256),
        "compare_diff",
        shape=(n, n),
        caption=diff_scale.caption.replace("; one scale for every panel", "")
        + " "
        + diff_range.note
        + " "
        + pooled_note(difference, 256),
    )
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

labels = position_labels(params, start, stop)
pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
changed = {
    key: value
    for key, value in vars(settings).items()
    if key not in ("scheme", "built_for") and value != getattr(DEFAULTS, key)
}
download_view(
    "compare",
    params,
    {
        "weights_a": Labelled(
            both.weights_a, f"{a}: alpha per head, window", **pairs, split="head"
        ),
        "weights_b": Labelled(
            both.weights_b, f"{b}: alpha per head, window", **pairs, split="head"
        ),
        "difference": Labelled(
            both.difference, "alpha_B - alpha_A per head", **pairs, split="head"
        ),
    },
    extra={
        "compare_a": a,
        "compare_b": b,
        "compare_head": head,
        **changed,
        **({"_model": [model_for(params, a), model_for(params, b)]} if params.trained else {}),
    },
)
