"""Checks of plain integer arguments: sizes, positions, distances. Imports nothing heavy, so
a torch-free caller (``relpos_core.clip``) validates exactly as the tensor functions do."""

from __future__ import annotations

import numbers

#: Largest int any size, position or distance may take: keeps int64 index arithmetic exact.
INT_LIMIT = 2**62


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int if ``low <= value <= high`` (default high: INT_LIMIT).

    >>> check_int("n (sequence length)", 4, 1)
    4
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    top = INT_LIMIT if high is None else high
    if value < low or value > top:
        if high is not None:
            allowed = f"in [{low}, {high}]"
        else:
            allowed = f">= {low}" if value < low else "<= 2**62 (INT_LIMIT)"
        raise ValueError(f"{name} must be {allowed}, got {value}")
    return value


def check_index_args(
    n_q: object, n_k: object, max_relative_position: object, query_offset: object
) -> tuple[int, int, int, int]:
    """(n_q, n_k, k, query_offset) of a clip-index function, each checked by name.

    >>> check_index_args(4, 4, 2, 0)
    (4, 4, 2, 0)
    """
    k = check_int("max_relative_position (clip distance k)", max_relative_position, 0)
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    offset = check_int(
        "query_offset (position of the first query)", query_offset, -INT_LIMIT, INT_LIMIT
    )
    return n_q, n_k, k, offset
