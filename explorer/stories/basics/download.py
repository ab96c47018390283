"""What the Attention basics page's download holds: every array it draws, with its axes named,
and what params.json records about the copy model and the page's controls."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled
from explorer.stories.basics.figures import inputs_of, keys_of, outputs_of, queries_of
from explorer.stories.basics.scaling import ScaleView
from explorer.stories.basics.views import CopyView, ExampleView
from explorer.weights.source import TensorSource


def arrays(copy: CopyView, example: ExampleView, scales: ScaleView) -> dict[str, Labelled]:
    """Name -> the copy model's alignment and scores, the worked example, the sqrt(d) curves."""
    pairs = {"rows": outputs_of(copy), "cols": inputs_of(copy), "corner": "output i \\ input j"}
    queries, keys = queries_of(example), keys_of(example)
    d_k_rows = [str(int(v)) for v in scales.d_k]
    return {
        "alignment": Labelled(copy.weights, "alpha: output i over input j", **pairs),
        "additive_scores": Labelled(copy.additive, "e_ij, additive", **pairs),
        "dot_scores": Labelled(copy.dot, "s . h / sqrt(d), same states", **pairs),
        "dot_weights": Labelled(copy.dot_weights, "softmax_j of the dot-product scores", **pairs),
        "example_q": Labelled(example.q, "Q", rows=queries, corner="query i \\ channel"),
        "example_k": Labelled(example.k, "K", rows=keys, corner="key j \\ channel"),
        "example_v": Labelled(example.v, "V", rows=keys, corner="key j \\ channel"),
        "example_logits": Labelled(
            example.logits,
            "Q K^T / sqrt(d)",
            rows=queries,
            cols=keys,
            corner="query i \\ key j",
        ),
        "example_weights": Labelled(
            example.weights,
            "softmax(Q K^T / sqrt(d))",
            rows=queries,
            cols=keys,
            corner="query i \\ key j",
        ),
        "score_spread": Labelled(
            np.stack([scales.unscaled_std, scales.scaled_std, np.sqrt(scales.d_k)], 1),
            "std of q.k and of q.k / sqrt(d), and sqrt(d), the line the first follows",
            rows=d_k_rows,
            cols=["q.k", "q.k/sqrt(d)", "sqrt(d)"],
            corner="d \\ std of",
        ),
        "softmax_saturation": Labelled(
            np.stack([scales.unscaled_max, scales.scaled_max], 1),
            f"mean largest weight of a row of {scales.n} keys",
            rows=d_k_rows,
            cols=["unscaled", "scaled"],
            corner="d \\ largest weight",
        ),
        "example_output": Labelled(
            example.output, "alpha V", rows=queries, corner="query i \\ channel"
        ),
    }


def extra(source: TensorSource, copy: CopyView, scales: ScaleView) -> dict[str, object]:
    """The copy model drawn (params.json only), the items typed and the keys per row."""
    return {
        "_model": "copy" if source.trained else f"copy, random seed {source.seed}",
        "items": " ".join(map(str, copy.items)),
        "scale_keys": scales.n,
    }
