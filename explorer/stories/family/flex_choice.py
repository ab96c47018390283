"""What the Masks and biases page computes, as one hashable :class:`FlexChoice`: the scheme whose
``score_mod`` adds the bias (or none), the masks and how they combine, FlexAttention's block size.

Pure (no streamlit). The masks are ``relpos_core.mask_mods``' own: :func:`mask_mod` builds the one
``mask_mod`` the view runs, and every bad number is that module's ValueError, which names the
parameter, its range and the value. A document is a sentence of the text the view reads
(:func:`sentence_segments`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.frame.params import ViewParams
from explorer.weights.schemes import SchemeConfig
from explorer.weights.source import source_of
from relpos_core import mask_mods
from relpos_core.mods import Mod

NO_SCHEME = "none"  # the scheme picker's option for no score_mod: plain q · k attention
DEFAULT_SCHEME = "alibi"  # attention-gym's ALiBi-inside-a-window question opens the page
FLEX_DEFAULT_BLOCK = 128  # FlexAttention's default BLOCK_SIZE (create_block_mask)
BLOCK_SIZES = (2, 4, 8, 16, 32, 64, 128)
MAX_BLOCKS = 64  # a block grid at most this many blocks a side: each block's mark stays legible
HOWS = ("and", "or")
SENTENCE_ENDS = (".", "!", "?")

# the masks in the order the page lists and combines them
MASK_KINDS = ("causal", "window", "sinks", "prefix", "document", "padding")


@dataclass(frozen=True)
class FlexChoice:
    """One view of the page: ``scheme`` (a catalogue name or NO_SCHEME) with its ``config``, the
    masks picked as ``(kind, *numbers)`` in MASK_KINDS order, ``how`` they combine and the
    ``block`` size. ``masks`` holds the numbers each mask is built with (a document its
    segment of every position), so the choice alone decides the view (a cache key)."""

    scheme: str = NO_SCHEME
    config: SchemeConfig | None = None
    masks: tuple[tuple[object, ...], ...] = ()
    how: str = "and"
    block: int = FLEX_DEFAULT_BLOCK

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(str(mask[0]) for mask in self.masks)


def block_sizes(n: int) -> tuple[int, ...]:
    """The block sizes offered at length ``n``: at most MAX_BLOCKS blocks a side, and always
    FlexAttention's default.

    >>> block_sizes(8), block_sizes(4096)
    ((2, 4, 8, 16, 32, 64, 128), (64, 128))
    """
    return tuple(b for b in BLOCK_SIZES if -(-n // b) <= MAX_BLOCKS or b == FLEX_DEFAULT_BLOCK)


def default_block(n: int) -> int:
    """The block size a view opens on: FlexAttention's default from n = 512, below it the
    largest size that still cuts the sequence into 4 blocks a side (2 at the least).

    >>> default_block(8), default_block(64), default_block(300), default_block(4096)
    (2, 16, 64, 128)
    """
    if n >= 4 * FLEX_DEFAULT_BLOCK:
        return FLEX_DEFAULT_BLOCK
    return max([b for b in BLOCK_SIZES if 4 * b <= n] or [BLOCK_SIZES[0]])


def sentence_segments(tokens: tuple[str, ...]) -> tuple[int, ...]:
    """The document of each position: a token ending in ., ! or ? closes its sentence, and the
    next token starts the next document (characters or words alike).

    >>> sentence_segments(("the", "cat.", "a", "dog!", "so"))
    (0, 0, 1, 1, 2)
    >>> sentence_segments(tuple("hi. yo"))
    (0, 0, 0, 1, 1, 1)
    """
    segments, current = [], 0
    for token in tokens:
        segments.append(current)
        if token.endswith(SENTENCE_ENDS):
            current += 1
    return tuple(segments)


def document_tokens(params: ViewParams) -> tuple[str, ...]:
    """The tokens the view reads: the trained models' characters (typed or held out), else the
    typed words (none: abstract positions)."""
    text = source_of(params).text()
    return tuple(text) if text is not None else params.tokens


def one_mask(mask: tuple[object, ...], n: int) -> Mod:
    """The ``mask_mod`` of one picked mask at length ``n`` (a ValueError naming a bad number)."""
    kind, *numbers = mask
    builders = {
        "causal": lambda: mask_mods.causal(),
        "window": lambda: mask_mods.sliding_window(numbers[0], n),
        "sinks": lambda: mask_mods.sinks(numbers[0], numbers[1], n),
        "prefix": lambda: mask_mods.prefix_lm(numbers[0], n),
        "document": lambda: mask_mods.document(torch.tensor(numbers[0], dtype=torch.long)),
        "padding": lambda: mask_mods.padding(numbers[0], n),
    }
    return builders[str(kind)]()


def mask_mod(choice: FlexChoice, n: int) -> Mod | None:
    """The one ``mask_mod`` the view runs: the picked masks combined by ``choice.how`` (one
    mask: itself; none: None, every key visible)."""
    mods = [one_mask(mask, n) for mask in choice.masks]
    if not mods:
        return None
    return mods[0] if len(mods) == 1 else mask_mods.combine(mods, choice.how)
