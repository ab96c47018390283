"""The skew story's bookkeeping: a click maps back to the result cell whose value it shows, and
the outline of a region follows its border."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.frame.params import ViewParams
from explorer.stories.shift.skew import STEPS, skew_story
from explorer.stories.shift.step_drawing import outline_path
from explorer.stories.shift.stepping import locate, result_cell_of


@pytest.mark.parametrize("masked", [True, False])
def test_a_cell_of_any_step_maps_to_the_result_cell_that_shows_its_value(masked: bool) -> None:
    story = skew_story(ViewParams(n=5, k=1), 0, masked)
    for index, name in enumerate(STEPS):
        step = story.step(name)
        for row in range(step.shape[0]):
            for col in range(step.shape[1]):
                cell = result_cell_of(story, name, row, col)
                if cell is None:  # a pad, or a value the slice drops
                    assert step.pad[row, col] or not step.kept[row, col]
                    continue
                place = locate(story, *cell)[index]
                assert place is not None and (place.row, place.col) == (row, col)
                assert place.value == step.z[row, col]


def test_outline_of_a_square_and_a_staircase() -> None:
    assert outline_path(np.ones((2, 2), dtype=bool), 0, 0) == (
        "M-0.5,-0.5H1.5M-0.5,1.5H1.5M-0.5,-0.5V1.5M1.5,-0.5V1.5"
    )
    lower = np.tril(np.ones((3, 3), dtype=bool))
    path = outline_path(lower, 10, 0)
    assert path.count("M") == 8  # top of each row's new cell, the bottom, left side, 3 risers
    assert "M9.5,2.5H12.5" in path and "M9.5,-0.5V2.5" in path
