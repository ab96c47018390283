"""The masks section of the Multi-head and masks page: the padding and look-ahead masks of a list
of token ids (``relpos_core.basics``, 1 = hidden, the attention introduction's convention; the
rest of the explorer draws the complement, 1 = allowed), applied to one set of seeded random
logits, and what the softmax does with them.
"""

# i query pos · j key pos · n tokens

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.weights.example import derived_seed, view_array
from relpos_core.basics import (
    create_look_ahead_mask,
    create_padding_mask,
    scaled_dot_product_attention,
)

CACHE_ENTRIES = 8
MASK_KINDS = ("padding", "look-ahead", "both")
TOKENS_DEFAULT = "1 21 777 0 0"  # the attention introduction's example
TOKENS_MAX = 16
TOKEN_ID_MAX = 999_999


def hidden_mask(kind: str, ids: list[int] | tuple[int, ...], rows: int) -> torch.Tensor | None:
    """The mask (1 = hidden) of ``kind`` for key ids ``ids`` (0 = padding), on the first
    ``rows`` queries: the padding row (1, 1, 1, n), the look-ahead (n, n) or both, the
    larger of the two in every cell (as the TensorFlow tutorial combines them) -> broadcastable
    to (1, h, rows, n); None for no mask."""
    n = len(ids)
    parts = []
    if "causal" in kind or "look-ahead" in kind or kind == "both":
        parts.append(create_look_ahead_mask(n)[:rows])  # (rows, n)
    if "padding" in kind or kind == "both":
        parts.append(create_padding_mask([list(ids)]))  # (1, 1, 1, n)
    if not parts:
        return None
    mask = parts[0]
    for part in parts[1:]:
        mask = torch.maximum(mask, part)  # hidden by either -> hidden
    return mask


def parse_token_ids(text: str) -> tuple[int, ...]:
    """Token ids typed as whole numbers separated by spaces or commas; 0 is padding.

    >>> parse_token_ids("1 21 777 0 0"), parse_token_ids(" 3, 4 ")
    ((1, 21, 777, 0, 0), (3, 4))
    >>> parse_token_ids("1 two")
    Traceback (most recent call last):
    ...
    ValueError: must be 1 to 16 whole numbers from 0 to 999999 separated by spaces, got '1 two'
    """
    words = [w for w in re.split(r"[\s,]+", text) if w]
    fits = 1 <= len(words) <= TOKENS_MAX and all(
        w.isascii() and w.isdigit() and int(w) <= TOKEN_ID_MAX for w in words
    )
    if not fits:
        shown_text = text if len(text) <= 40 else text[:40] + "..."
        raise ValueError(
            f"must be 1 to {TOKENS_MAX} whole numbers from 0 to {TOKEN_ID_MAX} separated by "
            f"spaces, got {shown_text!r}"
        )
    return tuple(int(w) for w in words)


def tokens_or_default(text: str) -> tuple[tuple[int, ...], str | None]:
    """The token ids typed, or the default ones and the warning that says why.

    >>> tokens_or_default("3 0")
    ((3, 0), None)
    >>> tokens_or_default("")[0]
    (1, 21, 777, 0, 0)
    """
    try:
        return parse_token_ids(text), None
    except ValueError as error:
        return parse_token_ids(TOKENS_DEFAULT), (
            f"token ids (0 = padding): {error}; showing {TOKENS_DEFAULT!r} instead"
        )


@dataclass(frozen=True)
class MaskView:
    """The masks of ``tokens`` (1 = hidden) and what they do to one set of logits."""

    tokens: tuple[int, ...]
    padding: np.ndarray  # (1, n) create_padding_mask's (1, 1, 1, n), the keys that are padding
    look_ahead: np.ndarray  # (n, n) create_look_ahead_mask(n)
    mask: np.ndarray  # (n, n) the one applied, broadcast to the logits
    logits: np.ndarray  # (n, n) q_i · k_j / sqrt(d), before the mask
    d: int  # the width of the random q, k
    weights: np.ndarray  # (n, n) exactly 0 where hidden
    padding_text: str  # the tensor create_padding_mask returns, printed

    @property
    def hidden(self) -> np.ndarray:
        """(n, n) bool, True = hidden."""
        return self.mask != 0

    @property
    def hidden_weight(self) -> float:
        """The largest |weight| on a hidden cell (0 when nothing is hidden)."""
        return float(np.abs(self.weights[self.hidden]).max(initial=0))

    @property
    def row_sum_diff(self) -> float:
        """The largest |row sum - 1| over the rows that see a key."""
        sees = ~self.hidden
        row_sums = self.weights.sum(axis=1)
        return float(np.abs(row_sums[sees.any(axis=1)] - 1).max(initial=0))


@cached(CACHE_ENTRIES)
def mask_view(tokens: tuple[int, ...], kind: str, seed: int, d: int) -> MaskView:
    """The masks of ``tokens`` on seeded random q, k of the page's head width ``d``."""
    n = len(tokens)
    generator = torch.Generator().manual_seed(derived_seed(seed, "mask logits"))
    q, k = torch.randn(2, 1, 1, n, d, generator=generator)  # (b,h,n,d) each
    padding = create_padding_mask([list(tokens)])  # (1,1,1,n)
    mask = hidden_mask(kind, tokens, n)
    attention = scaled_dot_product_attention(q, k, k, mask)  # the values are not drawn
    return MaskView(
        tokens=tokens,
        padding=view_array(padding[0, 0]),
        look_ahead=view_array(create_look_ahead_mask(n)),
        mask=view_array((mask + torch.zeros(n, n)).reshape(n, n)),
        logits=view_array(attention.logits[0, 0]),
        weights=view_array(attention.weights[0, 0]),
        padding_text=str(padding),
        d=d,
    )


def mask_note(mask: np.ndarray, weights: np.ndarray, kind: str | None = None) -> str:
    """What the first and last rows see, and where their weight goes (under this section's
    mask ``kind``, named when given).

    >>> print(mask_note(np.array([[0, 1], [0, 0.0]]), np.array([[1, 0], [0.4, 0.6]])))
    Row 0 sees 1 of 2 keys; its weights sum to 1 over that 1 and are exactly 0 on the other 1.
    Row 1 sees 2 of 2 keys; its weights sum to 1 over those 2.
    """
    n = mask.shape[1]
    sentences = [] if kind is None else [f"With this section's mask ({kind}):"]
    for i in sorted({0, mask.shape[0] - 1}):
        seen = int((mask[i] == 0).sum())
        if seen == 0:
            sentences.append(
                f"Row {i} sees none of the {n} keys: its weights are all 0 (softmax has no key "
                "to spread over)."
            )
            continue
        total = float(weights[i][mask[i] == 0].sum())
        those = "that 1" if seen == 1 else f"those {seen}"
        rest = f" and are exactly 0 on the other {n - seen}" if seen < n else ""
        sentences.append(
            f"Row {i} sees {seen} of {n} keys; its weights sum to {total:.4g} over {those}{rest}."
        )
    return " ".join(sentences)
