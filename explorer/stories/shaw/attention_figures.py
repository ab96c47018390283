"""The Attention page's figures: one head's weights and logits, the rest of its computation one
picture at a time, and the arrays its download holds."""

from __future__ import annotations

import numpy as np

from explorer.figures import formulas
from explorer.figures.heatmaps import Panel, Scale, panel_grid
from explorer.figures.scales import fitted_scales, make_scale
from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.shaw.panels import Drawn, window_axes
from explorer.stories.shaw.views import AttentionView
from explorer.weights.reading import axis_labels


def weights_figure(params: ViewParams, view: AttentionView, head: int, scale: Scale) -> Drawn:
    """One head's weights α on the window, on the scale of every head's grid."""
    n = params.length
    panels = [Panel(view.weights, title=f"weights α, head {head}", **window_axes(params))]
    return Drawn(panel_grid(panels, scale, max_width=480), panels, scale, shape=(n, n))


def logits_figure(params: ViewParams, view: AttentionView, head: int) -> Drawn:
    """One head's logits e on the window, masked cells blank, on their own diverging scale."""
    n = params.length
    panels = [Panel(view.masked_logits, title=f"logits e, head {head}", **window_axes(params))]
    scale = make_scale("diverging", [view.masked_logits])
    caption = scale.caption.replace("; one scale for every panel", "")
    if not np.isfinite(view.masked_logits).any():
        caption = "Every cell is blank: every key is padding, so no logit enters a softmax."
    return Drawn(panel_grid(panels, scale, max_width=480), panels, scale, (n, n), caption)


def more_figure(params: ViewParams, view: AttentionView, what: str) -> Drawn:
    """More of one head (``what``): "the output, split" in its two parts, "the logits" as their
    two terms, or "the mask"."""
    n, d = params.length, params.head_dim
    at = window_axes(params)
    if what == "the output, split":
        rows, _ = axis_labels(params)
        start, _ = params.window
        out_at = {"row_offset": start, "y_labels": rows, "x_title": "channel", "x_symbol": "c"}
        panels = [
            Panel(view.content_output, title="content part", **out_at),
            Panel(view.relative_output, title="relative part", **out_at),
            Panel(view.output, title="output z", **out_at),
        ]
        latex = rf"{formulas.OUTPUT} = {formulas.CONTENT_OUTPUT} + {formulas.RELATIVE_OUTPUT}"
        shape = (n, d)
        scale, caption = fitted_scales("diverging", panels)
    elif what == "the logits":
        panels = [
            Panel(view.content_logits * view.scale, title="content term", **at),
            Panel(view.relative_logits * view.scale, title="relative term", **at),
            Panel(view.masked_logits, title="e = their sum, masked", **at),
        ]
        latex = rf"e_{{ij}} = {formulas.CONTENT_TERM} + {formulas.RELATIVE_TERM}"
        shape = (n, n)
        scale, caption = fitted_scales("diverging", panels)
    else:
        panels = [Panel(view.allowed, title="allowed (1 = may attend)", **at)]
        latex, shape = "", (n, n)
        scale = make_scale("index", [view.allowed], zrange=(0.0, 1.0))
        caption = scale.caption
    return Drawn(
        panel_grid(panels, scale, columns=len(panels)),
        panels,
        scale,
        shape=shape,
        caption=caption,
        latex=latex,
    )


def split_gap(view: AttentionView) -> float:
    """max |z - content part - relative part|: how far the output is from its two parts."""
    return float(abs(view.output - view.content_output - view.relative_output).max())


def attention_arrays(
    params: ViewParams, weights: np.ndarray, view: AttentionView, head: int
) -> dict[str, Labelled]:
    """What the page's download holds: every head's weights (h, W, W), and one head's logits
    and output with its two parts."""
    start, stop = params.window
    labels = position_labels(params, start, stop)
    pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
    by_channel = {"rows": labels, "corner": "query i \\ channel"}
    return {
        "weights": Labelled(weights, "alpha_ij per head, on the window", **pairs, split="head"),
        "logits": Labelled(view.masked_logits, f"e_ij of head {head}, masked cells empty", **pairs),
        "output": Labelled(view.output, f"z_i of head {head}", **by_channel),
        "content_output": Labelled(view.content_output, "sum_j alpha_ij v_j", **by_channel),
        "relative_output": Labelled(view.relative_output, "sum_j alpha_ij a^V_ij", **by_channel),
    }
