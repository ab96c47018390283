"""The Length generalization page's own input controls: a random example of a length and seed,
or token ids typed in, bound to the URL (``trained_source``, ``trained_length``, ``trained_seed``,
``trained_tokens``)."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer.frame.widgets import choice, int_number, int_slider, text_box
from explorer.stories.generalization.views import (
    GeneralizationView,
    example_tokens,
    typed_tokens,
)

LENGTH_MAX = 128
SEED_LIMIT = 2**31 - 1
TYPED_EXAMPLE = "3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 2 3 8 4"


@dataclass(frozen=True)
class InputChoice:
    """The input picked: its tokens (the example's, with ``warning``, when the typed text is
    not ids, as the other pages' typed inputs fall back); and ``record``, the controls a
    download names it by."""

    tokens: tuple[int, ...]
    record: dict[str, object]
    warning: str = ""


def input_controls(gen: GeneralizationView) -> InputChoice:
    """The input's controls, drawn here: random (a length and a seed, side by side) or typed."""
    source = choice(
        "input",
        ["random", "typed"],
        "trained_source",
        kind="radio",
        format_func=str.title,
        horizontal=True,
    )
    if source == "random":
        left, right = st.columns(2)
        with left:
            length = int_slider(
                "length",
                1,
                LENGTH_MAX,
                "trained_length",
                value=2 * gen.train_max_len,
                help=f"Training used lengths {gen.min_len}..{gen.train_max_len}.",
            )
        with right:
            seed = int_number("seed", 0, SEED_LIMIT, "trained_seed", 0)
        tokens = tuple(int(t) for t in example_tokens(length, seed))
        return InputChoice(tokens, {"trained_length": length, "trained_seed": seed})
    vocab = gen.task["vocab"]
    typed = text_box(
        f"token ids 1..{vocab - 1}, separated by spaces",
        "trained_tokens",
        TYPED_EXAMPLE,
        4 * LENGTH_MAX,
    )
    warning = ""
    try:
        tokens = typed_tokens(typed, vocab, LENGTH_MAX)
    except ValueError as error:
        tokens = typed_tokens(TYPED_EXAMPLE, vocab, LENGTH_MAX)
        warning = f"{error}; showing {TYPED_EXAMPLE} instead."
    shown = " ".join(str(int(t)) for t in tokens)
    return InputChoice(tokens, {"trained_source": "Typed", "trained_tokens": shown}, warning)
