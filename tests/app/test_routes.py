"""Routes: the previous / next links follow the route in the URL, each page on it says its step,
a page off it says so and links back, and the Overview's buttons start each route; and a learner
who follows a route never meets a word (``explorer.figures.terms``) before the route defines it,
nor a model by its file name."""

from __future__ import annotations

import functools
import json
import re

import pytest

from explorer.figures.terms import TERMS
from explorer.frame.navigation import PAGES as NAVIGATION
from explorer.frame.routes import EVERY_PAGE, FAMILY, OWN, ROUTE_KEY, ROUTES, SHAW
from relpos_lab.family.registry import describe, model_names, model_words
from tests.app.conftest import assert_clean, open_page


def links(at) -> dict[str, str]:  # noqa: ANN001 (an AppTest)
    found = {link.proto.label.split(":")[0]: link.proto.page for link in at.get("page_link")}
    return {k: v for k, v in found.items() if k in ("Previous", "Next", "Back to step 2")}


def captions(at) -> list[str]:  # noqa: ANN001
    return [c.value for c in at.caption]


def test_routes_are_made_of_real_pages_and_start_at_the_overview() -> None:
    for route in ROUTES:
        assert route.stems[0] == "overview"
        assert len(set(route.stems)) == len(route.stems)
        assert [p.stem for p in route.pages] == list(route.stems)
    assert SHAW.stems == ("overview", "lookup", "logits", "attention", "skew", "speed")


@pytest.mark.parametrize(
    ("route", "stem"),
    [(SHAW, "attention"), (SHAW, "speed"), (FAMILY, "lookup"), (OWN, "check")],
)
def test_a_page_on_the_route_links_along_it_and_says_its_step(route, stem) -> None:  # noqa: ANN001
    at = open_page(stem, **{ROUTE_KEY: route.label})
    assert_clean(at)
    before, after = route.neighbours(stem)
    expected = {}
    if before is not None:
        expected["Previous"] = before.stem
    if after is not None:
        expected["Next"] = after.stem
    assert links(at) == expected
    step = route.stems.index(stem) + 1
    assert f"Route: {route.title} · step {step} of {len(route.stems)}" in captions(at)
    assert at.selectbox(key=ROUTE_KEY).value == route.label


def test_a_page_off_the_route_says_so_and_links_back() -> None:
    at = open_page("predict", **{ROUTE_KEY: SHAW.label})
    assert_clean(at)
    assert any("this page is not one of its steps" in c for c in captions(at))
    assert links(at)["Back to step 2"] == "lookup"


def test_without_a_route_the_links_follow_every_page() -> None:
    at = open_page("logits")
    assert_clean(at)
    assert at.selectbox(key=ROUTE_KEY).value == EVERY_PAGE.label
    assert links(at) == {"Previous": "lookup", "Next": "attention"}
    assert not any(c.startswith("Route:") for c in captions(at))


def test_the_overview_button_starts_a_route() -> None:
    at = open_page("overview")
    at.button(key=f"take_route_{ROUTES.index(SHAW)}").click().run()
    assert_clean(at)
    assert at.selectbox(key=ROUTE_KEY).value == SHAW.label
    assert "Route: " + SHAW.title + " · step 1 of 6" in captions(at)
    go = {link.proto.label: link.proto.page for link in at.get("page_link")}
    assert go["Taken: go to step 2, Lookup table"] == "lookup"
    assert links(at) == {"Next": "lookup"}


# ---- the words each route uses, in its order ------------------------------------------------


def model_ids() -> re.Pattern:
    """The family's model names as files and code know them (the registry, a walk of the scheme
    folders), never as a learner reads them: any in backticks, and bare any that no model's words
    contain (``shaw-k2``, ``nope``; not ``t5``, which "the T5 model" holds)."""
    names = model_names()
    words = " ".join(model_words(n) + " " + describe(n) for n in names).lower()
    bare = [n for n in names if n.lower() not in words]
    quoted = "|".join(map(re.escape, names))
    return re.compile(rf"`(?:{quoted})`|\b(?:{'|'.join(map(re.escape, bare))})\b")


MODEL_IDS = model_ids()

TOC = {page.what for page in NAVIGATION} | {  # the Overview's tables of contents: they name
    text
    for route in ROUTES
    for text in (route.title, route.question)  # what later pages define
}


def page_text(at) -> str:  # noqa: ANN001 (an AppTest)
    """Every word the page shows a learner: titles, text, notes, formulas, chart titles and axes
    (the Overview's lists of pages and routes aside: they name what is to come)."""
    parts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "latex", "info",
                 "warning", "success", "error"):  # fmt: skip
        parts += [str(element.value) for element in getattr(at, kind)]
    parts += [expander.proto.label for expander in at.get("expander")]
    parts += [tab.proto.label for tab in at.get("tab")]
    for chart in at.get("plotly_chart"):
        layout = json.loads(chart.proto.spec).get("layout", {})
        parts += [json.dumps(v) for k, v in layout.items() if "title" in k or "axis" in k]
        parts += [json.dumps(a.get("text", "")) for a in layout.get("annotations", [])]
    parts = [p for p in parts if not any(toc in p for toc in TOC)]
    return "\n".join(part.replace("\\", "") for part in parts)  # markdown escapes dropped


@functools.cache
def text_of(stem: str) -> str:
    at = open_page(stem, weights="trained")  # what a learner meets: the default view
    assert_clean(at)
    return page_text(at)


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.label)
def test_a_route_never_uses_a_word_before_it_defines_it(route) -> None:  # noqa: ANN001
    problems = []
    for at, stem in enumerate(route.stems):
        text = text_of(stem)
        walked = route.stems[: at + 1]
        for term in TERMS:
            if term.used_in(text) and term.defined_on not in walked and not term.glossed_in(text):
                problems.append(f"step {at + 1} ({stem}) uses {term.name!r}, defined on "
                                f"{term.defined_on}")  # fmt: skip
        problems += [f"step {at + 1} ({stem}) names a model by its id: {m[0]}"
                     for m in MODEL_IDS.finditer(text)]  # fmt: skip
    assert problems == []


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t.name)
def test_each_term_is_defined_where_the_glossary_says(term) -> None:  # noqa: ANN001
    assert term.defined_in(text_of(term.defined_on)), term.definition


@pytest.mark.parametrize("stem", [page.stem for page in NAVIGATION])
def test_d_is_the_head_width_on_every_page(stem: str) -> None:
    """d is one head's width on every page, d_model the model's (glossary.py): at d_model = 8
    with 8 heads no page writes the sidebar's d_model as "d = 8" nor its head width as
    "d_model = 1" (other models' own sizes, a demo's d, may differ: their meaning may not)."""
    at = open_page(stem, d_model="8", heads="8")
    assert_clean(at)
    text = page_text(at)
    assert not re.findall(r"(?<![\w^])d = 8\b(?! /)", text)
    assert not re.findall(r"\bd_model = 1\b", text)
