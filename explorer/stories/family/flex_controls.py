"""The Masks and biases page's URL-bound controls, read into one :class:`FlexChoice`: the scheme
whose score_mod adds the bias (with its settings), the masks and their numbers, how they
combine, and the BlockMask's block size.

The sidebar's mask sets where the page's causal and padding masks start (it decides them on the
other pages), and the sliding window starts on without padding (a window over padded keys leaves
the last queries no key); padding hides the sidebar's ``pad`` trailing keys. A window, sink or
prefix number may be typed outside what the masks accept: ``relpos_core.mask_mods`` then says
why in words.
"""

from __future__ import annotations

import streamlit as st

from explorer.frame.params import N_MAX, ViewParams
from explorer.frame.widgets import choice, int_number, md_escape, toggle
from explorer.stories.family.controls import scheme_controls
from explorer.stories.family.flex_choice import (
    DEFAULT_SCHEME,
    FLEX_DEFAULT_BLOCK,
    HOWS,
    NO_SCHEME,
    FlexChoice,
    block_sizes,
    default_block,
    document_tokens,
    sentence_segments,
)
from explorer.stories.family.settings import FamilySettings
from relpos_core.schemes.catalogue import scheme_entries, scheme_entry


def bias_picker() -> str:
    """The scheme whose score_mod the view runs, or none (URL key ``flex_scheme``)."""
    names = [NO_SCHEME, *(e.name for e in scheme_entries())]
    return choice(
        "bias (the score_mod of a scheme)",
        names,
        "flex_scheme",
        default=DEFAULT_SCHEME,
        help="In the URL and in relpos_core.schemes: "
        + ", ".join(f"{e.name} ({e.label})" for e in scheme_entries()),
    )


def scheme_choice(params: ViewParams, name: str) -> FlexChoice:
    """The scheme and its settings (drawn here; with trained weights the model's own)."""
    if name == NO_SCHEME:
        return FlexChoice()
    if params.trained:
        label = scheme_entry(name).label
        st.caption(
            md_escape(
                f"Trained weights: {label} is its family model's layer {params.layer}, with the "
                "settings it was trained with."
            )
        )
        return FlexChoice(name, FamilySettings().config(name, params))
    values = scheme_controls(name, params)
    return FlexChoice(name, FamilySettings(**values).config(name, params))


def mask_choice(params: ViewParams) -> tuple[tuple[object, ...], ...]:
    """The picked masks with their numbers, in the order they combine."""
    n = params.length
    st.markdown("**Masks** (each a mask_mod)")
    top = st.columns(3)
    with top[0]:
        causal = toggle("causal", "flex_causal", params.causal)
    with top[1]:
        document = toggle("documents", "flex_document", False)
    with top[2]:
        padding = toggle(f"padding ({min(params.pad, n)} keys)", "flex_padding",
                         "padding" in params.mask)  # fmt: skip
    left, middle, right = st.columns(3)
    with left:
        window = toggle("sliding window", "flex_window", "padding" not in params.mask)
        w = int_number("window w (keys)", 0, N_MAX, "flex_w", max(1, n // 4),
                       help="Query i sees keys i - w < j <= i.")  # fmt: skip
    with middle:
        sinks = toggle("sinks + window", "flex_sinks", False)
        s = int_number("sinks s (first keys)", 0, N_MAX, "flex_s", 1,
                       help="The first s keys are always visible (StreamingLLM), plus the "
                       "causal window of w keys.")  # fmt: skip
    with right:
        prefix = toggle("prefix-LM", "flex_prefix", False)
        p = int_number("prefix p (keys)", 0, N_MAX, "flex_p", max(1, n // 2),
                       help="Keys j < p are seen by every query; after them, causal.")  # fmt: skip
    picked: list[tuple[object, ...]] = []
    if causal:
        picked.append(("causal",))
    if window:
        picked.append(("window", w))
    if sinks:
        picked.append(("sinks", s, w))
    if prefix:
        picked.append(("prefix", p))
    if document:
        picked.append(("document", sentence_segments(document_tokens(params))))
    if padding:
        picked.append(("padding", n - min(params.pad, n)))
    return tuple(picked)


def flex_choice(params: ViewParams) -> FlexChoice:
    """Every control of the page, read into one FlexChoice."""
    scheme = scheme_choice(params, bias_picker())
    masks = mask_choice(params)
    how_column, block_column = st.columns(2)
    with how_column:
        how = choice(
            "combine the masks with",
            list(HOWS),
            "flex_how",
            help="and: a key is visible where every mask allows it; or: where any does.",
        )
    with block_column:
        block = choice("BLOCK_SIZE", list(block_sizes(params.length)), "flex_block",
                       default=default_block(params.length),
                       help=f"The BlockMask's tile: {FLEX_DEFAULT_BLOCK} is FlexAttention's "
                       "default; smaller tiles show the blocks at a small n.")  # fmt: skip
    return FlexChoice(scheme.scheme, scheme.config, masks, str(how), int(block))
