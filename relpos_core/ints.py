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
