"""The shared formulas are valid LaTeX as far as braces go, and use Shaw et al.'s symbols."""

import explorer.figures.formulas as f

ALL = {name: value for name, value in vars(f).items() if name.isupper() and isinstance(value, str)}


def test_braces_balance():
    for name, latex in ALL.items():
        depth = 0
        for char in latex.replace(r"\{", "").replace(r"\}", ""):
            depth += (char == "{") - (char == "}")
            assert depth >= 0, name
        assert depth == 0, name


def test_whole_logit_is_e_and_tables_are_clipped():
    assert f.LOGIT.startswith("e_{ij} =")
    assert "e_{ij}" not in f.RELATIVE_TERM  # the relative term alone is not e_ij
    assert r"\operatorname{clip}(j - i" in f.A_K and r"\operatorname{clip}(j - i" in f.A_V
