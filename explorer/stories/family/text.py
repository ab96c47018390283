"""The words of the Position schemes and Compare schemes pages: their introductions, and the
captions and notes that read the numbers drawn (every string here is shown as it is built)."""

from __future__ import annotations

import numpy as np

from explorer.figures.notes import weights_note
from explorer.figures.numbers import plural
from explorer.frame.params import ViewParams
from explorer.stories.family.controls import ProfileChoice
from explorer.stories.family.learned_terms import LearnedTerms
from explorer.stories.family.plots import DENSE_DISTANCE, shown_distances
from explorer.stories.family.profiles import TOEPLITZ_RTOL, ProfileView
from explorer.weights.source import TensorSource
from relpos_core.schemes.catalogue import scheme_entries, scheme_entry, scheme_label
from relpos_lab.family.registry import model_words


def _names(schemes) -> str:
    names = [scheme_label(s) for s in schemes]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def scaling_words() -> str:
    """Which position terms carry 1/√d, and which biases are added as they are (each
    catalogue entry's ``scaled``: a bias that involves no query is added as its paper adds it)."""
    scaled = [e.name for e in scheme_entries() if e.scaled and e.divisor == "√d"]
    unscaled = [e.name for e in scheme_entries() if not e.scaled]
    others = [e for e in scheme_entries() if e.scaled and e.divisor != "√d"]
    return (
        f"the terms of {_names(scaled)}, products with the query, divided by √d"
        + "".join(f"; {e.label}'s by {e.divisor}" for e in others)
        + (
            f"; the biases of {_names(unscaled)} added as they are, undivided, as in their papers"
            if unscaled
            else ""
        )
    )


def content_words(names=None) -> str:
    """The content term the schemes ``names`` (all by default) share, in words: q_i · k_j / √d,
    and which schemes divide it otherwise (DeBERTa by √(3d), with its position terms)."""
    entries = [scheme_entry(n) for n in names] if names else list(scheme_entries())
    other = [e for e in entries if e.divisor != "√d"]
    if not other:
        return "the content term q_i · k_j / √d"
    if len(other) == len(entries):
        if len({e.divisor for e in other}) == 1:
            return f"the content term q_i · k_j / {other[0].divisor}"
    return (
        "the content term q_i · k_j / √d ("
        + "; ".join(f"{e.label} divides it by {e.divisor}" for e in other)
        + ")"
    )


def intro() -> str:
    """The page's first paragraph: how many schemes the catalogue holds, and what they share."""
    return (
        f"{number_word(len(scheme_entries())).capitalize()} published ways to make attention "
        "depend on the distance j - i, each on the same queries, keys and values as every other "
        f"page. All share {content_words()}; they differ only in what position adds "
        "to the logit, the **position term** drawn here (in logit units: "
        f"{scaling_words()})."
    )


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def terms_heading(entry, head: int) -> str:
    """The heading over a scheme's terms drawn apart: how many, which head, their divisor."""
    words = number_word(len(entry.term_titles))
    return f"**{entry.label}'s {words} terms, head {head}** (all divided by {entry.divisor})"


def number_word(count: int) -> str:
    """A small count in words (``four``), a large one in digits."""
    return NUMBER_WORDS.get(count, str(count))


def compare_intro(source: TensorSource, names: tuple[str, ...] = ()) -> str:
    """What the Compare schemes page puts side by side: two trained models, or two schemes
    (``names``) on one q, k, v."""
    if source.trained:
        return (
            "Two trained models of the family on the same characters. They are identical but for "
            "how position enters (same data, seed and steps), and each draws its own queries, "
            "keys and values: every difference comes from position, directly in the logit and "
            "through what each model learned around it."
        )
    return "Two position schemes on the same queries, keys and values (the sidebar's): " + (
        f"{content_words(names)} is the same, so every difference in the weights comes "
        "from what each scheme adds for position."
        if len({scheme_entry(n).divisor for n in names}) <= 1
        else f"{content_words(names)}, so the two differ in that scale as well as in what "
        "each adds for position."
    )


def scheme_note(
    letter: str, name: str, weights: np.ndarray, head: int, source: TensorSource
) -> str:
    """Where one compared scheme's head puts its weight (read on the window, if any)."""
    start = source.params.window[0]
    note = weights_note(
        weights[head], head, offset=start, unit=source.unit, labels=source.key_names()
    )
    return f"{letter}, {scheme_label(name)}: {note}"


def alone_note(letter: str, other: str) -> str:
    """Why only one scheme is drawn: the other cannot run on this view."""
    return (
        f"Only {letter} is drawn: {other} cannot run on this view (see above), so there is no "
        "difference to draw. Pick another scheme for it, or change the sidebar's setting."
    )


def mask_note(params: ViewParams) -> str:
    """The caption sentence for the blank cells of a masked view ("" without a mask)."""
    return "" if params.mask == "none" else f" Masked cells ({params.mask} mask) are blank."


