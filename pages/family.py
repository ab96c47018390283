"""Position schemes: six published relative schemes on the same q, k, v; one in detail, which
of them are functions of j - i, and their terms against the distance (the Compare schemes page
puts two side by side)."""

import numpy as np
import streamlit as st

from explorer.figures import formulas
from explorer.figures.draw import (
    bytes_text,
    figure,
    inset,
    markdown_table,
    plotly_chart,
    png_config,
    weights_caption,
    window_caption,
)
from explorer.figures.heatmaps import (
    Panel,
    Scale,
    grid_columns,
    make_scale,
    panel_grid,
    pooled_note,
)
from explorer.figures.notes import beyond_note
from explorer.frame.controls import current_params
from explorer.frame.downloads import Labelled, download_view, position_labels
from explorer.frame.failures import fragment
from explorer.frame.screen import is_phone
from explorer.frame.widgets import (
    choice,
    head_picker,
    int_slider,
    md_escape,
    shared_scale_picker,
    toggle,
)
from explorer.pair.controls import mark_picked_distance
from explorer.stories.family import views
from explorer.stories.family.controls import DEFAULTS, scheme_picker, scheme_settings
from explorer.stories.family.learned_terms import learned_terms
from explorer.stories.family.length_curves import length_curves, length_figure
from explorer.stories.family.plots import (
    DENSE_DISTANCE,
    learned_figure,
    profile_figure,
    shown_distances,
)
from explorer.weights.example import axis_labels
from explorer.weights.schemes import SCHEME_LABELS
from explorer.weights.trained import model_for
from relpos_core.schemes import SCHEME_NAMES, SCHEMES
from relpos_lab.family.registry import SCHEME_MODELS
from relpos_lab.family.tables import describe

params = current_params()
n, heads = params.length, params.heads
rows, cols = axis_labels(params)
start, stop = params.window
size = stop - start
at = {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}
LABELS = SCHEME_LABELS

st.title("Position schemes")
weights_caption(params, scheme="each")
st.markdown(
    "Six published ways to make attention depend on the distance j - i, each on the same "
    "queries, keys and values as every other page. All share the content term "
    "q_i · k_j / √d; they differ only in what position adds to the logit, the **position "
    "term** drawn here (in logit units, 1/√d applied)."
)

name = scheme_picker("scheme", "scheme", DEFAULTS.scheme)
scheme_class = SCHEMES[name]


# ---- 1. one scheme in detail ---------------------------------------------------------------
st.header(f"1 · {scheme_class.title}")
st.caption(md_escape(scheme_class.paper))
logit_latex, position_latex = formulas.SCHEME_FORMULAS[name]
st.latex(logit_latex)
st.markdown("Its position term, drawn below:")
st.latex(position_latex)
if name == "alibi":
    st.caption("The paper's 8 in m_h is max_bias below; h counts heads from 1.")
st.caption(md_escape(f"Parameters: {scheme_class.parameters_text}."))
settings = scheme_settings(params, name)
config = settings.config(name, params)
mask_note = "" if params.mask == "none" else f" Masked cells ({params.mask} mask) are blank."


@fragment
def one_head(view: views.PositionView, scales: list[Scale]) -> None:
    """One head's position term with exact values; Transformer-XL's four terms (reruns alone)."""
    head = head_picker(heads, "family_head")
    panel = [Panel(view.term[head], title=f"{LABELS[name]}, head {head}", **at)]
    if size > 128:  # the grid above is an image: exact values in a zoom
        inset(panel, scales[head], "family_zoom")
    else:
        figure(
            panel_grid(panel, scales[head], max_width=520),
            "family_head",
            shape=(n, n),
            caption=f"The colour scale of head {head} above; hover for exact values.",
        )
    if name == "xl":
        terms = views.scheme_terms(params, config, head)
        names = {
            "content": "(a) content q·k",
            "position": "(b) q · W_R R",
            "global_content": "(c) u · k",
            "global_position": "(d) v · W_R R",
        }
        panels = [Panel(z, title=names[t], **at) for t, z in terms.items()]
        term_range = views.colour_range([p.z for p in panels])
        term_scale = make_scale("diverging", [p.z for p in panels], zrange=term_range.zrange)
        st.markdown(f"**Transformer-XL's four terms, head {head}** (all divided by √d)")
        figure(
            panel_grid(panels, term_scale, columns=2, image_side=256),
            "family_xl_terms",
            shape=(4, n, n),
            caption="(b) + (d) is the position term above; (c) depends on the key alone, so "
            "each column is constant. "
            + term_scale.caption
            + " "
            + term_range.note
            + " "
            + pooled_note(panels, 256),
        )


