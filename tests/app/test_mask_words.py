"""What the pages say about masked cells is true of what they draw: random weights open without
a mask (the trained view is causal), and then no caption says that masked cells are blank."""

from __future__ import annotations

import pytest

from tests.app.conftest import PAGES, assert_clean, open_page

MASKED_WORDS = ("Masked cells are blank", "Grey cells are masked", "masked cells are blank")


def shown_text(at) -> str:
    parts = [*at.caption, *at.markdown, *at.info]
    return " ".join(p.value.replace("\\", "") for p in parts)


@pytest.mark.parametrize("page", PAGES)
def test_no_word_of_masked_cells_without_a_mask(page: str) -> None:
    at = open_page(page, weights="random")
    assert_clean(at)
    assert at.radio(key="mask").value == "none"
    text = shown_text(at)
    assert not [w for w in MASKED_WORDS if w in text], text


def test_the_attention_page_says_why_there_is_no_mask() -> None:
    at = open_page("attention", weights="random")
    assert_clean(at)
    text = shown_text(at)
    assert "no cell is blank" in text and "the trained models are causal" in text
    at = open_page("attention", weights="random", mask="causal")
    assert_clean(at)
    assert "Masked cells are blank (grey)" in shown_text(at)
