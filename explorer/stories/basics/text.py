"""The words of the Attention basics page: the caption under its title, its prose, formulas and
the captions that name what each figure holds."""

from __future__ import annotations

from explorer.stories.basics.scaling import SATURATION_SAMPLES, SPREAD_SAMPLES, ScaleView
from explorer.stories.basics.views import (
    CONFIG,
    ITEMS_MAX,
    MATRIX_COLS_MAX,
    MATRIX_ROWS_MAX,
    CopyView,
)
from explorer.weights.source import TensorSource
from relpos_lab.copy_task import shipped_copy_results

INTRO = (
    "Before position: how a query picks what to read. A decoder producing output $i$ scores "
    "every encoder state $h_j$ against its own state $s_{i-1}$, turns the scores into weights "
    "with a softmax and reads the weighted sum of the states (Bahdanau et al. 2015):"
)
BAHDANAU = (
    r"e_{ij} = v_a^\top \tanh\!\left(W_a s_{i-1} + U_a h_j\right),\qquad "
    r"\alpha_{ij} = \frac{\exp e_{ij}}{\sum_{j'} \exp e_{ij'}},\qquad "
    r"c_i = \sum_j \alpha_{ij} h_j"
)
ITEMS_HELP = (
    f"{CONFIG.n_out} to {ITEMS_MAX} items from 1 to {CONFIG.n_features - 1}; the task's "
    f"sequences have {CONFIG.n_in}."
)


def alignment_heading(source: TensorSource) -> str:
    """Section 1's heading: a learned alignment only when the model drawn was trained."""
    if source.trained:
        return "1 · The alignment a copy model learned"
    return "1 · The alignment of an untrained copy model"


def task(source: TensorSource) -> str:
    """The copy task, and what the weights drawn show of it."""
    where = (
        "its weights $\\alpha_{ij}$ show where"
        if source.trained
        else "a trained one's weights $\\alpha_{ij}$ would show where; these random weights "
        "show where an untrained one looks"
    )
    return (
        f"The task: read {CONFIG.n_in} random items from 1 to {CONFIG.n_features - 1} and output "
        f"the first {CONFIG.n_out}. Nothing in the sequence predicts the next item, so a decoder "
        f"that copies must look back at the right input: {where}."
    )


COPY_FIGURES = "the copy model's α above and its scores and weights in section 2"
EXAMPLE_FIGURES = "the worked example's logits and weights"
EXAMPLE_ROWS = ", with row i of Q and of the output and row j of K and of V"
ALIGNMENT_NOTE = (
    "Rows: the outputs (the item predicted after →); columns: the inputs; the log colour "
    "scale of weights on every page, its ticks on the bar; each row sums to 1."
)
ADDITIVE = r"e_{ij} = v_a^\top \tanh\!\left(W_a s_{i-1} + U_a h_j\right)"
DOT = r"e_{ij} = \frac{s_{i-1} \cdot h_j}{\sqrt{d}}"
SCORES_CAPTION = (
    "Scores on a diverging scale centred at 0, weights on a log one, each panel its own."
)
QUERY_KEY_VALUE = (
    "Generalise the decoder state to a **query** $q_i$, the encoder states to **keys** $k_j$ "
    "(what is compared) and **values** $v_j$ (what is read): scaled dot-product attention "
    "(Vaswani et al. 2017). The matrices below are the attention introduction's own; edit "
    "them and the weights and the output follow."
)
ATTENTION = (
    r"\operatorname{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d}}\right) V"
)
MATRIX_FORM = (
    f"Rows separated by ';', numbers by spaces; at most {MATRIX_ROWS_MAX} rows of "
    f"{MATRIX_COLS_MAX} numbers."
)
EXAMPLE_CAPTION = (
    "Output difference relative to the largest |value| in V. Scores on a diverging scale "
    "centred at 0, weights on a log one, each panel its own."
)
WHY_SCALE = (
    "For q and k with independent unit-variance entries, q · k is a sum of d products of "
    "variance 1: its variance is d (Vaswani et al. 2017, footnote 4). Unscaled, wider heads "
    "give wider-spread logits, the largest of a row pulls ahead, and the softmax turns almost "
    "one-hot, where its gradients vanish. Dividing by √d keeps the spread at 1 for every d."
)
SPREAD = (
    r"\operatorname{Var}(q \cdot k) = \sum_{c=1}^{d} \operatorname{Var}(q_c k_c) "
    r"= d,\qquad \operatorname{std}\Bigl(\tfrac{q \cdot k}{\sqrt{d}}\Bigr) = 1"
)
SATURATION = (
    r"\mathbb{E}\bigl[\max_j \alpha_{ij}\bigr],\quad \alpha_{ij} = "
    r"\operatorname{softmax}_j\bigl(q_i \cdot k_j / s\bigr),\quad s \in \{1, \sqrt{d}\}"
)