def heads_grid() -> tuple[views.PositionView, list[Scale]]:
    """Every head's position term of the picked scheme, each on its own scale or on one."""
    view = views.position_view(params, config)
    grid_side = 256 if size > 256 else 512
    grid = [Panel(view.term[h], title=f"head {h}", **at) for h in range(heads)]
    shared = shared_scale_picker("family_scale")
    scales, scale_caption = views.term_scales(list(view.term), shared)
    figure(
        panel_grid(
            grid, scales[0] if shared else scales, columns=grid_columns(heads), image_side=grid_side
        ),
        "family_heads",
        shape=(1, heads, n, n),
        caption=f"The position term of every head ({config.text or 'no settings'}). "
        + scale_caption
        + mask_note
        + " "
        + pooled_note(grid, grid_side),
    )
    return view, scales


missing = views.unavailable_schemes(params, settings)  # scheme -> why it cannot run here
window_caption(params)
view = None
if name in missing:
    st.warning(
        md_escape(f"{scheme_class.title} cannot run on this view: {missing[name]}."),
        icon=":material/warning:",
    )
else:
    view, scales = heads_grid()
    one_head(view, scales)

# ---- 2. shift invariance and memory ----------------------------------------------------------
profiles = views.family_profiles(params, settings)  # the schemes that can run here
shown_schemes = tuple(profiles)
first = profiles.get(name) or profiles[shown_schemes[0]]
st.header("2 · A function of j - i only?")
where = (
    "over the whole n x n matrix"
    if first.over == "whole"
    else f"on the window's {size} x {size} block (the whole matrix would take too long at "
    f"n = {n} with {heads} heads)"
)
st.markdown(
    "A term is a function of j - i alone when it is constant along every diagonal (a Toeplitz "
    "matrix). The table gives its largest distance to the nearest Toeplitz matrix, "
    f"{where}, for the position term as computed with these q and k, and for its position-only "
    "part (q and k replaced by their mean over positions: content removed). Schemes that read "
    "the query or key (Shaw, Music, Transformer-XL, RoPE) are not Toeplitz with content; "
    "every position-only part is. *yes* allows float32 rounding: a deviation up to "
    f"{views.TOEPLITZ_RTOL:g} of the term's largest |value|."
)


def verdict(ok: bool) -> str:
    return "yes" if ok else "no"


picked_row = shown_schemes.index(name) if name in profiles else None
badges = {
    "scheme": [LABELS[s] for s in shown_schemes],
    "with content": [verdict(profiles[s].toeplitz()) for s in shown_schemes],
    "max deviation": [f"{profiles[s].deviation:.2g}" for s in shown_schemes],
    "position only": [verdict(profiles[s].toeplitz(True)) for s in shown_schemes],
    "max deviation (position only)": [
        f"{profiles[s].deviation_position:.2g}" for s in shown_schemes
    ],
    f"logits memory at n = {n}": [bytes_text(profiles[s].logit_bytes) for s in shown_schemes],
}
st.markdown(markdown_table(badges, bold_row=picked_row))
if missing:
    st.caption(
        md_escape(
            "Left out here and below, as they cannot run on this view: "
            + "; ".join(f"{LABELS[s]} ({reason})" for s, reason in missing.items())
            + "."
        )
    )
st.caption(
    f"Memory: each scheme's own estimate (logit_bytes) of its logit terms, their sum and its "
    f"position work for one sequence of n = {n} with {heads} heads, float32. The picked scheme "
    f"is in bold; besides its terms, {LABELS[name]} builds {scheme_class.memory_text}."
)


# ---- 3 and 4. distance profile, extrapolation -----------------------------------------------
st.header("3 · Against the distance j - i")


