"""The picked pair's numbers, each formula written out with the pair's own values."""

from __future__ import annotations

import numpy as np
import streamlit as st

from explorer.frame.params import ViewParams
from explorer.frame.tex import latex
from explorer.frame.widgets import md_escape
from explorer.pair.controls import current_pair
from explorer.pair.definition import Pair
from explorer.pair.facts import PairFacts, pair_facts
from explorer.pair.marks import diagonal_text
from explorer.weights.reading import axis_labels

VECTOR_SHOWN = 4  # entries of a^K_ij written out


def vector_text(v: np.ndarray) -> str:
    """LaTeX of a vector's first entries: (0.12, -0.4, ..., 8 entries); a narrow screen may
    break the line after any comma (``\\allowbreak``)."""
    head = r",\allowbreak ".join(f"{x:.3g}" for x in v[:VECTOR_SHOWN])
    more = rf",\allowbreak \ldots \text{{ ({len(v)} entries)}}" if len(v) > VECTOR_SHOWN else ""
    return rf"({head}{more})"


def tex_number(x: float) -> str:
    """``x`` to 4 significant digits in LaTeX: a power of ten as one, never an e that reads as
    a logit e.

    >>> tex_number(0.5)
    '0.5'
    >>> print(tex_number(3.6151e-05))
    3.615 \\times 10^{-5}
    """
    mantissa, e, exponent = f"{x:.4g}".partition("e")
    return mantissa if not e else rf"{mantissa} \times 10^{{{int(exponent)}}}"


def signed(x: float) -> str:
    return tex_number(x) if x >= 0 else f"({tex_number(x)})"


def pair_lines(facts: PairFacts, d: int, with_logits: bool, with_output: bool) -> list[str]:
    """The LaTeX lines of the card, top to bottom (see :mod:`explorer.pair.definition` for the
    maths)."""
    p = facts.pair
    i, j, k = p.i, p.j, p.k
    ij = f"{i},{j}"
    lines = [
        rf"j - i = {j} - {i} = {p.distance}, \quad \operatorname{{clip}}({p.distance}, {k}) + {k}"
        rf" = {p.table_row}",
        rf"a^K_{{{ij}}} = w^K_{{{p.clipped}}} = {vector_text(facts.a_k)}",
    ]
    if with_logits:
        root = rf"\sqrt{{{d}}}"
        lines.append(
            rf"e_{{{ij}}} = \frac{{q_{{{i}}} \cdot k_{{{j}}}}}{{{root}}} + "
            rf"\frac{{q_{{{i}}} \cdot a^K_{{{ij}}}}}{{{root}}} = {tex_number(facts.content)} + "
            rf"{signed(facts.relative)} = {tex_number(facts.logit)}"
        )
    if with_output and facts.allowed:
        lines.append(
            rf"\alpha_{{{ij}}} = \frac{{\exp(e_{{{ij}}})}}{{\sum_{{j'}} \exp(e_{{{i},j'}})}}"
            rf" = {tex_number(facts.weight)}"
        )
        lines.append(
            rf"\frac{{\alpha_{{{ij}}} (v_{{{j}}} + a^V_{{{ij}}}) \cdot z_{{{i}}}}}"
            rf"{{\lVert z_{{{i}}} \rVert^2}} = {tex_number(facts.share)}"
        )
    return lines


def pair_card(
    params: ViewParams,
    pair: Pair | None,
    head: int | None = None,
    *,
    with_output: bool = True,
) -> None:
    """A bordered box with the pair's numbers for ``head`` (None: the table part only)."""
    if pair is None:
        st.caption(
            ":material/ads_click: Click any (i, j) cell, or set *query i* and *key j* in the "
            "sidebar, to follow one pair through every figure of every page."
        )
        return
    n = params.length
    if not (pair.i < n and pair.j < n):
        return
    rows, cols = axis_labels(params)
    facts = pair_facts(params, 0 if head is None else head, pair.i, pair.j)
    with st.container(border=True):
        where = f"head {head}, " if head is not None else ""
        st.markdown(
            md_escape(
                f"Picked pair: query i = {pair.i} “{rows[pair.i]}”, key j = {pair.j} "
                f"“{cols[pair.j]}” ({where}by the definition, from the same q, k, v and tables "
                "as the figures)"
            )
        )
        st.caption(
            md_escape(
                f"On the heatmaps the pair's cell is outlined, and {diagonal_text(pair.distance)}."
            )
        )
        with_output = with_output and head is not None  # a weight belongs to a head
        for line in pair_lines(facts, params.head_dim, head is not None, with_output):
            latex(line)
        if with_output:
            if facts.allowed:
                st.caption(
                    "The shares of a row's pairs sum to 1: each is the part of z_i along z_i "
                    "that its weighted value brings."
                )
            else:
                st.caption(
                    md_escape(
                        f"α = 0: {facts.why_hidden}, so this pair adds nothing to z_{pair.i}."
                    )
                )


def pair_row_note(where: str, k: int) -> None:
    """One caption under tables whose rows are the distances clip(j - i, k) + k of a model's
    own ``k``: which row the picked pair reads there. Nothing without a pick."""
    pair = current_pair()
    if pair is None:
        return
    own = Pair(pair.i, pair.j, k)
    st.caption(
        md_escape(
            f"Picked pair (i, j) = ({pair.i}, {pair.j}), j - i = {pair.distance}: its row "
            f"clip({pair.distance}, {k}) + {k} = {own.table_row} (distance {own.clipped}) is "
            f"outlined on {where}."
        )
    )


def span(positions: range) -> str:
    """``range(2, 6)`` -> '2-5', ``range(3, 4)`` -> '3'."""
    first, last = positions[0], positions[-1]
    return f"{first}" if first == last else f"{first}-{last}"


def pair_note(
    where: str,
    queries: range,
    keys: range,
    *,
    names: tuple[str, str] = ("queries", "keys"),
    detail: str = "",
) -> None:
    """One caption under figures whose rows are queries i and columns keys j (``queries`` and
    ``keys``, their own sequence or a window of the view's; ``names``: what they are, plural):
    the picked pair, its j - i, and whether ``where`` outlines its cell (``detail``: what else
    is outlined). Nothing without a pick."""
    pair = current_pair()
    if pair is None:
        return
    text = f"Picked pair (i, j) = ({pair.i}, {pair.j}), j - i = {pair.distance}: "
    queries_are, keys_are = names
    if pair.i in queries and pair.j in keys:
        text += f"its cell is outlined on {where}{detail}; {diagonal_text(pair.distance)}."
    else:
        text += (
            f"its cell is not on {where}, whose {queries_are} are i = {span(queries)} and "
            f"{keys_are} j = {span(keys)}."
        )
    st.caption(md_escape(text))
