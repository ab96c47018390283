"""What each term of a scheme's logit reads: the query's content, the key's content, the
distance. Measured on the view's own q and k, never assumed from the formula.

For one head and each term t_ij on the window's allowed cells:

    query's content   RMS of t(q, k) - t(q̄, k): how far t moves when every query is replaced by
                      the window's mean query (its content removed, its position kept)
    key's content     RMS of t(q, k) - t(q, k̄), the keys replaced by their mean
    distance alone    standard deviation of t(q̄, k̄) over the cells: what is left with both
                      contents removed, a function of j - i (or a constant)

A term that moves with neither content but spreads with the distance is a bias of j - i; one
that reads the key and the distance but never the query says how a key is seen from each
distance depends on what the key holds, whoever asks. What that means for a scheme beside the
others is its own entry's words (``terms_note``), in its folder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.budget import plan_scheme
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.family.window_terms import window_allowed
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.schemes.catalogue import scheme_entry

CACHE_ENTRIES = 16
ZERO = 1e-6  # a part below this share of the term's own RMS reads as "does not read it"


@dataclass(frozen=True)
class TermReads:
    """Per term of one head (paper order): (query's content, key's content, distance alone)."""

    head: int
    parts: dict[str, tuple[float, float, float]]
    size: float  # the largest term's RMS, what "zero" is measured against


@cached(CACHE_ENTRIES)
def term_reads(params: ViewParams, config: SchemeConfig, head: int) -> TermReads:
    """What each term of ``config``'s scheme reads, for ``head`` on the view's window."""
    scheme = scheme_for(params, config)
    inputs = example_inputs(params, scheme.name)
    start, stop = params.window
    size = stop - start
    plan_scheme("term reads", scheme, size, size, traces=4 * (len(scheme.TERMS) + 1))
    q, k = (t[:, :, start:stop] for t in (inputs.q, inputs.k))
    mean_q, mean_k = (t.mean(dim=2, keepdim=True).expand_as(t) for t in (q, k))
    allowed = window_allowed(params).numpy()
    with torch.no_grad():
        both, no_query, no_key, neither = (
            {
                name: t[0, head].double().numpy()
                for name, t in scheme.terms(a, b, causal=params.causal).items()
            }
            for a, b in ((q, k), (mean_q, k), (q, mean_k), (mean_q, mean_k))
        )
    parts = {}
    for name in both:
        cells = both[name][allowed]
        parts[name] = (
            _rms(cells - no_query[name][allowed]),
            _rms(cells - no_key[name][allowed]),
            float(np.std(neither[name][allowed])),
        )
    largest = max(_rms(both[name][allowed]) for name in both)
    return TermReads(head, parts, largest)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0


def reads_table(reads: TermReads, name: str) -> str:
    """The markdown table of ``reads``, terms titled as the scheme's entry titles them."""
    titles = scheme_entry(name).term_titles
    lines = [
        "| term | moves with the query's content | with the key's content | spread with the "
        "distance alone |",
        "|---|---:|---:|---:|",
    ]
    for term, (by_query, by_key, by_distance) in reads.parts.items():
        cells = " | ".join(_number(x, reads.size) for x in (by_query, by_key, by_distance))
        lines.append(f"| {titles.get(term, term)} | {cells} |")
    return "\n".join(lines)


def _number(x: float, size: float) -> str:
    return "0" if x <= ZERO * max(size, 1e-30) else f"{x:.3f}"


def reads_note(reads: TermReads, name: str) -> str:
    """The sentence under the table: each term that reads the key and the distance but never
    the query, said so; else what the table's columns are."""
    titles = scheme_entry(name).term_titles
    key_and_distance = [
        titles.get(term, term)
        for term, (by_query, by_key, by_distance) in reads.parts.items()
        if by_query <= ZERO * reads.size and by_key > ZERO * reads.size
        and by_distance > ZERO * reads.size
    ]  # fmt: skip
    what = (
        f"Head {reads.head}, logit units, on the window's allowed cells: root mean square of "
        "the change when every query (or key) is replaced by the window's mean one, and the "
        "standard deviation left when both are."
    )
    if not key_and_distance:
        return what
    named = " and ".join(key_and_distance)
    return f"{what} {named[:1].upper()}{named[1:]}" + (
        " moves with the key's content and with the distance but never with the query: the "
        "key's own content decides how it is seen from each distance, whoever asks."
    )
