"""What to notice on the Multi-head and masks page, written from the view's own numbers: where
each head puts its weight, which head's part of the output is largest, and what part of the
sequence the page computes and draws."""

from __future__ import annotations

import numpy as np

from explorer.figures.notes import distance_word
from explorer.stories.multihead.views import MultiHeadView


def heads_note(weights: np.ndarray, unit: str = "position") -> str:
    """Where each head puts its weight, read from the weights drawn (h, rows, cols): the
    distance j - i, or the first key j = 0, with the most weight on average over query rows
    1.. (row 0 may have a single key to see).

    >>> w = np.stack([np.eye(3, k=-1) + np.eye(3) * [[1], [0], [0]], np.eye(3)])
    >>> print(heads_note(w, "character"))
    Over query rows 1-2: head 0 puts 100% of a row's weight on the previous character,
    head 1 100% on the same character.
    """
    h, rows, cols = weights.shape
    if not np.any(weights):
        return "Every key is hidden: no row has a key to attend to, and every weight is 0."
    if rows < 2:
        return "One query row: each head puts all its weight on the keys it sees."
    w = np.asarray(weights[:, 1:], dtype=np.float64)  # (h, rows - 1, cols), rows 1..
    i = np.arange(1, rows)[:, None]
    distance = np.arange(cols)[None, :] - i  # j - i
    parts = []
    for head in range(h):
        mass = {
            int(r): w[head][distance == r].sum() / (rows - 1) for r in np.unique(distance)
        }  # r -> mean over rows of the weight at j - i = r
        best = max(mass, key=lambda r: (mass[r], -abs(r)))
        first = w[head, :, 0].mean()
        if first > mass[best] and cols > 1:
            where, share = f"the first {unit} (j = 0)", first
        else:
            where, share = distance_word(best).replace("position", unit), mass[best]
        parts.append(f"head {head} puts {share:.0%} of a row's weight on {where}")
    parts[1:] = [p.replace(" puts", "", 1).replace(" of a row's weight", "") for p in parts[1:]]
    return f"Over query rows 1-{rows - 1}: " + ", ".join(parts) + "."


def shares_note(head_share: np.ndarray) -> str:
    """Which head's part of the output is largest: output = sum_h head_h W^O_h + b_o.

    >>> print(shares_note(np.array([0.1, 0.6, 0.3])))
    W^O mixes the heads: output = Σ_h head_h W^O_h + b_o, and head 1's part is the largest
    (60% of the summed part sizes), head 0's the smallest (10%).
    """
    high, low = int(np.argmax(head_share)), int(np.argmin(head_share))
    text = "W^O mixes the heads: output = Σ_h head_h W^O_h + b_o"
    if not np.any(head_share):
        return text + "; here every head's output is 0, so the output is the bias b_o alone."
    if len(head_share) == 1:
        return text + " with one head, h = 1: the output is that head's output times W^O."
    return (
        f"{text}, and head {high}'s part is the largest ({head_share[high]:.0%} of the summed "
        f"part sizes), head {low}'s the smallest ({head_share[low]:.0%})."
    )


def scope_note(view: MultiHeadView, length: int, trained: bool) -> str:
    """What part of the sequence the page computes and draws, and why that part is exact."""
    rows, cols, keys = view.rows, view.cols, view.keys
    if length <= rows:
        return f"All {length} positions are drawn; the shapes are those of this computation, b = 1."
    if trained:
        text = (
            f"The page runs the model on the first {rows} of the {length} characters: it is "
            "causal (its attention looks back only, the rest acts per position), so their "
            f"tensors are the same as on all {length}."
        )
    elif keys == rows:
        text = (
            f"The page computes the first {rows} of the {length} queries; under the look-ahead "
            f"mask they see keys 0-{rows - 1} only, so those are all the keys they need."
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
        return heads_note(view.weights, unit)
    low, high = float(view.weight_drawn.min()), float(view.weight_drawn.max())
    return (
        f"No look-ahead mask: every query row spreads its weight over all {view.keys} keys, "
        f"and the {view.cols} keys drawn hold between {low:.1%} and {high:.1%} of a row's "
        "weight (the rest falls on the keys not drawn)."
    )
