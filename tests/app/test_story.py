"""The story order: every page ends with links to the page before and after it in the
navigation, and the Overview lists the pages in that order."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.frame.navigation import PAGES as NAVIGATION
from relpos_lab.family import results
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of

STEMS = [page.stem for page in NAVIGATION]


@pytest.mark.parametrize("stem", ["overview", "lookup", "trained", "compare"])
def test_each_page_links_to_its_neighbours_in_the_story(stem: str) -> None:
    at = open_page(stem)
    assert_clean(at)
    at_index = STEMS.index(stem)
    links = {link.proto.label.split(":")[0]: link.proto.page for link in at.get("page_link")}
    expected = {}
    if at_index > 0:
        expected["Previous"] = STEMS[at_index - 1]
    if at_index + 1 < len(STEMS):
        expected["Next"] = STEMS[at_index + 1]
    assert {k: v for k, v in links.items() if k in ("Previous", "Next")} == expected


def test_the_story_puts_why_position_first_the_family_then_your_own_work_last() -> None:
    assert STEMS.index("absolute") < STEMS.index("lookup") < STEMS.index("logits")
    assert STEMS.index("attention") < STEMS.index("trained") < STEMS.index("skew")
    assert STEMS.index("skew") < STEMS.index("rel_shift") < STEMS.index("speed")
    # the family, its models at work, how far they reach, its masks and biases as FlexAttention
    assert STEMS[-7:-2] == ["family", "compare", "predict", "long_context", "flex"]
    # then the visitor's own work, the last chapter: their implementation, their model
    assert STEMS[-2:] == ["check", "your_model"]


def test_why_position_draws_the_shipped_length_curves_and_reads_them() -> None:
    at = open_page("absolute")
    assert_clean(at)
    shipped = results()["models"]
    traces = chart_spec(at, "why_position")["data"]
    assert len(traces) == 3
    for trace, name in zip(traces, ("nope", "sinusoidal", "shaw"), strict=True):
        lengths = sorted(int(length) for length in shipped[name]["bpc"])
        np.testing.assert_allclose(
            array_of(trace["y"]), [shipped[name]["bpc"][str(L)] for L in lengths], rtol=1e-6
        )
    note = next(m.value for m in at.markdown if m.value.startswith("At the training length"))
    assert f"{shipped['nope']['bpc']['64']:.2f}" in note
    assert f"{shipped['sinusoidal']['bpc']['1024']:.2f}" in note
