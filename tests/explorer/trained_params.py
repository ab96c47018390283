"""A view on trained weights as the sidebar builds one, for tests that start from ViewParams."""

from __future__ import annotations

from explorer.frame.params import TRAINED_D_MODEL, TRAINED_HEADS, TRAINED_MASK, ViewParams


def trained_view(**fields: object) -> ViewParams:
    """A view on trained weights with the family's own sizes, as the sidebar sets them."""
    return ViewParams(
        weights="trained",
        d_model=TRAINED_D_MODEL,
        heads=TRAINED_HEADS,
        mask=TRAINED_MASK,
        **fields,
    )
