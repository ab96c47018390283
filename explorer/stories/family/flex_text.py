"""The Masks and biases page's words, each read from the view it describes."""

from __future__ import annotations

from explorer.frame.widgets import md_escape
from explorer.stories.family.flex_choice import FLEX_DEFAULT_BLOCK, NO_SCHEME, FlexChoice
from explorer.stories.family.flex_code import Closed
from explorer.stories.family.flex_views import FlexInputs, FlexView
from relpos_core.schemes.catalogue import scheme_entry


def intro() -> str:
    """What FlexAttention's two functions and its BlockMask are (the glossary's definitions)."""
    return (
        "PyTorch's FlexAttention (`torch.nn.attention.flex_attention`) runs attention from two "
        "small Python functions instead of a dense bias and mask. A **score_mod** is a function "
        "`score_mod(score, b, h, q_idx, kv_idx)` that returns the logit: it receives the score "
        "$q_i \\cdot k_j$ times the scale and adds what a position scheme adds. A **mask_mod** "
        "is a function `mask_mod(b, h, q_idx, kv_idx)` that says whether query $i$ may attend "
        "to key $j$. A **BlockMask** is the mask read in tiles of BLOCK_SIZE queries by "
        "BLOCK_SIZE keys: a tile the mask hides entirely is *skipped* (never computed), one it "
        "allows entirely is *full* (computed with no mask), the rest are *partial*. Pick a "
        "scheme's bias and the masks; every number below is what `flex_attention` computes on "
        "this view's q, k and v (the mods evaluated cell by cell, as its implementation on a "
        "CPU does), and the code at the foot runs `flex_attention` itself, downloaded."
    )


def scheme_words(choice: FlexChoice, inputs: FlexInputs) -> str:
    """What the picked scheme's score_mod closes over, or why it has none (markdown, the
    library's words escaped)."""
    if choice.scheme == NO_SCHEME:
        return "No scheme: no score_mod, so the logit is the score $q_i \\cdot k_j / \\sqrt{d}$."
    label = md_escape(scheme_entry(choice.scheme).label)
    if inputs.score is None:
        return f"{label}: " + md_escape(inputs.why_not or "no score_mod")
    return f"{label}'s score_mod `{inputs.score.name}` closes over " + md_escape(inputs.score.words)


def value_words(inputs: FlexInputs) -> str | None:
    """Where the scheme has a value term: what FlexAttention cannot do, and that the page draws
    the key term only."""
    if inputs.value_words is None:
        return None
    return (
        f"{inputs.value_words} This page runs the score_mod alone: its logits, weights and output "
        "are the key term's, without the value term."
    )


def mask_words(choice: FlexChoice, tokens: int, documents: int) -> str:
    """How the masks combine, and where the document segments came from."""
    parts = []
    if not choice.masks:
        parts.append("No mask: every query attends to every key, and no block is skipped.")
    elif len(choice.masks) > 1:
        joined = f" {choice.how} ".join(choice.kinds)
        rule = "every" if choice.how == "and" else "any"
        parts.append(
            f"The masks combine as {joined}: a key is visible where {rule} mask allows it."
        )
    if "document" in choice.kinds:
        parts.append(
            f"Documents: the text is split after each token ending in . ! or ?, here "
            f"{documents} document{'s' * (documents != 1)}"
            + (
                " (no text typed: the whole sequence is one; type sentences in the sidebar's "
                "text to split it)."
                if not tokens
                else "."
            )  # fmt: skip
        )
    return " ".join(parts)


def no_key_words(view: FlexView) -> str | None:
    """Queries the masks leave with no key: said, and how FlexAttention treats them."""
    if not view.no_key:
        return None
    count = len(view.no_key)
    shown = ", ".join(map(str, view.no_key[:12])) + (", ..." if count > 12 else "")
    return (
        f"The masks leave {count} quer{'ies' if count != 1 else 'y'} with no key to attend to "
        f"(query {shown}). FlexAttention gives such a row an output of 0 and a log-sum-exp of "
        "-inf; its weights are drawn blank. Loosen a mask (or combine with or) to give every "
        "query a key."
    )


def block_note(view: FlexView, block: int, n: int) -> str:
    """The share of blocks skipped, counted, and what it saves."""
    total = view.kinds.size
    counts = {kind: int((view.kinds == number).sum()) for number, kind in
              ((2, "full"), (1, "partial"), (0, "skipped"))}  # fmt: skip
    default = (
        " (FlexAttention's default)"
        if block == FLEX_DEFAULT_BLOCK
        else f"; FlexAttention's default is {FLEX_DEFAULT_BLOCK}"
    )
    one_block = (
        f" At n = {n} a block of {block} covers the whole sequence: one tile, so nothing can be "
        "skipped; pick a smaller block to see the tiles."
        if total == 1 and block >= n
        else ""
    )
    edge = (
        f" The last row and column of tiles run past n = {n}: FlexAttention pads them with "
        "hidden cells, so they count as partial."
        if n % block and total > 1
        else ""
    )
    return (
        f"Blocks of {block} x {block}{default}: {total} in all, {counts['full']} full (F, "
        f"filled square), {counts['partial']} partial (P, open square), {counts['skipped']} "
        f"skipped (S, thin cross): {view.skipped:.0%} of the blocks are never computed, work a "
        "fused kernel saves; a partial block is computed and then masked cell by cell."
        + one_block
        + edge
    )


def closed_table(items: list[Closed]) -> str:
    """What the mods close over, as a markdown table."""
    if not items:
        return "The mods close over no tensor: every number they use is written in their source."
    rows = ["| name | shape | dtype | in the download |", "|---|---|---|---|"]
    rows += [f"| `{c.name}` | {tuple(c.shape)} | {c.dtype} | {c.where} |" for c in items]
    return "\n".join(rows)


def weights_caption(view: FlexView, head: int) -> str:
    """How the drawn weights were read off flex_attention."""
    return (
        f"Head {head}, softmax scale {view.scale:.4g}. Bias: score_mod(s) - s at every cell, "
        "whatever the mask. Logits: score_mod(s) where the mask allows, blank where it hides. "
        "Weights: exp(logit - lse_i), lse_i the log-sum-exp of query i's logits over its allowed "
        "keys (what flex_attention returns beside its output)."
    )
