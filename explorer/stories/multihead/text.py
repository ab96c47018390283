"""The words of the Multi-head and masks page: the caption under its title, its prose and
formulas, and the lines that name the view's shapes and the masks' calls."""

from __future__ import annotations

from explorer.figures.draw import shape_text
from explorer.figures.numbers import plural
from explorer.figures.tables import markdown_table
from explorer.frame.params import ViewParams
from explorer.stories.multihead.masks import MaskView
from explorer.stories.multihead.notes import scope_note
from explorer.stories.multihead.views import MultiHeadView
from explorer.weights.source import FAMILY_GLOSS, TensorSource

INTRO = (
    "Before any position scheme: Vaswani et al. (2017, section 3.2.2) run h attentions side "
    "by side, each on its own d_model / h channels of Q, K and V, and mix their outputs with "
    "W^O. A mask hides keys from the softmax. (Why each head divides q · k by √d is on the "
    "Attention basics page.)"
)
MULTIHEAD = (
    r"\operatorname{MultiHead}(X) = \operatorname{Concat}(\mathrm{head}_0, \dots, "
    r"\mathrm{head}_{h-1})\,W^O,\qquad \mathrm{head}_m = \operatorname{softmax}\Bigl("
    r"\frac{Q_m K_m^\top}{\sqrt{d}} + M\Bigr) V_m"
)
DEFINITION_BADGE = (
    "module = the definition, one head at a time (softmax(Q_m K_mᵀ / √d) V_m, concat, W^O)"
)
MASKS = (
    "Two masks, in the convention of the attention introduction and the TensorFlow tutorial "
    "it follows: **1 = hidden**, 0 = visible (the other pages draw the complement, *allowed*). "
    "The padding mask hides the keys whose token id is 0 from every query; the look-ahead mask "
    "hides the keys after each query; together, a cell is hidden if either hides it. This "
    "section reads its own token ids and its own control, **mask applied in this section**; "
    "the sidebar's mask drives section 1 above (and every other page), not this one."
)


def source_caption(source: TensorSource) -> str:
    """The line under the title: the trained layer and what it reads, or the seeded draws."""
    params = source.params
    if not source.trained:
        return (
            f":material/casino: **Weights: random, untrained** (seed {params.seed}). The token "
            "vectors and W^Q, W^K, W^V, W^O with their biases are seeded random draws, not "
            "learned; the sidebar's weights switch loads a trained model's layer instead. The "
            "sidebar's k does not apply: no position scheme enters here."
        )
    reading = (
        f"the {plural(len(source.text() or ''), 'typed character')}"
        if params.text
        else f"{plural(params.length, 'held-out character')} of the corpus"
    )
    return (
        f":material/school: **Weights: trained**: layer {params.layer} of the model without "
        f"position of the family {FAMILY_GLOSS}: plain causal multi-head attention, d_model = "
        f"128, 4 heads, 3 layers, reading {reading}. Its layer's W^Q, W^K, W^V (the three row "
        "blocks of its qkv weight) and W^O are loaded into the multi-head module below with "
        "zero biases (the model has none), and x is the layer's LayerNorm of the residual "
        "stream entering it. The sidebar's k does not apply: no position scheme enters here."
    )


def shape_caption(view: MultiHeadView, params: ViewParams, source: TensorSource) -> str:
    """h, d_model, d (head dim), the mask in words, and the part of the sequence computed."""
    h, d = view.weights.shape[0], view.x.shape[1]
    padded = (
        "the last key is padding"
        if params.n_pad == 1
        else (f"the last {params.n_pad} keys are padding")
    )
    mask_words = {
        "none": "no mask: every query sees every key",
        "causal": "look-ahead (causal) mask: query i sees keys j <= i",
        "padding": f"padding mask: {padded}",
        "causal-padding": f"look-ahead mask, and {padded}",
    }[params.mask]
    shapes = f"h = {plural(h, 'head')}, d_model = {d}, d = d_model / h = {d // h}"
    return f"{shapes}; the sidebar's {mask_words}. " + (
        scope_note(view, params.length, source.trained, params.n_pad)
    )


def steps_table(view: MultiHeadView) -> str:
    """Every step of the computation, its formula and its shape, as a markdown table."""
    return markdown_table(
        {
            "step": [name for name, _, _ in view.steps],
            "formula": [formula for _, formula, _ in view.steps],
            "shape": [shape_text(shape) for _, _, shape in view.steps],
        }
    )


def model_badge(layer: int) -> str:
    """The label of the check against the trained model's own attention layer."""
    return (
        f"output = what the model without position's own attention layer {layer} returns "
        "(torch's fused attention)"
    )


def mask_calls(masks: MaskView) -> str:
    """The two mask calls and the padding mask they print, as inline code (a code block would
    load a syntax highlighter, 1.8 MB, for 3 lines)."""
    n = len(masks.tokens)
    return "  \n".join(
        f"`{line}`"  # integer ids and a printed tensor: no backtick to escape
        for line in (
            f"create_padding_mask([{list(masks.tokens)}])  # (1, 1, 1, {n})",
            " ".join(masks.padding_text.split()),
            f"create_look_ahead_mask({n})  # ({n}, {n})",
        )
    )
