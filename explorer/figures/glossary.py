"""One meaning per symbol: every symbol the pages write, defined once, with the papers' names.

The pages follow these symbols in text, captions, formulas and axis titles; where a paper writes
another symbol for the same thing, the glossary says so (and only the glossary). It is drawn the
same way on every page, in the sidebar (app.py calls :func:`glossary`).
"""

from __future__ import annotations

import streamlit as st

from explorer.figures.tables import markdown_table

# (symbol as the pages write it, what it means, the papers' own names for it)
SYMBOLS: tuple[tuple[str, str, str], ...] = (
    ("n", "sequence length: positions 0 to n - 1", "Huang et al. (Music Transformer): L"),
    ("i, j", "query position, key position", ""),
    ("r = j - i", "distance of key j from query i (negative: j is earlier)", ""),
    ("k", "clip distance: every r beyond ±k uses the edge row of a (2k + 1)-row table", ""),
    (
        "d",
        "head dimension, the width of one head's q, k and v; every logit is divided by √d",
        "Shaw et al.: d_z; Vaswani et al.: d_k; Huang et al.: D (one head)",
    ),
    ("d_model", "model width: h heads of width d, d_model = h · d", "Vaswani et al.: d_model"),
    ("h", "number of heads", ""),
    ("q_i, k_j, v_j", "query of position i, key and value of position j (one head)", ""),
    ("e_ij, α_ij, z_i", "logit, attention weight (softmax of a row of e), output of query i", ""),
    ("a^K_ij, a^V_ij", "Shaw's relative key and value vectors of the pair: rows of w^K, w^V", ""),
    ("L", "the Music Transformer's table length (max_relative_position) only", ""),
)


def glossary_table() -> str:
    """The glossary as a markdown table (symbol, meaning, the papers' names)."""
    return markdown_table(
        {
            "symbol": [s for s, _, _ in SYMBOLS],
            "meaning": [m for _, m, _ in SYMBOLS],
            "in the papers": [p for _, _, p in SYMBOLS],
        }
    )


def glossary() -> None:
    """The glossary, folded, where it is drawn (the sidebar of every page)."""
    with st.expander("Symbols (the same on every page)", icon=":material/menu_book:"):
        st.markdown(glossary_table())
