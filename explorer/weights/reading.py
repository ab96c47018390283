"""What a view reads, named without loading a model: its axis labels, the characters a trained
view reads and the family model that reads them.

Nothing here imports torch: the landing page draws with these alone, so a visitor's first page
does not wait for torch to load (``explorer.weights.trained`` runs the models).
"""

from __future__ import annotations

import re
from functools import cache

from explorer.frame.params import ViewParams, trained_model_name
from relpos_core.schemes.catalogue import scheme_entry, scheme_names
from relpos_lab.family.corpus import held_out_text

SHOWN = {" ": "␣", "\n": "↵", "\t": "⇥"}  # characters with no glyph of their own
PROSE = re.compile(r"\n[ ]*(?=[A-Z][a-z]+ [a-z])")  # a line that starts a sentence of prose


def shown(char: str) -> str:
    """A character as an axis label: whitespace gets a visible sign."""
    return SHOWN.get(char, char)


@cache
def held_out_passage() -> str:
    """The held-out text from its first sentence of prose on (it opens inside a code example,
    whose indentation would fill a short window with spaces)."""
    text = held_out_text()
    start = PROSE.search(text)
    return text[start.end() :] if start else text


def sequence(params: ViewParams) -> str:
    """The characters a trained view reads: the typed text, else a held-out passage of n."""
    return params.text[: params.length] if params.text else held_out_passage()[: params.length]


def model_for(params: ViewParams, scheme: str = "shaw") -> str:
    """The family model a trained view of ``scheme`` draws: its catalogue entry's model, or,
    for a scheme whose setting is the sidebar's k, the model trained at that k (Shaw's). A
    ValueError for a scheme no model was trained with.

    >>> model_for(ViewParams(k=2)), model_for(ViewParams(k=2), "rope")
    ('shaw-k2', 'rope')
    """
    if scheme not in scheme_names():  # a family model with no scheme: ``nope``, ``sinusoidal``
        return scheme
    entry = scheme_entry(scheme)
    if entry.model is None:
        raise ValueError(
            f"{entry.label} has no trained model in the family; switch the sidebar's weights "
            "to random to draw it"
        )
    if entry.from_view("k"):
        return trained_model_name(params.k)
    return entry.model


def axis_characters(params: ViewParams) -> tuple[str, ...]:
    """The view's characters as axis labels."""
    return tuple(shown(c) for c in sequence(params))


def axis_labels(params: ViewParams) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(query labels, key labels): the typed tokens on both axes (with trained weights the
    characters read, typed or held out), else q0.. and k0..."""
    if params.trained:
        characters = axis_characters(params)
        return characters, characters
    tokens = params.tokens
    if tokens:
        return tokens, tokens
    n = params.length
    return tuple(f"q{i}" for i in range(n)), tuple(f"k{j}" for j in range(n))
