"""Counts and shares as a note writes them: thousands separators, and a percentage that is never
rounded to "0%" or "100%" unless the share is exactly 0 or 1.

A share p in (0, 1) is written with as many decimals as give two significant digits to the
nearer of p and 1 - p, so 4,188,162 of 4,194,304 reads 99.85% (1 - p = 0.15%), and 30 of 64
reads 47%.
"""

from __future__ import annotations

import math

SIGNIFICANT = 2  # digits kept of the smaller of p and 1 - p, in percent


def count(value: int) -> str:
    """An integer with thousands separators.

    >>> count(4188162), count(64), count(-1200)
    ('4,188,162', '64', '-1,200')
    """
    return f"{value:,}"


def plural(value: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, singular for exactly one (``many``: the plural, if not noun + s).

    >>> (
    ...     plural(1, "cell"),
    ...     plural(0, "cell"),
    ...     plural(1200, "character"),
    ...     plural(2, "query", "queries"),
    ... )
    ('1 cell', '0 cells', '1,200 characters', '2 queries')
    """
    return f"{count(value)} {noun if value == 1 else many or noun + 's'}"


def percent(part: float, whole: float = 1.0) -> str:
    """``part / whole`` (a share when whole is left out) as a percentage, "0%" and "100%" only
    when exactly so (a sum of float weights within 1e-12 of 1 is 1).

    >>> percent(4188162, 4194304), percent(30, 64), percent(1, 3), percent(0, 5), percent(5, 5)
    ('99.85%', '47%', '33%', '0%', '100%')
    >>> percent(1, 4096), percent(4095, 4096)
    ('0.024%', '99.976%')
    >>> percent(0.26), percent(0.9996), percent(0.004), percent(1.0)
    ('26%', '99.960%', '0.40%', '100%')
    """
    if whole <= 0:
        raise ValueError(f"whole must be > 0, got {whole}")
    share = round(part / whole, 12)
    if share <= 0 or share >= 1:
        return f"{100 * share:.0f}%"
    smaller = 100 * min(share, 1 - share)  # in percent: the digits that must survive rounding
    decimals = max(0, SIGNIFICANT - 1 - math.floor(math.log10(smaller)))
    return f"{100 * share:.{decimals}f}%"
