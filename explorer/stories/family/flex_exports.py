"""What the Masks and biases page hands on: the arrays it draws (one CSV each in the view's zip),
the program that reruns the view (``flex_attention.py`` and its .npy files) and the words that
name the view."""

from __future__ import annotations

import numpy as np

from explorer.frame.csv_tables import Labelled
from explorer.frame.downloads import position_labels
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.family.flex_choice import NO_SCHEME, FlexChoice, document_tokens
from explorer.stories.family.flex_code import Closed, closed_list, program, program_files
from explorer.stories.family.flex_views import FlexInputs, FlexView, view_inputs
from relpos_core.schemes.catalogue import scheme_entry


def inputs_of(params: ViewParams, choice: FlexChoice) -> FlexInputs:
    """The view's tensors and mods (ValueError in words for a bad mask number)."""
    return view_inputs(params, choice)


def tokens_read(params: ViewParams) -> tuple[str, ...]:
    return document_tokens(params)


def document_count(choice: FlexChoice) -> int:
    """How many documents the document mask splits the sequence into (1 without it)."""
    segments = dict((m[0], m[1:]) for m in choice.masks).get("document")
    return len(set(segments[0])) if segments else 1


def about(params: ViewParams, choice: FlexChoice) -> str:
    """One line naming the view, the program's first."""
    bias = "no score_mod" if choice.scheme == NO_SCHEME else scheme_entry(choice.scheme).title
    masks = f" {choice.how} ".join(choice.kinds) or "no mask"
    return (
        f"FlexAttention for one view of the relative-position attention explorer: {bias}; "
        f"masks: {masks}; n = {params.length}, BLOCK_SIZE = {choice.block}."
    )


def closed(inputs: FlexInputs) -> list[Closed]:
    return closed_list(inputs)


@cached(6)
def program_text(params: ViewParams, choice: FlexChoice, _inputs: FlexInputs) -> str:
    """flex_attention.py as the page prints it (``_inputs``: the view's, not part of the key)."""
    return program(_inputs, choice, about(params, choice))


def files(params: ViewParams, choice: FlexChoice) -> dict[str, bytes]:
    """flex_attention.py and its .npy files, for the view's zip (built on the click)."""
    return program_files(view_inputs(params, choice), choice, about(params, choice))


def view_arrays(params: ViewParams, view: FlexView) -> dict[str, Labelled]:
    """Every array the page draws, labelled by position (and block)."""
    start, stop = params.window
    labels = position_labels(params, start, stop)

    def on_window(z: np.ndarray) -> Labelled:
        return Labelled(z, rows=labels, cols=labels, corner="query \\ key")

    blocks_q, blocks_k = view.kinds.shape
    marks = {  # each kind's marks on the grid: (query block, key block) of each such block
        f"blocks_{name}": Labelled(
            np.argwhere(view.kinds == number).astype(np.float32),
            cols=["query block", "key block"],
            corner="block",
        )
        for number, name in ((2, "full"), (1, "partial"), (0, "skipped"))
        if (view.kinds == number).any()
    }
    return {
        "mask": on_window(view.mask),
        "bias": on_window(view.bias),
        "logits": on_window(view.logits),
        "weights": on_window(view.weights),
        "blocks": Labelled(
            view.kinds.astype(np.float32),
            rows=[f"query block {b}" for b in range(blocks_q)],
            cols=[f"key block {b}" for b in range(blocks_k)],
            corner="0 skipped, 1 partial, 2 full",
        ),
        **marks,
    }
