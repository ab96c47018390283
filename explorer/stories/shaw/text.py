"""The prose of the lookup, logits and attention pages: what each page says above and under its
figures, written from the view's sizes."""

from __future__ import annotations

import numpy as np

from explorer.figures.notes import band_note, clip_note, read_on_window, weights_note
from explorer.figures.numbers import percent, plural
from explorer.figures.token_view import LINES_PER_HEAD, WEIGHT_MIN, TokenView
from explorer.figures.unread import rows_text
from explorer.frame.params import ViewParams
from explorer.frame.widgets import md_escape
from explorer.pair.definition import Pair
from explorer.stories.shaw.views import AttentionView, RepeatedTokens
from explorer.weights.source import source_of

# ---- lookup ---------------------------------------------------------------------------------


def lookup_intro(params: ViewParams) -> str:
    """The page's first paragraph: which vector a pair reads, and the table's size."""
    n, k, d = params.length, params.k, params.head_dim
    return (
        "Pair (i, j) uses the learned vector for its clipped distance (Shaw et al. 2018, eqs. "
        f"3-4). Here n = {n}, k = {k}: {2 * k + 1} table rows of the head width d = {d}."
    )


def a_k_intro(params: ViewParams) -> str:
    """Why a^K is read one slice at a time."""
    n, d = params.length, params.head_dim
    return (
        f"a^K has shape (n, n, d) = ({n}, {n}, {d}): the tensor the efficient methods never "
        "build. Here it is read one slice at a time straight from the table, so its size never "
        "matters."
    )


# ---- relative logits ------------------------------------------------------------------------

LOGITS_INTRO = (
    "The logit of query i for key j has a content term and a relative term (Shaw et al. 2018, "
    "eq. 4). Every chart shows a term as it enters the softmax, the factor 1/√d included "
    "(as on every page): the queries are scaled first, as **tensor2tensor**, the library in "
    "which Shaw et al. and Huang et al. published their code, does."
)
METHODS_NOTE = (
    "Six ways to compute the same relative term q_i · a^K_ij / √d. *loop*: "
    "the definition, one pair at a time. *einsum* and *matmul*: gather a^K for every pair, the "
    "materialized a^K of shape (n, n, d), then multiply (tensor2tensor's way). *skew*: multiply "
    "the queries by one embedding per distance and move each row into place (the Skew page). "
    "*bucket*: multiply the queries by the 2k + 1 table rows once, Q (w^K)^T, then "
    "gather each pair's column. *banded*: only the 2k + 1 diagonals around j = i differ "
    "(every farther key reads an edge row), so it computes that band and one edge value a "
    "side per row; in attention it works through blocks of rows and never holds the whole "
    "(n, n) logits (Speed & memory)."
)


def logits_window(params: ViewParams) -> str:
    """On a window: why the relative term of its block is the whole story."""
    start, stop = params.window
    return (
        "The relative term depends on j - i only, so on the window it equals the relative term "
        f"of the window's {stop - start} queries over a sequence of {stop - start}: every method "
        "below runs on that block."
    )


def relative_note(params: ViewParams) -> str:
    """What to notice in every head's relative term: its band, and k = 0's one vector."""
    n, k = params.length, params.k
    return band_note(n, k, params.causal) + (" " + clip_note(n, 0) if k == 0 else "")


def definition_block(params: ViewParams, side: int) -> str | None:
    """When the loop definition ran on a corner of the window only (``side`` x ``side``)."""
    start, stop = params.window
    if side >= stop - start:
        return None
    return (
        f"The loop is the definition one pair at a time: it runs on the window's top-left {side} "
        f"x {side} block ({side * side} pairs). Each badge compares a method with the same "
        "definition written out (a^K gathered for a few rows at a time) on every cell that "
        "method computed, every head."
    )


