"""The Relative logits page's figures: one head's two terms, one method's relative term,
tensor2tensor's steps as grids of slices, and the arrays its download holds."""

from __future__ import annotations

from explorer.figures.heatmaps import Panel, grid_columns, panel_grid, pooled_note
from explorer.figures.scales import make_scale, own_scales, own_scales_caption
from explorer.figures.unread import blank
from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.shaw.logits_views import LogitsView, TensorStep
from explorer.stories.shaw.panels import (
    Drawn,
    heads_figure,
    hidden_line,
    window_axes,
    window_hidden,
)

#: method -> (its panel's title, its formula)
METHODS = {
    "definition": (
        "loop over (i, j)",
        r"q_i \cdot w^K_{\operatorname{clip}(j-i,\,k)} / \sqrt{d}",
    ),
    "einsum": ("einsum over the gathered a^K", r"\mathrm{einsum}(bhid,\,ijd \to bhij)"),
    "matmul": ("transpose, reshape, matmul", r"\text{tensor2tensor's relative attention inner}"),
}
STEP_NAMES = {
    "q": "1 queries",
    "a_k": "a^K gathered",
    "q_t": "2 transposed",
    "q_t_r": "3 reshaped",
    "product": "4 matmul",
    "product_r": "5 reshaped",
    "result": "6 transposed back",
}


def masked_note(params: ViewParams) -> str:
    """The caption's line on the blank cells when the mask hides some, else ''."""
    return hidden_line(params) + " " if window_hidden(params) is not None else ""


def relative_heads(params: ViewParams, view: LogitsView) -> Drawn:
    """Every head's relative term as it enters the softmax: the cells the mask hides blank."""
    hidden = window_hidden(params)
    stack = blank(view.relative, hidden)
    return heads_figure(  # fine: the band -k..k is what the note under it describes
        params,
        stack,
        make_scale("diverging", list(stack)),
        note=masked_note(params).strip(),
        fine=True,
    )


def terms_figure(params: ViewParams, view: LogitsView, head: int, shared: bool) -> Drawn:
    """One head's content and relative term, on one scale (``shared``) or each on its own; the
    cells the mask hides blank (neither term reaches the softmax there)."""
    n = params.length
    at = window_axes(params)
    hidden = window_hidden(params)
    panels = [
        Panel(blank(view.content[head], hidden), title=f"content term, head {head}", **at),
        Panel(blank(view.relative[head], hidden), title=f"relative term, head {head}", **at),
    ]
    one = make_scale("diverging", [p.z for p in panels]) if shared else None
    scales = one or own_scales("diverging", panels)
    return Drawn(
        panel_grid(panels, scales, columns=2),
        panels,
        scales,
        shape=(n, n),
        caption=masked_note(params)
        + (
            one.caption + " The relative term is small beside the content term."
            if one
            else own_scales_caption(scales)
        ),
    )


def method_figure(params: ViewParams, view: LogitsView, head: int, method: str) -> Drawn:
    """One method's relative term for ``head``, on the scale of the relative term's values."""
    start, stop = params.window
    side = getattr(view, method)[head].shape[0]
    hidden = window_hidden(params, side)
    values = blank(getattr(view, method)[head], hidden)
    block = "" if side == stop - start else f"the top-left {side} x {side} block of the window"
    title, latex = METHODS[method]
    scale = make_scale("diverging", [blank(view.relative[head], window_hidden(params))])
    panels = [Panel(values, title=f"{title}, head {head}", **window_axes(params))]
    return Drawn(
        panel_grid(panels, scale),
        panels,
        scale,
        shape=(1, params.heads, side, side),
        caption=", ".join(
            p for p in (block, "on the colour scale of the relative term's own values") if p
        )
        + (". " + masked_note(params).strip() if masked_note(params) else ""),
        latex=latex,
    )


def step_figure(step: TensorStep) -> Drawn:
    """One of tensor2tensor's steps, its tensor as a grid of its first slices."""
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
    return Drawn(
        panel_grid(panels, scale, columns=grid_columns(shown), image_side=256),
        panels,
        scale,
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


def logits_arrays(params: ViewParams, view: LogitsView) -> dict[str, Labelled]:
    """What the page's download holds: both terms of every head."""
    start, stop = params.window
    labels = position_labels(params, start, stop)
    pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
    return {
        "content_term": Labelled(
            view.content, "q_i . k_j / sqrt(d) per head", **pairs, split="head"
        ),
        "relative_term": Labelled(
            view.relative, "q_i . a^K_ij / sqrt(d) per head", **pairs, split="head"
        ),
    }


def _axis_labels(params: ViewParams, axis: str, size: int) -> list[str] | None:
    """Row or column labels of a step's slice: positions for i and j (the window's), else
    None (0, 1, ...: a channel, a batch or a head)."""
    start = params.window[0]
    return position_labels(params, start, start + size) if axis in ("i", "j") else None


def step_arrays(params: ViewParams, step: TensorStep) -> dict[str, Labelled]:
    """The slices of one of tensor2tensor's steps that :func:`step_figure` draws, one CSV
    each, named by the slice's index on the leading axes (``t2t_q_b0_h1``)."""
    lead, (row_axis, col_axis) = step.axes[:-2], step.axes[-2:]
    arrays = {}
    for z, index in zip(step.slices, step.index, strict=True):
        at = [f"{axis}{value}" for axis, value in zip(lead, index, strict=True)]
        arrays["_".join(["t2t", step.name, *at])] = Labelled(
            z,
            f"tensor2tensor step {STEP_NAMES[step.name]}: {step.formula}; "
            + (f"the slice {', '.join(at)} of " if at else "")
            + f"the tensor {step.shape}, axes ({', '.join(step.axes)}). Built from "
            "q / sqrt(d): tensor2tensor scales the queries first",
            rows=_axis_labels(params, row_axis, z.shape[0]),
            cols=_axis_labels(params, col_axis, z.shape[1]),
            corner=f"{row_axis} \\ {col_axis}",
        )
    return arrays
