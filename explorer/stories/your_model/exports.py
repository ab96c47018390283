"""The view's download: t5_bias.csv (stack, layer, head, distance, bucket, bias for every
distance -(n - 1)..n - 1 of every stack and head), Shaw's tables and ALiBi's and RoPE's values."""

from __future__ import annotations

import numpy as np

from explorer.frame.csv_tables import Labelled
from explorer.stories.your_model.views import T5View
from relpos_lab.extract import ShawLayer


def t5_table(views: list[T5View]) -> Labelled:
    """One row per stack, layer, head and distance."""
    rows, stacks = [], []
    for view in views:
        for head in range(view.bias.shape[0]):
            block = np.column_stack(
                [
                    np.full(len(view.distance), view.stack.layer),
                    np.full(len(view.distance), head),
                    view.distance,
                    view.bucket,
                    view.bias[head],
                ]
            )
            rows.append(block)
            stacks += [view.stack.stack] * len(view.distance)
    values = np.concatenate(rows) if rows else np.zeros((0, 5))
    return Labelled(
        values,
        about="T5's bias b[bucket(r)] at every distance r = key - query, every stack and head.",
        rows=stacks,
        cols=["layer", "head", "distance", "bucket", "bias"],
        corner="stack",
    )


def shaw_tables(layers: tuple[ShawLayer, ...]) -> dict[str, Labelled]:
    """Each layer's w^K and w^V, one row per distance r = -k..k."""
    out = {}
    for layer in layers:
        rows = [str(r) for r in range(-layer.k, layer.k + 1)]
        for part, table in (("key", layer.key), ("value", layer.value)):
            if table is not None:
                out[f"shaw_layer{layer.layer}_{part}"] = Labelled(
                    table,
                    about=f"w^{part[0].upper()} of layer {layer.layer}, row r = distance.",
                    rows=rows,
                    corner="distance r \\ channel",
                )
    return out
