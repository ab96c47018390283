"""The words and marks of Attention basics, Multi-head and masks, Absolute vs relative, Trained
model and the Overview: true for the weights drawn, and the picked pair on every (i, j) figure."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.frame.navigation import PAGES, SECTIONS
from tests.app.conftest import assert_clean, chart_keys, chart_spec, chart_z, open_page
from tests.app.test_pair_pick import outlines

CLAIMS_TRAINING = re.compile(r"\b(learn|learns|learned|learnt|trained)\b", re.IGNORECASE)
NEGATED = re.compile(r"\b(not|untrained|random|no|never|instead|would)\b", re.IGNORECASE)


def shown_text(at) -> list[str]:
    """Every heading, paragraph, caption and note of the page, as sentences."""
    texts = [
        e.value.replace("\\", "")
        for kind in ("header", "subheader", "markdown", "caption", "info")
        for e in at.get(kind)
    ]
    return [s for t in texts for s in re.split(r"(?<=[.;:])\s+", t) if s]


def test_the_sections_hold_every_page_once_in_the_story_order() -> None:
    assert [p for s in SECTIONS for p in s.pages] == list(PAGES)
    assert all(s.pages for s in SECTIONS) and len({s.label for s in SECTIONS}) == len(SECTIONS)


def test_basics_claims_training_only_for_trained_weights() -> None:
    claims = {}
    for weights in ("random", "trained"):
        at = open_page("basics", weights=weights)
        assert_clean(at)
        claims[weights] = [
            s for s in shown_text(at) if CLAIMS_TRAINING.search(s) and not NEGATED.search(s)
        ]
    assert not claims["random"], claims["random"]
    assert claims["trained"]  # the same check finds the claims when they are true


def test_the_trained_page_draws_the_same_models_whatever_the_switch_says() -> None:
    specs = {}
    for weights in ("random", "trained"):
        at = open_page("trained", weights=weights)
        assert_clean(at)
        specs[weights] = {key: chart_spec(at, key) for key in chart_keys(at)}
        said = [c.value for c in at.caption if "weights switch" in c.value]
        assert len(said) == 1 and f"set to {weights}" in said[0], said
    assert specs["random"] == specs["trained"]  # so "does not apply" is true


def test_the_overview_draws_the_definition_and_says_no_model() -> None:
    for weights in ("random", "trained"):
        at = open_page("overview", weights=weights, n="8", k="2")
        assert_clean(at)
        z = chart_z(at, "overview_index")
        i, j = np.indices(z.shape)
        np.testing.assert_array_equal(z, np.clip(j - i, -2, 2) + 2)
        assert any("No model on this page" in c.value for c in at.caption)


def centre(box: tuple[float, float, float, float]) -> tuple[float, float]:
    x0, x1, y0, y1 = box
    return (x0 + x1) / 2, (y0 + y1) / 2


@pytest.mark.parametrize(("i", "j"), [(1, 3), (3, 1)])
def test_basics_outlines_the_pair_where_its_figures_hold_it(i: int, j: int) -> None:
    at = open_page("basics", weights="random", i=str(i), j=str(j))
    assert_clean(at)
    # (output, input) and (query, key) panels: the cell (i, j) when both lie in the panel
    for key in ("basics_alignment", "basics_additive_scores_e", "example_logits",
                "example_weights"):  # fmt: skip
        rows, cols = chart_z(at, key).shape
        boxes = outlines(chart_spec(at, key)).get("x", set())
        assert {centre(b) for b in boxes} == ({(j, i)} if i < rows and j < cols else set()), key
    # Q and the output: row i; K and V: row j (every channel), only when the worked example
    # holds the pair: a row of K outlined for a query the example lacks would mark a pair
    # that is not on it
    held = i < chart_z(at, "example_q").shape[0] and j < chart_z(at, "example_k").shape[0]
    for key, position in (("example_q", i), ("example_output", i), ("example_k", j),
                          ("example_v", j)):  # fmt: skip
        rows, cols = chart_z(at, key).shape
        boxes = outlines(chart_spec(at, key)).get("x", set())
        outlined = held and position < rows
        want = {(-0.5, cols - 0.5, position - 0.5, position + 0.5)} if outlined else set()
        assert boxes == want, key
    said = [c.value.replace("\\", "") for c in at.main.caption]  # not the sidebar's
    said = [c for c in said if f"Picked pair (i, j) = ({i}, {j}), j - i = {j - i}:" in c]
    assert len(said) == 2, said  # under the copy model's figures and under the worked example


@pytest.mark.parametrize("page", [page.stem for page in PAGES])
def test_every_page_says_where_its_figures_come_from(page: str) -> None:
    """The line under each title: the weights drawn (trained, random or a page's own models) or
    that no model is drawn at all."""
    at = open_page(page, n="8")
    assert_clean(at)
    said = [c.value for c in at.caption if "**Weights" in c.value or "**No model" in c.value]
    assert len(said) == 1, [c.value[:80] for c in at.caption]