def source_caption(source: TensorSource) -> str:
    """The line under the title: the shipped copy model and how well it copies, or its
    architecture with seeded random weights."""
    if not source.trained:
        return (
            f":material/casino: **Weights: random, untrained** (seed {source.seed}): the copy "
            "model's architecture with seeded random weights, so its alignment is not one a "
            "model found; the sidebar's weights switch draws the trained model instead (its n, "
            "k, d_model, heads and mask do not apply to this page)."
        )
    shipped = shipped_copy_results()
    held_out = shipped["held_out"]
    return (
        f":material/school: **Weights: trained**: the copy model, an encoder-decoder with "
        f"additive attention trained for {shipped['steps']} steps ({shipped['seconds']:.0f} s "
        f"on one core) to copy the first {CONFIG.n_out} of {CONFIG.n_in} random items; on "
        f"{held_out['sequences']:,} held-out sequences it copies "
        f"{held_out['item_accuracy']:.0%} of the items. Every tensor below is the model's own; "
        "the sidebar's n, k, d_model, heads and mask do not apply to this page."
    )


def cross_attention(copy: CopyView) -> str:
    """Section 1's closing caption: queries and keys from two sequences."""
    return (
        "This is already **cross-attention**: the queries (decoder states, "
        f"{CONFIG.n_out} of them) and the keys (encoder states, {len(copy.items)}) come from "
        "different sequences of different lengths."
    )


def dot_product(copy: CopyView) -> str:
    """Section 2's opening: what the dot product changes."""
    return (
        "The transformer replaces the small network $a(s, h)$ by a dot product of the two "
        "vectors, scaled by 1/√d: no parameters of its own, one matrix product for every pair, "
        f"but the two vectors must have the same width (here both are {copy.state_width} "
        "wide). Below, both on the states of section 1:"
    )


def additive_size(copy: CopyView, source: TensorSource) -> str:
    """The additive score's own parameters W_a, U_a and v_a: learned, or drawn at random."""
    d_a, c = copy.additive_width, copy.state_width
    what = "learned numbers" if source.trained else "numbers, here seeded random draws"
    return (
        f"W_a, U_a: ({d_a}, {c}) each, v_a: ({d_a},): {d_a * (2 * c + 1):,} {what}. What the "
        "model uses."
    )


def dot_size(copy: CopyView, source: TensorSource) -> str:
    """The dot product has no parameters of its own, and is not what the copy model uses."""
    used = "this model was trained with" if source.trained else "this model's architecture uses"
    return f"d = {copy.state_width}; no parameters of its own. Not what {used}."


def spread_caption(scales: ScaleView, seed: int) -> str:
    m = len(scales.d_k)
    return (
        f"Two curves of {m} values, d = 1 to {int(scales.d_k[-1])}: the std of "
        f"{SPREAD_SAMPLES} seeded random pairs (q, k) with N(0, 1) entries per d "
        f"(seed {seed}); both axes log."
    )


def saturation_caption(scales: ScaleView) -> str:
    return (
        f"Two curves of {len(scales.d_k)} values: the mean over {SATURATION_SAMPLES} seeded "
        f"random rows of one query and {scales.n} keys of the row's largest weight; d log."
    )
