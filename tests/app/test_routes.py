"""Routes: the previous / next links follow the route in the URL, each page on it says its step,
a page off it says so and links back, and the Overview's buttons start each route."""

from __future__ import annotations

import pytest

from explorer.frame.routes import EVERY_PAGE, FAMILY, OWN, ROUTE_KEY, ROUTES, SHAW
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
