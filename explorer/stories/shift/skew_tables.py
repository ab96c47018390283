"""The Skew page's download: the four steps of one head with their axes, and the definition."""

from __future__ import annotations

from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.shift.skew import STEPS, SkewStory
from explorer.stories.shift.skew_text import STEP_WORDS


def skew_tables(params: ViewParams, story: SkewStory, head: int) -> dict[str, Labelled]:
    """One table per step of head ``head`` (rows and columns named in the step's own axes),
    and the definition they equal on the valid cells."""
    positions = position_labels(params, *params.window)
    scaled = f"divided by sqrt(d), d = {story.head_dim}"  # the queries come in scaled
    tables = {}
    for number, name in enumerate(STEPS, start=1):
        step = story.step(name)
        if name in ("input", "padded"):
            pad = step.pad.all(axis=0)
            cols = ["pad" if p else f"r={r}" for r, p in zip(step.x, pad, strict=True)]
            rows, corner = positions, "query i \\ distance r"
        elif name == "reshaped":
            cols, rows, corner = [str(c) for c in step.x], [str(r) for r in step.y], "row \\ column"
        else:
            cols, rows, corner = positions, positions, "query i \\ key j"
        tables[f"step{number}_{STEP_WORDS[number]}"] = Labelled(
            step.z,
            f"step {number} of the skew, head {head}: q_i . E_r, {scaled}",
            rows=rows,
            cols=cols,
            corner=corner,
        )
    tables["definition"] = Labelled(
        story.definition,
        f"q_i . w^K[clip(j - i, k) + k] / sqrt(d), d = {story.head_dim}, head {head}: equals "
        "step 4 on the valid cells",
        rows=positions,
        cols=positions,
        corner="query i \\ key j",
    )
    return tables
