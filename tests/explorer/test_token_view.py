"""The token view keeps one token's lines when it is focused, as BertViz does on hover."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.figures.token_view import WEIGHT_MIN, focus_from_click, token_view


def segments(view) -> np.ndarray:
    """(query, key) of every line drawn, from the figure's line traces."""
    pairs = []
    for trace in view.figure.data:
        if trace.mode == "lines":
            y = np.asarray(trace.y, dtype=float).reshape(-1, 3)[:, :2]
            pairs.append(y)
    return np.concatenate(pairs).astype(int) if pairs else np.zeros((0, 2), int)


@pytest.mark.parametrize("side", ["query", "key"])
def test_a_focused_token_keeps_exactly_its_lines(side: str) -> None:
    rng = np.random.default_rng(3)
    weights = rng.dirichlet(np.ones(7), size=(2, 7)).astype(np.float32)  # (h, n, n), rows sum 1
    view = token_view(weights, list("abcdefg"), focus=(side, 4))
    drawn = segments(view)
    axis = 0 if side == "query" else 1
    assert (drawn[:, axis] == 4).all()
    row = weights[:, 4, :] if side == "query" else weights[:, :, 4]
    assert len(drawn) == view.lines_shown == view.lines_total == int((row >= WEIGHT_MIN).sum())
    markers = [t for t in view.figure.data if t.mode == "markers+text"][axis]
    assert markers.marker.color[4] == "#d62728" and markers.marker.size[4] == 12


def test_a_focus_outside_the_tokens_drawn_draws_every_line() -> None:
    weights = np.full((1, 3, 3), 1 / 3, dtype=np.float32)
    every = segments(token_view(weights, list("abc")))
    assert len(segments(token_view(weights, list("abc"), focus=("query", 9)))) == len(every) == 9


def test_a_click_picks_the_last_token_marker_and_ignores_lines() -> None:
    points = [{"x": 0, "y": 2, "customdata": 5}, {"x": 0.4, "y": 1.3}, {"x": 1, "customdata": 7}]
    assert focus_from_click(points) == "k7"
    assert focus_from_click(points[:2]) == "q5"
    assert focus_from_click([{"x": 0.5, "y": 1}]) is None
