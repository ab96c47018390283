"""Counts and shares in notes: a share is never written as 0% or 100% unless it is exactly so,
and the written percentage is the true share to its last digit."""

from __future__ import annotations

import math
import re

from hypothesis import given
from hypothesis import strategies as st

from explorer.figures.numbers import count, percent


@given(st.integers(1, 10**9), st.data())
def test_a_share_rounds_to_0_or_100_percent_only_when_exact(whole: int, data) -> None:
    part = data.draw(st.integers(0, whole))
    text = percent(part, whole)
    value = float(text.rstrip("%"))
    if part == 0:
        assert text == "0%"
    elif part == whole:
        assert text == "100%"
    else:
        assert 0 < value < 100, text
    decimals = len(text.rstrip("%").partition(".")[2])
    assert math.isclose(value, 100 * part / whole, abs_tol=0.5 * 10**-decimals + 1e-12), text
    if 0 < part < whole:
        assert min(value, 100 - value) * 10**decimals >= 9.5, text  # two digits survive


def test_the_lookup_share_at_n_2048_k_1() -> None:
    n, k = 2048, 1
    beyond = sum(n - d for d in range(k + 1, n)) * 2  # pairs with |j - i| > k, by diagonal
    assert (count(beyond), count(n * n)) == ("4,188,162", "4,194,304")
    assert percent(beyond, n * n) == "99.85%"


@given(st.integers(-(10**12), 10**12))
def test_count_groups_thousands(value: int) -> None:
    text = count(value)
    assert int(text.replace(",", "")) == value
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})*", text), text
