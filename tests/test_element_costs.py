"""scripts/element_costs.py: its page draws the floor's chart and exactly ``ELEMENT_COUNT``
elements of the kind it is asked for, and a kind's cost per element is its open less the
page with none, over the count."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from scripts.element_costs import per_element, table
from scripts.element_page import KINDS

PAGE = str(Path(__file__).resolve().parents[1] / "scripts" / "element_page.py")

# kind -> (AppTest's element list, where it is drawn)
DRAWN = {
    "markdown": ("markdown", "main"),
    "inline formula": ("markdown", "main"),
    "st.latex": ("latex", "main"),
    "caption": ("caption", "main"),
    "info": ("info", "main"),
    "expander (folded)": ("expander", "main"),
    "number_input": ("number_input", "sidebar"),
    "selectbox": ("selectbox", "sidebar"),
    "radio": ("radio", "sidebar"),
}


def page_with(kind: str, count: int, monkeypatch) -> AppTest:
    monkeypatch.setenv("ELEMENT_KIND", kind)
    monkeypatch.setenv("ELEMENT_COUNT", str(count))
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    return at


def test_the_page_with_none_is_the_floor_page(monkeypatch) -> None:
    at = page_with("none", 5, monkeypatch)
    assert len(at.get("plotly_chart")) == 1 and len(at.sidebar.slider) == 1
    assert len(at.main.markdown) == 0 and len(at.sidebar) == 1


@pytest.mark.parametrize("kind", sorted(DRAWN))
def test_each_kind_adds_exactly_count_elements_of_it(kind: str, monkeypatch) -> None:
    element, where = DRAWN[kind]
    at = page_with(kind, 3, monkeypatch)
    found = getattr(at.sidebar if where == "sidebar" else at.main, element)
    assert len(found) == 3
    if kind == "inline formula":
        assert all("$e_{ij}" in md.value for md in found)
    assert len(at.get("plotly_chart")) == 1


def test_charts_add_count_charts_and_every_kind_is_known(monkeypatch) -> None:
    at = page_with("plotly chart (8 x 8 heatmap)", 4, monkeypatch)
    assert len(at.get("plotly_chart")) == 5  # the floor's and four small ones
    assert set(KINDS) >= set(DRAWN) | {"none", "page_link", "segmented_control"}


def test_the_cost_per_element_is_the_difference_over_the_count() -> None:
    none = {"fresh_s": 1.70, "cached_s": 0.40}
    latex = {"fresh_s": 2.00, "cached_s": 0.70}
    assert per_element(latex, none, 20) == pytest.approx({"fresh_s": 15.0, "cached_s": 15.0})
    lines = table({"none": none, "st.latex": latex}, 20).splitlines()
    assert lines[2] == "| none | 1.70 | 0.40 | – | – |"
    assert lines[3] == "| st.latex | 2.00 | 0.70 | 15 | 15 |"