def badge_label(params: ViewParams, method: str, side: int) -> str:
    """What one agreement badge compares: every cell drawn, or the block the method ran on."""
    start, stop = params.window
    if side < stop - start:
        where = f"its {side} x {side} block"
    elif stop - start == 1:
        where = "its one cell"
    else:
        where = f"all {stop - start} x {stop - start} cells"
        where += " of the window" if params.windowed else ""
    return f"{method} vs definition, {where}"


def t2t_intro(params: ViewParams, queries: int) -> str:
    """How a tensor of four axes is drawn, and what the matmul multiplies, on ``queries``
    query rows (the steps' n_q) against the window's keys."""
    start, stop = params.window
    keys = stop - start
    where = ["the window's keys" if params.windowed else "every key"]
    if queries < keys:  # a^K of every query would pass the view's memory budget
        where.append(f"the first {queries} queries, so that a^K stays ({queries}, {keys}, d)")
    sizes = f" Here n_q = {queries} and n_k = {keys}: " + " and ".join(where) + "."
    ahead = [r for r in source_of(params).never_trained() if r > 0]
    return (
        "A tensor of shape (A, B, R, C) is drawn as a grid of its R x C slices, one per (a, b). "
        "The matmul is batched over queries: each query i multiplies its b·h rows by its own "
        "a^K_i, of shape (n_k, d). The queries come in scaled by 1/√d, so the last step is the "
        "relative term drawn above."
        + (sizes if params.windowed or queries < keys else "")
        + (
            " The mask comes after these steps: their tensors hold the masked cells (j > i) "
            "too" + (f", read from {rows_text(ahead)}, never trained." if ahead else ".")
            if params.causal
            else ""
        )
    )


# ---- attention ------------------------------------------------------------------------------

ATTENTION_INTRO = (
    "Shaw et al. 2018, eqs. 2-4: the logit, the weights over the keys the mask allows, "
    "and the output, each with a relative term."
)
ALL_PADDING = "Every key is padding: all weights and outputs are zero (no key to attend to)."


def mask_caption(params: ViewParams) -> str:
    """Which keys each query sees and how a masked cell looks; with no mask, that no cell is
    blank, and why there is none where the default (trained) view was causal."""
    if params.mask == "none":
        return (
            "No mask: every query sees every key, so no cell is blank (random weights open "
            "without a mask; the trained models are causal: pick a mask in the sidebar). "
            f"Head width d = {params.head_dim}."
        )
    padded = padded_keys(params.n_pad)
    mask_text = {
        "causal": "causal mask: query i sees keys j <= i",
        "padding": f"padding mask: {padded}",
        "causal-padding": f"causal mask, and {padded}",
    }[params.mask]
    return f"{mask_text}. Masked cells are blank (grey). Head width d = {params.head_dim}."


def padded_keys(count: int) -> str:
    """ "the last 2 keys are padding", "the last key is padding"."""
    return "the last key is padding" if count == 1 else f"the last {count} keys are padding"


def keys_seen(params: ViewParams) -> str:
    """Which keys a query row of the window sees, in words, under the view's mask."""
    n, pad = params.length, params.n_pad
    start, stop = params.window
    real = n - pad  # keys 0 .. real - 1 are not padding
    if not params.causal:
        return (
            f"all {count_keys(n)}" if pad == 0 else f"the {count_keys(real)} that are not padding"
        )
    low, high = min(start + 1, real), min(stop, real)  # keys row i sees: min(i + 1, real)
    seen = f"{low}" if low == high else f"{low} to {high}"
    where = "keys 0 to i, i + 1 of them" if pad == 0 else "keys 0 to i that are not padding"
    return f"{where} ({seen} for rows {start}-{stop - 1})"


def count_keys(count: int) -> str:
    return plural(count, "key")


def attention_window(params: ViewParams) -> str:
    """On a window: why its query rows are exact though a softmax reads keys outside it."""
    return (
        "Each of the window's query rows is a softmax over every key its mask lets it see, in "
        f"the window or not: {keys_seen(params)}. Rows are independent, so the window is exact."
    )


