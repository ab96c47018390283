"""Display formulas that a narrow screen breaks only where a reader expects a new line.

KaTeX lets a display formula wrap (assets/layout.css allows it on a phone) after any top-level
relation or binary operator, so a phone broke ``clip(j - i, k) + k`` after its +. Here each
stretch between two top-level relations (=, \\in, \\le, ...), clause spaces (\\quad) or explicit
``\\allowbreak`` is set as one group, which KaTeX never breaks inside: a formula then wraps only
after a relation, between its clauses, or where its author allowed it.
"""

from __future__ import annotations

import re

import streamlit as st

RELATIONS = (r"\in", r"\le", r"\leq", r"\ge", r"\geq", r"\approx", r"\to", r"\ne")
CLAUSES = (r"\quad", r"\qquad")  # a new clause: a break here keeps the space on the first line
# An environment's \begin{x} or \end{x}, a control word or symbol, a brace, or a character.
_TOKEN = re.compile(r"\\(?:begin|end)\{[^}]*\}|\\[A-Za-z]+|\\.|[{}]|[^\\{}]", re.DOTALL)


def breakable(tex: str) -> str:
    r"""``tex`` with every stretch between top-level break points in braces.

    >>> print(breakable(r"a = b + c,\quad x \in \{0, 1\}"))
    {a }={ b + c,}\allowbreak\quad{ x }\in{ \{0, 1\}}
    """
    out: list[str] = []
    piece: list[str] = []
    depth = 0
    for token in _TOKEN.findall(tex):
        if token == "{" or token == r"\left" or token.startswith(r"\begin{"):
            depth += 1
        elif token == "}" or token == r"\right" or token.startswith(r"\end{"):
            depth -= 1
        top = depth == 0
        if top and (token == "=" or token in RELATIONS):
            out += ["{", *piece, "}", token]
        elif top and token in CLAUSES:
            out += ["{", *piece, "}", r"\allowbreak", token]
        elif top and token == r"\allowbreak":  # a list's comma stays outside: its space after
            comma = [","] if piece and piece[-1] == "," else []
            out += ["{", *piece[: len(piece) - len(comma)], "}", *comma, token]
        else:
            piece.append(token)
            continue
        piece = []
    out += ["{", *piece, "}"]
    return "".join(out)


def plain(shown: str) -> str:
    r"""The formula :func:`breakable` was given, from what it returned (as a test reads a page):
    its groups' braces and the breaks it added before a clause dropped.

    >>> tex = r"e = \frac{a}{b} + c,\quad x \le y"
    >>> plain(breakable(tex)) == tex
    True
    """
    out: list[str] = []
    depth = 0
    tokens = _TOKEN.findall(shown)
    for at, token in enumerate(tokens):
        if depth == 0 and token in "{}":
            depth += token == "{"
            continue
        if depth == 1 and token == "}":
            depth = 0
            continue
        if token == "{" or token == r"\left" or token.startswith(r"\begin{"):
            depth += 1
        elif token == "}" or token == r"\right" or token.startswith(r"\end{"):
            depth -= 1
        if (
            depth == 0
            and token == r"\allowbreak"
            and tokens[at + 1 : at + 2] in ([r"\quad"], [r"\qquad"])
        ):
            continue
        out.append(token)
    return "".join(out)


def latex(tex: str) -> None:
    """``st.latex`` of ``tex``, breakable only where :func:`breakable` allows."""
    st.latex(breakable(tex))
