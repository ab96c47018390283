"""The prose of the lookup, logits and attention pages: what each page says above and under its
figures, written from the view's sizes."""

from __future__ import annotations

from explorer.frame.params import ViewParams

# ---- lookup ---------------------------------------------------------------------------------


def lookup_intro(params: ViewParams) -> str:
    """The page's first paragraph: which vector a pair reads, and the table's size."""
    n, k, d = params.length, params.k, params.head_dim
    return (
        "Pair (i, j) uses the learned vector for its clipped distance (Shaw et al. 2018, eqs. "
        f"3-4). Here n = {n}, k = {k}: {2 * k + 1} table rows of size d_z = {d}."
    )


def a_k_intro(params: ViewParams) -> str:
    """Why a^K is read one slice at a time."""
    n, d = params.length, params.head_dim
    return (
        f"a^K has shape (n, n, d_z) = ({n}, {n}, {d}): the tensor the efficient methods never "
        "build. Here it is read one slice at a time straight from the table, so its size never "
        "matters."
    )
