"""What the Predict page's download holds: the arrays behind its figures, with their labels."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled
from explorer.stories.predict.heads import HeadsView
from explorer.stories.predict.views import Generation, LossAlong, NextView, WritingStep
from explorer.weights.reading import shown


def arrays(
    view: NextView,
    gen: Generation,
    step: WritingStep | None,
    loss: LossAlong,
    grid: HeadsView,
    name: str,
) -> dict[str, Labelled]:
    layers, heads, _ = view.attention.shape
    rows = [f"layer {layer} head {head}" for layer in range(layers) for head in range(heads)]
    written = (
        {}
        if step is None
        else {
            "written_attention": Labelled(
                step.attention.reshape(layers * heads, -1),
                f"the weights that wrote character {step.t} of the generation",
                rows=rows,
                cols=list(step.labels),
                corner="layer, head \\ key",
            ),
        }
    )
    return {
        **written,
        "next_character": Labelled(
            view.top_probs[:, None], "p(next character)",
            rows=[shown(c) for c in view.top_chars], cols=["p"], corner="character",
        ),
        "last_attention": Labelled(
            view.attention.reshape(layers * heads, -1), "the last character's weights",
            rows=rows, cols=list(view.labels), corner="layer, head \\ key",
        ),
        "every_head": Labelled(
            grid.weights, f"{name}'s weights on the text's first {len(grid.text)} characters "
            "(empty: a key after its query)", rows=list(grid.labels), cols=list(grid.labels),
            corner="query i \\ key j", split=("layer", "head"),
        ),
        "written": Labelled(
            np.stack([gen.probs, gen.bits], axis=1), "each drawn character's probability p in "
            "the cut distribution and its bits -log2 p (the written strip's colours)",
            rows=[shown(c) for c in gen.chars] or None, cols=["p", "bits"], corner="character",
        ),
        "bits_along": Labelled(
            np.stack([loss.bits[n] for n in loss.bits], axis=1), f"bits per character ({name} "
            "is one column)", rows=[shown(c) for c in loss.text], cols=list(loss.bits),
            corner="character \\ model",
        ),
        "running_mean": Labelled(
            np.stack([loss.running_mean(n) for n in loss.bits], axis=1), "mean bits per "
            "character over characters 0..t (bits_along.csv's running mean)",
            rows=[str(t) for t in range(1, loss.length + 1)], cols=list(loss.bits),
            corner="characters read t \\ model",
        ),
    }  # fmt: skip