def toeplitz_intro(first: ProfileView, params: ViewParams) -> str:
    """What the table of section 2 measures, and where."""
    n, heads = params.length, params.heads
    start, stop = params.window
    size = stop - start
    where = (
        "over the whole n x n matrix"
        if first.over == "whole"
        else f"on the window's {size} x {size} block (the whole matrix would take too long at "
        f"n = {n} with {heads} heads)"
    )
    return (
        "A term is a function of j - i alone when it is constant along every diagonal (a "
        "Toeplitz matrix). The table gives its largest distance to the nearest Toeplitz matrix, "
        f"{where}, for the position term as computed with these q and k, and for its "
        "position-only part (q and k replaced by their mean over positions: content removed). "
        f"Schemes that read the query or key ({', '.join(_reading_content())}) are not Toeplitz "
        "with content; every position-only part is. *yes* allows float32 rounding: a deviation "
        f"up to {TOEPLITZ_RTOL:g} of the term's largest |value|."
    )


def _reading_content() -> list[str]:
    return [e.label for e in scheme_entries() if e.reads_content]


def missing_note(missing: dict[str, str]) -> str:
    """The schemes left out of the table and the profiles, and why."""
    return (
        "Left out here and below, as they cannot run on this view: "
        + "; ".join(f"{scheme_label(s)} ({reason})" for s, reason in missing.items())
        + "."
    )


def memory_note(params: ViewParams, name: str) -> str:
    """What the table's memory column counts, and what the picked scheme builds besides."""
    n, heads = params.length, params.heads
    return (
        f"Memory: each scheme's own estimate (logit_bytes) of its logit terms, their sum and its "
        f"position work for one sequence of n = {n} with {heads} heads, float32. The picked "
        f"scheme is in bold; besides its terms, {scheme_label(name)} builds "
        f"{scheme_entry(name).memory_text}."
    )


def profile_caption(
    first: ProfileView,
    params: ViewParams,
    name: str,
    pick: ProfileChoice,
    *,
    schemes: int,
    picked: str,
) -> str:
    """The caption under the profile chart of ``schemes`` schemes: what each curve and band is
    on this view, then ``picked``, the note on the distance picked on the page."""
    n, heads = params.length, params.heads
    head, position_only = pick.head, pick.position_only
    _, stride = shown_distances(first.distance)
    what = (
        f"the mean over every cell at that distance; the band around {scheme_label(name)} (the "
        "picked scheme) is ± one standard deviation, the content's spread"
        + (" and the heads' differences" if head is None and heads > 1 else "")
        if not position_only
        else "the position-only part (content removed), exact from the first and last query "
        "rows"
        + (
            ""
            if first.with_content
            else f" (the term with content over all {n} x {n} cells and {heads} heads of "
            f"{number_word(schemes)} schemes would take several seconds)"
        )
        + (
            f"; the band around {scheme_label(name)} is ± one standard deviation over the heads"
            if head is None and heads > 1
            else ""
        )
    )
    parts = [
        f"shape ({schemes} schemes, {plural(len(first.distance), 'distance')}).",
        f"{'Pooled over all ' + str(heads) + ' heads' if head is None else 'Head ' + str(head)}: "
        f"{what}.",
        "Each curve divided by its largest |mean| (scales differ: ALiBi falls to -m·n)."
        if pick.normalise
        else "",
        f"Distances beyond ±{DENSE_DISTANCE - 1} are drawn every {stride}th." if stride > 1 else "",
        "Causal mask: only j <= i exists." if params.causal else "",
        "Padding keys count in the profile (it is the term, not the weights)."
        if "padding" in params.mask
        else "",
        picked.strip(),
    ]
    return " ".join(p for p in parts if p)


def beyond_intro(trained_length: int, marked: str) -> str:
    """The sentence above the table of what each scheme does past a training length."""
    return (
        f"A model trained on sequences of {plural(trained_length, 'position')} has seen "
        f"|j - i| <= "
        f"{trained_length - 1} ({marked}). Beyond them each scheme:"
    )


def learned_caption(learned: LearnedTerms, part: str, layer: int, picked: str) -> str:
    """The caption under the charts of what each trained scheme learned."""
    return (
        f"Layer {layer} of each scheme's trained model ({model_words(learned.models[0])} for "
        "Shaw's), read on {len(learned.distance)} held-out characters, four "
        f"times the training length: the position term in logit units "
        f"({scaling_words()}), "
        + (
            "with q and k replaced by their mean over the text (content removed), so each "
            "line is the function of j - i the head learned"
            if part == "position only"
            else "averaged over every pair of the text at that distance (few pairs at the "
            "far left: the text's one pair at j - i = "
            f"{int(learned.distance[0])} is not an average)"
        )
        + f". One line per head, each chart on its own scale. Dashed: j - i = "
        f"-{learned.context - 1}, the farthest a {learned.context}-character training "
        "window holds; shaded: distances no training window held." + picked
    )
