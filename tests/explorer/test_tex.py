"""A display formula breaks only after a top-level relation, between clauses or where its TeX
allows it: every other stretch is one group, and the groups read back as the formula given."""

from __future__ import annotations

import pytest

import explorer.figures.formulas as f
from explorer.frame.tex import breakable, plain

ALL = {name: value for name, value in vars(f).items() if name.isupper() and isinstance(value, str)}


def test_a_sum_is_never_split() -> None:
    shown = breakable(r"\operatorname{clip}(j - i, k) + k \;\in\; \{0, \dots, 2k\}")
    assert shown == r"{\operatorname{clip}(j - i, k) + k \;}\in{\; \{0, \dots, 2k\}}"


def test_environments_and_arguments_stay_whole() -> None:
    tex = r"\begin{gathered}a = b,\\ c = d\end{gathered}"
    assert breakable(tex) == "{" + tex + "}"
    assert breakable(r"\frac{a = b}{c}") == r"{\frac{a = b}{c}}"


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_formula_reads_back(name: str) -> None:
    assert plain(breakable(ALL[name])) == ALL[name]
