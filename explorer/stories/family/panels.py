"""The position-scheme pages' figures, built from their views: the heatmaps of every head's
position term, one head's, Transformer-XL's four terms and two schemes' weights with their
difference (each with the caption the page draws it with), and the profile chart. A few large
values do not wash the rest out: a diverging scale may saturate, and its caption says so."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from explorer.figures.heatmaps import Panel, grid_columns, panel_grid, pooled_note
from explorer.figures.scales import (
    DIFFERENCE_QUANTILE,
    Scale,
    colour_range,
    make_scale,
    own_scales_caption,
)
from explorer.frame.params import ViewParams
from explorer.stories.family import text
from explorer.stories.family.controls import ProfileChoice
from explorer.stories.family.plots import profile_figure
from explorer.stories.family.profiles import ProfileView
from explorer.stories.family.views import CompareView, PositionView, scheme_terms
from explorer.weights.reading import axis_labels
from explorer.weights.schemes import SchemeConfig
from relpos_core.schemes.catalogue import scheme_entry, scheme_label


@dataclass(frozen=True)
class Drawn:
    """A heatmap figure and its caption; ``scales``: each head's colour scale, where it has
    one the page reuses (the one-head view under the grid)."""

    figure: go.Figure
    caption: str
    scales: tuple[Scale, ...] = ()


def window_axes(params: ViewParams) -> dict[str, object]:
    """A panel's placement on the window: offsets and the tokens along both axes."""
    rows, cols = axis_labels(params)
    start, _ = params.window
    return {"row_offset": start, "col_offset": start, "x_labels": cols, "y_labels": rows}


def heads_grid(view: PositionView, params: ViewParams, config: SchemeConfig, shared: bool) -> Drawn:
    """Every head's position term of one scheme, each on its own colour scale or on one."""
    start, stop = params.window
    at = window_axes(params)
    heads = params.heads
    grid_side = 256 if stop - start > 256 else 512
    grid = [Panel(view.term[h], title=f"head {h}", **at) for h in range(heads)]
    scales, scale_caption = term_scales(list(view.term), shared)
    fig = panel_grid(
        grid, scales[0] if shared else scales, columns=grid_columns(heads), image_side=grid_side
    )
    caption = (
        f"The position term of every head ({config.text or 'no settings'}). "
        + scale_caption
        + text.mask_note(params)
        + " "
        + pooled_note(grid, grid_side)
    )
    return Drawn(fig, caption, tuple(scales))


def head_panel(view: PositionView, params: ViewParams, name: str, head: int) -> list[Panel]:
    """One head's position term of scheme ``name``, as one panel."""
    title = f"{scheme_label(name)}, head {head}"
    return [Panel(view.term[head], title=title, **window_axes(params))]


def each_term(params: ViewParams, config: SchemeConfig, head: int) -> Drawn:
    """Every term of one head's logit, titled by the scheme's catalogue entry (Transformer-XL's
    (a)-(d)), on one diverging scale."""
    at = window_axes(params)
    entry = scheme_entry(config.name)
    terms = scheme_terms(params, config, head)
    panels = [Panel(z, title=entry.term_titles[t], **at) for t, z in terms.items()]
    term_range = colour_range([p.z for p in panels])
    term_scale = make_scale("diverging", [p.z for p in panels], zrange=term_range.zrange)
    caption = (
        entry.terms_note
        + " "
        + term_scale.caption
        + " "
        + term_range.note
        + " "
        + pooled_note(panels, 256)
    )
    return Drawn(panel_grid(panels, term_scale, columns=2, image_side=256), caption)


def compare_weights(params: ViewParams, both: CompareView, a: str, b: str, head: int) -> Drawn:
    """Both schemes' attention weights of one head, side by side on one scale."""
    at = window_axes(params)
    panels = [
        Panel(both.weights_a[head], title=f"A: {scheme_label(a)}, α, head {head}", **at),
        Panel(both.weights_b[head], title=f"B: {scheme_label(b)}, α, head {head}", **at),
    ]
    scale = make_scale("weights", [p.z for p in panels], n_keys=params.length)
    caption = scale.caption + text.mask_note(params) + " " + pooled_note(panels, 256)
    return Drawn(panel_grid(panels, scale, columns=2, image_side=256), caption)


def one_scheme_weights(
    params: ViewParams, weights: np.ndarray, letter: str, name: str, head: int
) -> Drawn:
    """One scheme's attention weights of one head, alone: the other scheme cannot run."""
    at = window_axes(params)
    panels = [Panel(weights[head], title=f"{letter}: {scheme_label(name)}, α, head {head}", **at)]
    scale = make_scale("weights", [p.z for p in panels], n_keys=params.length)
    caption = (
        scale.caption.replace("; one scale for every panel", "")
        + text.mask_note(params)
        + " "
        + pooled_note(panels, 256)
    )
    return Drawn(panel_grid(panels, scale, max_width=480, image_side=256), caption)


def compare_difference(params: ViewParams, both: CompareView, head: int) -> Drawn:
    """B - A of one head's weights, on a diverging scale of its own, bound at a quantile of
    |B - A|: the few cells near the diagonal where the schemes disagree most had washed every
    other cell out to white."""
    panels = [Panel(both.difference[head], title=f"B - A, head {head}", **window_axes(params))]
    diff_range = colour_range([both.difference[head]], DIFFERENCE_QUANTILE)
    scale = make_scale("diverging", [both.difference[head]], zrange=diff_range.zrange)
    caption = (
        scale.caption.replace("; one scale for every panel", "")
        + " "
        + diff_range.note
        + " "
        + pooled_note(panels, 256)
    )
    return Drawn(panel_grid(panels, scale, max_width=480, image_side=256), caption)


def profile_chart(
    profiles: dict[str, ProfileView], first: ProfileView, name: str, pick: ProfileChoice
) -> go.Figure:
    """Every scheme's profile against j - i, the picked scheme's with its band, the distances
    a model built for ``pick.built_for`` positions has seen marked."""
    curves = {
        scheme_label(s): p.curve(pick.head, pick.normalise, pick.position_only)
        for s, p in profiles.items()
    }  # name -> (mean, std)
    reach = pick.built_for - 1
    return profile_figure(
        first.distance,
        curves,
        y_title="position term / its largest |mean|" if pick.normalise else "position term (logit)",
        highlight=scheme_label(name),
        bands=(scheme_label(name),),
        marks=(reach, -reach) if reach > 0 else (0,),
        mark_label=f"built for {pick.built_for}: ±{reach}",
    )


def term_scales(terms: list[np.ndarray], shared: bool) -> tuple[list[Scale], str]:
    """One colour scale per head (each its own, or one for all) and the caption that says so,
    with any saturation note."""
    groups = [terms] if shared else [[t] for t in terms]
    ranges = [colour_range(g) for g in groups]
    scales = [
        make_scale("diverging", g, zrange=r.zrange) for g, r in zip(groups, ranges, strict=True)
    ]
    notes = " ".join(dict.fromkeys(r.note for r in ranges if r.note))
    if shared:
        return scales * len(terms), scales[0].caption + " " + notes
    return scales, own_scales_caption(scales) + " " + notes
