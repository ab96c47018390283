"""What to notice on the Multi-head and masks page, written from the view's own numbers: where
each head puts its weight, which head's part of the output is largest, and what part of the
sequence the page computes and draws."""

from __future__ import annotations

import numpy as np

from explorer.figures.notes import weights_note
from explorer.figures.numbers import percent, plural
from explorer.stories.multihead.views import MultiHeadView


def heads_note(
    weights: np.ndarray, hidden: np.ndarray, unit: str = "position", labels: tuple[str, ...] = ()
) -> str:
    """Where each head puts its weight (h, rows, cols), hidden cells (rows, cols) exactly 0:
    one sentence per head from the note engine every weights map uses (``weights_note``).

    >>> w = np.stack([np.eye(3, k=-1) + np.eye(3) * [[1], [0], [0]], np.eye(3)[[0, 0, 0]]])
    >>> print(heads_note(w, np.triu(np.ones((3, 3), dtype=bool), 1), "character"))
    Head 0 puts 100% of a row's weight on the previous character (j - i = -1), on average
    over query rows 1-2. Head 1 puts 100% of a row's weight on the first character (j = 0)
    whatever the query, on average over query rows 1-2.
    """
    if not np.any(weights):
        return "Every key is hidden: no row has a key to attend to, and every weight is 0."
    notes = [
        weights_note(w, head, visible=~hidden, unit=unit, labels=labels)
        for head, w in enumerate(weights)
    ]
    return " ".join(note[:1].upper() + note[1:] for note in notes)


def shares_note(head_share: np.ndarray) -> str:
    """Which head's part of the output is largest: output = sum_h head_h W^O_h + b^O.

    >>> print(shares_note(np.array([0.1, 0.6, 0.3])))
    W^O mixes the heads: output = Σ_h head_h W^O_h + b^O, and head 1's part is the largest
    (60% of the summed part sizes), head 0's the smallest (10%).
    """
    high, low = int(np.argmax(head_share)), int(np.argmin(head_share))
    text = "W^O mixes the heads: output = Σ_h head_h W^O_h + b^O"
    if not np.any(head_share):
        return text + "; here every head's output is 0, so the output is the bias b^O alone."
    if len(head_share) == 1:
        return text + " with one head, h = 1: the output is that head's output times W^O."
    return (
        f"{text}, and head {high}'s part is the largest ({head_share[high]:.0%} of the summed "
        f"part sizes), head {low}'s the smallest ({head_share[low]:.0%})."
    )


def scope_note(view: MultiHeadView, length: int, trained: bool, padded: int = 0) -> str:
    """What part of the sequence the page computes and draws, and why that part is exact
    (``padded``: the sequence's last keys that are padding)."""
    rows, cols, keys = view.rows, view.cols, view.keys
    if length <= rows:
        drawn = {1: "The one position", 2: "Both positions"}.get(length, f"All {length} positions")
        return f"{drawn} drawn; the shapes are those of this computation, b = 1."
    if trained:
        text = (
            f"The page runs the model on the first {rows} of the {length} characters: it is "
            "causal (its attention looks back only, the rest acts per position), so their "
            f"tensors are the same as on all {length}."
        )
    elif keys == rows:
        text = (
            f"The page computes the first {rows} of the {length} queries; under the look-ahead "
            f"mask they see keys 0-{rows - 1} only, so those are all the keys they need"
            + (f" (the padded keys, from {length - padded} on, lie past them)." if padded else ".")
        )
    else:
        text = (
            f"The page computes the first {rows} of the {length} queries, each against all "
            f"{keys} keys, and draws keys 0-{cols - 1}."
        )
    return text + " The shapes are those of this computation, b = 1."


def drawn_note(view: MultiHeadView, unit: str = "position") -> str:
    """With more keys than drawn (no look-ahead mask, long n): how much weight the drawn keys
    hold; else where each head puts its weight (:func:`heads_note`)."""
    if view.keys <= view.cols:
        return heads_note(view.weights, view.hidden, unit, view.labels)
    low, high = (
        percent(float(share)) for share in (view.weight_drawn.min(), view.weight_drawn.max())
    )
    held = low if low == high else f"between {low} and {high}"
    seen = view.keys - view.padded
    over = f"all {plural(view.keys, 'key')}"
    if view.padded:
        over = f"the {plural(seen, 'key')} that are not padding (keys {seen}-{view.keys - 1} are)"
    return (
        f"No look-ahead mask: every query row spreads its weight over {over}, and the "
        f"{view.cols} keys drawn hold {held} of a row's weight (the rest falls on the keys not "
        "drawn)."
    )
