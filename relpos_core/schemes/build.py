"""A scheme built by name: the catalogue's class, its parameters drawn from a seed."""

from __future__ import annotations

import torch

from relpos_core.schemes.base import PositionScheme
from relpos_core.schemes.catalogue import scheme_entry
from relpos_core.validation import check_int


def scheme_class(name: str) -> type[PositionScheme]:
    """The class that computes scheme ``name`` (ValueError for a name the catalogue lacks)."""
    cls = scheme_entry(name).cls()
    if not (isinstance(cls, type) and issubclass(cls, PositionScheme)) or cls.name != name:
        raise ValueError(f"the catalogue's class for {name!r} is not a PositionScheme named so")
    return cls


def make_scheme(name: str, heads: int, head_dim: int, seed: int = 0, **params) -> PositionScheme:
    """The scheme ``name`` with its parameters drawn from ``seed`` (the global RNG untouched).

    ``params`` are the scheme's own keyword arguments (e.g. ``max_relative_position`` for shaw,
    ``num_buckets`` for t5, ``base`` for rope).

    >>> make_scheme("alibi", heads=2, head_dim=4)
    ALiBi(heads=2, head_dim=4, max_bias=8.0)
    """
    cls = scheme_class(name)
    seed = check_int("seed", seed, 0, 2**63 - 1)
    if "generator" in params:
        raise ValueError(
            "make_scheme draws parameters from seed; pass seed=, not generator= (construct "
            f"{cls.__name__} directly to use your own generator)"
        )
    if scheme_entry(name).learned:
        params["generator"] = torch.Generator().manual_seed(seed)
    try:
        return cls(heads, head_dim, **params)
    except TypeError as error:  # an unknown keyword: name what the scheme takes
        if "unexpected keyword" not in str(error):
            raise
        raise ValueError(f"scheme {name!r} does not take those parameters: {error}") from None
