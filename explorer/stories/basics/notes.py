"""What to notice on the Attention basics page, written from the view's own numbers: which input
each output reads, and how each query of the worked example spreads its weight."""

from __future__ import annotations

import numpy as np

from explorer.stories.basics.views import CONFIG, CopyView, ExampleView
from explorer.weights.source import TensorSource


def alignment_note(copy: CopyView, source: TensorSource) -> str:
    """Where each output puts its weight, what it predicts, and how many items it copied (and,
    trained, whether the sequence is as long as the training ones)."""
    items = copy.items
    right = sum(p == x for p, x in zip(copy.predicted, items, strict=False))
    return (
        " ".join(
            f"Output {i} puts {copy.weights[i, j]:.0%} of its weight on input {j} (item "
            f"{items[j]}) and predicts {copy.predicted[i]}."
            for i, j in enumerate(copy.weights.argmax(1))
        )
        + f" {right} of {CONFIG.n_out} items copied."
        + (
            f" The model was trained on {CONFIG.n_in} inputs; this sequence has {len(items)}."
            if len(items) != CONFIG.n_in and source.trained
            else ""
        )
    )


def reads(weights: np.ndarray) -> str:
    """Which input each output reads most, and with how much of its weight.

    >>> reads(np.array([[0.9, 0.1], [0.25, 0.75]]))
    'outputs read inputs 0, 1 with 90%, 75% of their weight'
    """
    top = weights.argmax(1)
    return (
        f"outputs read inputs {', '.join(map(str, top))} with "
        f"{', '.join(f'{weights[i, j]:.0%}' for i, j in enumerate(top))} of their weight"
    )


def reads_note(copy: CopyView, source: TensorSource) -> str:
    """What the additive and the dot-product weights read; trained, that only one was taught."""
    return (
        f"Additive, the model's own scores: {reads(copy.weights)}. Dot product of the same "
        f"states: {reads(copy.dot_weights)}."
        + (
            " The model learned W_a, U_a and v_a to pick the input to copy; the plain dot "
            "product of the same states was never trained to."
            if source.trained
            else ""
        )
    )


def ties_note(example: ExampleView, self_attention: bool) -> str:
    """Which keys each query of the worked example reads (those over 1% of its weight)."""
    n_q, n_k = example.weights.shape
    ties = [
        f"query {i} splits its weight over keys {', '.join(map(str, np.flatnonzero(row > 0.01)))}"
        if (row > 0.01).sum() > 1
        else f"query {i} reads key {int(row.argmax())} alone ({row.max():.0%})"
        for i, row in enumerate(example.weights)
    ]
    return (
        "; ".join(ties)
        + f". {n_q} queries over {n_k} keys: "
        + ("self-attention, Q = K." if self_attention else "cross-attention.")
    )