@fragment
def profile_chart() -> None:
    """Every scheme's profile on one chart, the trained length marked (reruns alone)."""
    which = choice(  # up to 9 buttons (pooled and 8 heads): a row of their own
        "curves",
        ["pooled", *(f"head {h}" for h in range(heads))],
        "profile_head",
        help="Pooled: every cell of every head at that distance.",
    )
    part_column, middle, right = st.columns([2, 1, 3])
    with part_column:
        parts_offered = (
            ["with content", "position only"] if first.with_content else ["position only"]
        )
        part = choice(
            "term",
            parts_offered,
            "profile_part",
            help="Position only: q and k replaced by their mean over positions, so the term is "
            "a function of j - i alone: what each scheme does at every distance.",
        )
    position_only = part == "position only"
    with middle:
        normalise = toggle("normalise", "profile_norm", True)
    with right:
        longest = max(1, n)
        built_for = (
            int_slider(
                "built for (trained length)",
                1,
                longest,
                "built_for",
                value=min(DEFAULTS.built_for, longest),
                help="Marks ±(length - 1): the distances a model trained on sequences this "
                "long has seen.",
            )
            if longest > 1
            else 1
        )
    head = None if which == "pooled" else int(str(which).split()[-1])
    curves = {
        LABELS[s]: profiles[s].curve(head, normalise, position_only) for s in shown_schemes
    }  # name -> (mean, std)
    reach = built_for - 1
    fig = profile_figure(
        first.distance,
        curves,
        y_title="position term / its largest |mean|" if normalise else "position term (logit)",
        highlight=LABELS[name],
        bands=(LABELS[name],),
        marks=(reach, -reach) if reach > 0 else (0,),
        mark_label=f"built for {built_for}: ±{reach}",
    )
    picked = mark_picked_distance(fig)
    st.latex(formulas.PROFILE)
    plotly_chart(
        fig, key="chart_family_profile", width="stretch", config=png_config("family_profile")
    )
    _, stride = shown_distances(first.distance)
    what = (
        f"the mean over every cell at that distance; the band around {LABELS[name]} (the "
        "picked scheme) is ± one standard deviation, the content's spread"
        + (" and the heads' differences" if head is None and heads > 1 else "")
        if not position_only
        else "the position-only part (content removed), exact from the first and last query "
        "rows"
        + (
            ""
            if first.with_content
            else f" (the term with content over all {n} x {n} cells and {heads} heads of six "
            "schemes would take several seconds)"
        )
        + (
            f"; the band around {LABELS[name]} is ± one standard deviation over the heads"
            if head is None and heads > 1
            else ""
        )
    )
    parts = [
        f"shape ({len(curves)} schemes, {len(first.distance)} distances).",
        f"{'Pooled over all ' + str(heads) + ' heads' if head is None else 'Head ' + str(head)}: "
        f"{what}.",
        "Each curve divided by its largest |mean| (scales differ: ALiBi falls to -m·n)."
        if normalise
        else "",
        f"Distances beyond ±{DENSE_DISTANCE - 1} are drawn every {stride}th." if stride > 1 else "",
        "Causal mask: only j <= i exists." if params.causal else "",
        "Padding keys count in the profile (it is the term, not the weights)."
        if "padding" in params.mask
        else "",
        picked.strip(),
    ]
    st.caption(md_escape(" ".join(p for p in parts if p)))
    beyond_table(built_for, "dotted lines")


def beyond_table(trained_length: int, marked: str) -> None:
    """What each scheme does past the distances a training length holds, in words."""
    st.subheader("4 · Beyond the trained length")
    st.markdown(
        md_escape(
            f"A model trained on sequences of {trained_length} positions has seen |j - i| <= "
            f"{trained_length - 1} ({marked}). Beyond them each scheme:"
        )
    )
    beyond = {
        "scheme": [LABELS[s] for s in SCHEME_NAMES],
        "beyond the trained distances": [SCHEMES[s].extrapolation for s in SCHEME_NAMES],
        "settings": [settings.config(s, params).text or "(none)" for s in SCHEME_NAMES],
    }
    st.markdown(markdown_table(beyond))