def focus_text(params: ViewParams, view: AttentionView, head: int) -> str:
    """Where the head puts its weight (the note engine every weights map uses), read on the
    window when there is one."""
    source, start = source_of(params), params.window[0]
    if not np.isfinite(view.weights).any():
        return md_escape(
            f"Head {head}: every key is hidden from every query drawn (padding), so no row "
            "has a key to attend to and every weight is 0."
        )
    note = weights_note(
        view.weights, head, offset=start, unit=source.unit, labels=source.key_names()
    )
    return md_escape(note[:1].upper() + note[1:] + read_on_window(params))


def weight_inside(params: ViewParams, view: AttentionView) -> str | None:
    """On a window: how much of each row's weight falls on the window's keys (one number when
    every row puts the same share there); None when no row has any weight."""
    if view.weight_inside is None:
        return None
    if view.weight_inside[0] == 1:  # the keys outside are all hidden: after the row, or padding
        return (
            "The weights drawn are the window's keys only, and every key its rows see lies in "
            "the window: each row puts 100% of its weight on them."
        )
    low, high = (percent(share) for share in view.weight_inside)
    share = low if low == high else f"between {low} and {high}"
    return (
        f"The weights drawn are the window's keys only: each row puts {share} of its weight on "
        "them (100% over every key it sees)."
    )


def blank_caption(what: str) -> str:
    """The caption of a figure whose every cell the mask hides."""
    return f"Every cell is blank: every key is padding, so no query has {what}."


def weights_caption(weights: np.ndarray, caption: str) -> str:
    """A weights figure's caption, unless the mask hides every cell: its scale would then name
    a largest weight shown where none is."""
    return caption if np.isfinite(weights).any() else blank_caption("a weight")


def tokens_caption(tokens: TokenView, pair: Pair | None) -> str:
    """How the token view is read, and what it leaves out."""
    left_out = []
    if tokens.tokens_shown < tokens.tokens_total:
        left_out.append(f"the first {tokens.tokens_shown} of {tokens.tokens_total} tokens")
    left_out.append(
        f"lines for weights of at least {WEIGHT_MIN}, at most {LINES_PER_HEAD} per "
        f"head ({tokens.lines_shown} of {tokens.lines_total} drawn)"
    )
    return md_escape(
        "Query tokens left, key tokens right; a line's width and opacity grow with α, one "
        "colour per head (click a head in the legend to hide it, a token to keep only its "
        "lines)"
        + (f"; the black line is the picked pair ({pair.i}, {pair.j})" if pair else "")
        + ". Drawn: "
        + "; ".join(left_out)
        + "."
    )


TOKENS_LISTED = 8


def quoted(tokens: tuple[str, ...]) -> str:
    """Tokens as a learner can read them, a space included: 'e', ' ', 'x' (and how many more)."""
    listed = ", ".join(f"'{t}'" for t in tokens[:TOKENS_LISTED])
    more = len(tokens) - TOKENS_LISTED
    return listed + (f" and {more} more" if more > 0 else "")


def repeated_note(params: ViewParams, repeated: RepeatedTokens | None) -> str | None:
    """Repeated tokens: whether their copies' q, k and v are identical, measured on the view."""
    if repeated is None:
        return None
    listed = f"Repeated tokens ({quoted(repeated.tokens)})"
    if repeated.identical:
        return md_escape(
            f"{listed} have identical queries, keys and values here: their content is the "
            "same, so only the relative term tells the copies apart."
        )
    q, k, v = repeated.spread
    return md_escape(
        f"{listed} do not have identical queries, keys and values at layer {params.layer}: the "
        "layers below mixed in each copy's neighbours and position. Two copies lie up to "
        f"{q:.3g} apart in q, {k:.3g} in k and {v:.3g} in v (Euclidean distance in one head; "
        f"'{repeated.widest}' differs most). The relative term adds its own difference."
    )
