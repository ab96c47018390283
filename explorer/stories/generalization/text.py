"""The words of the Length generalization page: what the models were trained to do, and the
headings, captions and notes that read the numbers drawn."""

from __future__ import annotations

from explorer.stories.generalization.views import KIND_LABELS, GeneralizationView, PredictionView

MODELS = "the generalization experiment's two trained encoders, relative and absolute"
UNTRAINED = (
    "the relative model before training is the *relative (random initialization)* choice of "
    "the tables and model boxes below"
)
GENERALIZATION_FORMULA = "accuracy on a fixed evaluation set, 512 sequences per length"
GENERALIZATION_NOTE = (
    "Relative position is all the task needs, and the relative model keeps it right at lengths "
    "it never saw; the absolute model is right only at the positions it was trained on."
)


def intro(gen: GeneralizationView) -> str:
    """The task, the two models and their sizes (which the sidebar does not change)."""
    config, shift = gen.config, gen.task["shift"]
    return (
        f"A 2-layer encoder trained by `python -m relpos_lab.generalization` to output, at every "
        f"position, the token {shift} places to the left (or a blank · where there is none), on "
        f"sequences of {gen.min_len} to {gen.train_max_len} tokens. The *relative* model uses "
        f"RelativeMultiHeadAttention with k = {config['k']}; the *absolute* model is the same "
        "network with sinusoidal encodings added to the embeddings and no relative terms. The "
        "sidebar controls do not apply here: the trained models have their own fixed sizes "
        f"(d_model = {config['d_model']}, {config['heads']} heads)."
    )


def generalization_columns(gen: GeneralizationView) -> str:
    """The columns of the accuracy table, in order."""
    return "columns: " + ", ".join(f"{m} token, {m} sequence" for m in gen.curves)


def table_heading(name: str, k: int) -> str:
    """What a row of the table ``name`` (``w^K``, ``w^V``) holds."""
    return f"${name}$: row $r$ holds ${name}_{{r - {k}}}$, the vector of distance $r - {k}$"


def cosine_heading(name: str) -> str:
    return f"Cosine similarity $\\cos({name}_r, {name}_s)$ between the vectors of two distances"


def tables_note(k: int, shift: int) -> str:
    """What the shipped tables show: training sets the one distance the task reads apart."""
    return (
        "Row r of a table is the vector for distance r - k; distances beyond "
        f"±{k} share the edge rows. At initialization the rows are unrelated. In the shipped "
        f"model training moves them only a little, and mostly sets distance -{shift}, the one "
        "the task reads, apart from all the others (its cosine with every other distance of "
        "w^K is negative). Nearby distances do not grow alike: finding one exact offset is all "
        "this task rewards."
    )


def accuracy_line(kind: str, view: PredictionView, train_max_len: int) -> str:
    """How many positions the model got right, and whether the input is longer than any seen."""
    n = len(view.tokens)
    seen = "within" if n <= train_max_len else "beyond"
    return (
        f"{KIND_LABELS[kind]}: **{view.accuracy:.0%}** of {n} positions right "
        f"(length {n}, {seen} the training lengths)."
    )


def target_line(shift: int) -> str:
    return (
        f"Target: $\\mathrm{{target}}_i = \\mathrm{{input}}_{{i - {shift}}}$, or · where "
        f"$i < {shift}$."
    )


def attention_latex(layer: int) -> str:
    """The formula above the first layer's weights (none above the others)."""
    return rf"\alpha_{{ij}}\ \text{{of layer {layer}, every head}}" if layer == 0 else ""


def attention_caption(scale_caption: str, n: int, train_max_len: int) -> str:
    """The caption under each layer's weights: the scale, and the dashed line past the longest
    training length when the input is longer."""
    return scale_caption + (
        f" Dashed: the longest training length, {train_max_len}; positions past it "
        "were never seen in training."
        if n > train_max_len
        else ""
    )
