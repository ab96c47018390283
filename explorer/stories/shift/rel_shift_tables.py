"""The Transformer-XL shift story in tables: what a value is, the result cells the shift gets
wrong, and the page's download (every step with its axes, the definition, the wrong cells)."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled
from explorer.stories.shift.rel_shift import STEP_WORDS, ShiftStory


def holds_text(story: ShiftStory, code: int, plain: bool = False) -> str:
    """What a value is: the pad zero, or (q_s + v)·W_R R_δ of input row s (the paper indexes
    R by i - j: δ = -(j - i))."""
    if code == 0:
        return "the zero pad"
    row, col = divmod(code - 1, story.keys)
    distance = story.keys - 1 - col
    if plain:
        return f"(q_{row} + v)·W_R R_{distance}"
    return f"$(q_{{{row}}} + v)^\\top W_R R_{{{distance}}}$"


def wrong_cells(story: ShiftStory) -> dict[str, list]:
    """Every result cell with key j > i: what it holds, by the shift and by definition."""
    result = story.steps[-1]
    rows, cols = np.nonzero(~story.valid)
    table: dict[str, list] = {"i": [], "j": [], "distance j-i": [], "holds": [],
                              "by the shift": [], "by the definition": []}  # fmt: skip
    for i, column in zip(rows.tolist(), cols.tolist(), strict=True):
        code = int(result.code[i, column])
        what = "zero pad" if code == 0 else "next row: " + holds_text(story, code, plain=True)
        table["i"].append(i)
        table["j"].append(story.key(column))  # key j sits in column M + j
        table["distance j-i"].append(int(story.distance[i, column]))
        table["holds"].append(what)
        table["by the shift"].append(float(result.z[i, column]))
        table["by the definition"].append(float(story.definition[i, column]))
    return table


def story_tables(story: ShiftStory) -> dict[str, Labelled]:
    """Every step of the story with its axes, the definition and the wrong cells, for the
    page's download."""
    corners = {"input": "query i \\ distance j - i", "padded": "query i \\ distance j - i",
               "result": "query i \\ key j"}  # fmt: skip
    tables = {}
    for number, step in enumerate(story.steps, start=1):
        tables[f"step{number}_{STEP_WORDS[number - 1]}"] = Labelled(
            step.z, f"step {number} of rel_shift, head {story.head}", rows=list(step.y_ticks),
            cols=list(step.x_ticks), corner=corners.get(step.name, "row \\ column"),
        )  # fmt: skip
    result = story.step("result")
    tables["definition"] = Labelled(
        story.definition,
        f"(b) + (d) gathered by distance j - i, head {story.head}: equals the result where j <= i",
        rows=list(result.y_ticks),
        cols=list(result.x_ticks),
        corner="query i \\ key j",
    )
    rows, cols = np.nonzero(~story.valid)
    source, column, _ = result.origin()
    tables["wrong_cells"] = Labelled(
        np.column_stack([rows, story.key(cols), story.distance[rows, cols], source[rows, cols],
                         column[rows, cols], result.z[rows, cols],
                         story.definition[rows, cols]]),
        "result cells with j > i: what the shift put there (source -1: the zero pad)",
        cols=["i", "j", "distance j-i", "source input row", "source input column",
              "by the shift", "by the definition"],
        corner="cell",
    )  # fmt: skip
    return tables