@fragment
def learned_chart() -> None:
    """What each trained scheme learned against j - i, one small chart each (reruns alone)."""
    part = choice(
        "term",
        ["position only", "on the text"],
        "learned_part",
        help="Position only: q and k replaced by their mean over the text, so the term is a "
        "function of j - i alone. On the text: the mean of the term over every pair of the "
        "text at that distance, content included.",
    )
    learned = learned_terms(model_for(params, "shaw"))
    curves = {
        LABELS[s] + (f", k = {params.k}" if s == "shaw" else ""): c
        for s, c in learned.curves(part, params.layer).items()
    }
    fig = learned_figure(learned.distance, curves, learned.context, columns=2 if is_phone() else 3)
    picked = mark_picked_distance(fig)
    plotly_chart(
        fig,
        key="chart_family_learned",
        width="stretch",
        config=png_config("family_learned"),
    )
    st.caption(
        md_escape(
            f"Layer {params.layer} of each scheme's trained model (Shaw's: "
            f"{learned.models[0]}), read on {len(learned.distance)} held-out characters, four "
            f"times the training length: the position term in logit units (1/√d applied), "
            + (
                "with q and k replaced by their mean over the text (content removed), so each "
                "line is the function of j - i the head learned"
                if part == "position only"
                else "averaged over every pair of the text at that distance (few pairs at the "
                "far left: the text's one pair at j - i = "
                f"{int(learned.distance[0])} is not an average)"
            )
            + f". One line per head, each chart on its own scale. Dashed: j - i = "
            f"-{learned.context - 1}, the farthest a {learned.context}-character training "
            "window holds; shaded: distances no training window held." + picked
        )
    )
    st.info(
        md_escape(beyond_note(learned.distance, curves, learned.context)),
        icon=":material/lightbulb:",
    )
    beyond_table(learned.context, "dashed lines above")


if params.trained:
    learned_chart()
else:
    profile_chart()

st.subheader("How far each scheme reaches, measured")
measured = length_curves(SCHEME_MODELS)  # one model per scheme, and nope and sinusoidal
longest = int(measured.lengths.max())
figure(
    length_figure(measured, height=420),
    "family_lengths",
    caption=f"One small character model per scheme, identical but for position, trained on "
    f"{measured.context}-character windows of {measured.corpus}; held-out bits per character "
    "at every evaluation length (Press et al. 2022, Fig. 1), read from the shipped results.",
)

flat, worst = min(SCHEME_MODELS, key=measured.change), max(SCHEME_MODELS, key=measured.change)

st.info(
    f"From {measured.context} to {longest} characters, {describe(flat)} changes least "
    f"({measured.at(flat, measured.context):.2f} to {measured.at(flat, longest):.2f} bits per "
    f"character) and {describe(worst)} most ({measured.at(worst, measured.context):.2f} to "
    f"{measured.at(worst, longest):.2f}).",
    icon=":material/lightbulb:",
)

# ---- download --------------------------------------------------------------------------------
labels = position_labels(params, start, stop)
profile_columns, profile_values = [], []
for s in shown_schemes:
    mean, std = profiles[s].curve()
    profile_columns += [f"{s} mean", f"{s} std"]
    profile_values += [mean, std]
changed = {
    key: value
    for key, value in vars(settings).items()
    if key not in ("scheme", "compare_a", "compare_b") and value != getattr(DEFAULTS, key)
}
tables = {}
if view is not None:
    tables["position_term"] = Labelled(
        view.term,
        f"{name} position term per head on the window, logit units, masked cells empty",
        rows=labels,
        cols=labels,
        corner="query i \\ key j",
        split="head",
    )
if params.trained:
    learned = learned_terms(model_for(params, "shaw"))
    for part in ("position only", "on the text"):
        curves = learned.curves(part, params.layer)
        tables["learned_" + part.replace(" ", "_")] = Labelled(
            np.stack([c.T for c in curves.values()]),  # (schemes, m, h)
            f"layer {params.layer}: each scheme's trained position term by j - i, {part}; "
            f"schemes in order {', '.join(learned.models)}",
            rows=[str(int(r)) for r in learned.distance],
            cols=[f"head {h}" for h in range(heads)],
            corner="j - i \\ head",
            split="scheme",
        )
download_view(
    "family",
    params,
    {
        **tables,
        "profiles": Labelled(
            np.stack(profile_values, axis=1),
            "every scheme's position term by distance, pooled over heads: mean and std"
            + ("" if first.with_content else " (position-only part)"),
            rows=[str(int(r)) for r in first.distance],
            cols=profile_columns,
            corner="j - i \\ value",
        ),
    },
    extra={
        "scheme": name,
        **changed,
        **({"_model": {s: model_for(params, s) for s in SCHEME_NAMES}} if params.trained else {}),
    },
)
