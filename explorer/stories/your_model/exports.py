"""The view's download: t5_bias.csv (stack, layer, head, distance, bucket, bias for every
distance -(n - 1)..n - 1 of every stack and head), Shaw's tables and ALiBi's and RoPE's values."""

from __future__ import annotations

import numpy as np

from explorer.frame.csv_tables import Labelled
from explorer.stories.your_model.views import ShawView, T5View
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


def by_distance(values: np.ndarray, distance: np.ndarray, rows: list[str], about: str) -> Labelled:
    """One row per head (or table), one column per distance r = j - i: each line drawn."""
    return Labelled(values, about=about, rows=rows, cols=[str(int(r)) for r in distance],
                    corner="\\ distance r = j - i")  # fmt: skip


def t5_arrays(
    view: T5View, head: int, matrix: np.ndarray, drawn: np.ndarray
) -> dict[str, Labelled]:
    """The shown stack's lines (one row per head, at the ``drawn`` distances) and the matrix
    drawn for ``head``; t5_bias.csv holds every distance."""
    heads = [f"head {h}" for h in range(view.bias.shape[0])]
    size = matrix.shape[0]
    return {
        "t5_lines": by_distance(view.bias[:, drawn], view.distance[drawn], heads,
                                f"b_h[bucket(r)] of {view.stack.label}, per head."),
        f"t5_matrix_head{head}": Labelled(
            matrix, about=f"b[bucket(j - i)] of head {head}, {view.stack.label}; blank: masked.",
            rows=[str(i) for i in range(size)], cols=[str(j) for j in range(size)],
            corner="query i \\ key j",
        ),
    }  # fmt: skip


def shaw_norms(view: ShawView) -> Labelled:
    names = list(view.norms)
    about = f"the norm of the row each distance uses, layer {view.layer.layer}."
    rows = [f"|{n}_clip(r, k)|" for n in names]
    return by_distance(np.stack([view.norms[n] for n in names]), view.distance, rows, about)


def alibi_bias(distance: np.ndarray, values: np.ndarray) -> Labelled:
    heads = [f"head {h}" for h in range(values.shape[0])]
    return by_distance(values, distance, heads, "ALiBi's -m_h |r| per head.")
