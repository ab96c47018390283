"""A figure's shape is written under that figure: in the caption right after its chart, never
in a line above it, where it reads as the shape of the chart before."""

from __future__ import annotations

import pytest

from explorer.frame.navigation import PAGES as NAVIGATION
from tests.app.conftest import assert_clean, open_page

CONTAINERS = {"main", "flex_container", "vertical", "horizontal", "column", "columns", "expander"}


def content(at) -> list:
    """The page's elements in the order they are drawn, containers left out."""
    return [node for node in at.main if getattr(node, "type", None) not in CONTAINERS]


@pytest.mark.parametrize("page", [page.stem for page in NAVIGATION])
def test_every_shape_is_written_under_its_figure(page: str) -> None:
    at = open_page(page, weights="trained")
    assert_clean(at)
    nodes = content(at)
    shapes = [
        (t, node)
        for t, node in enumerate(nodes)
        if node.type in ("caption", "markdown") and "shape" in str(node.value)[:12]
    ]
    for t, node in shapes:
        assert node.type == "caption", f"{page}: a shape above its figure: {node.value[:60]}"
        assert t > 0 and nodes[t - 1].type == "plotly_chart", (
            f"{page}: {node.value[:60]} follows a {nodes[t - 1].type}, not its chart"
        )
