"""Cached calls into relpos_lab.generalization.encoders for the "Length generalization" page:
scalars and tuples of ints in, numpy out. The models themselves are shared resources (loaded once,
never mutated)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.frame.downloads import Labelled
from explorer.frame.memory import cached
from explorer.weights.example import view_array
from relpos_lab.generalization.encoders import (
    distance_cosine,
    example_tokens,
    generalization_table,
    load_encoder,
    parse_tokens,
    predict_with_traces,
    relative_tables,
)
from relpos_lab.generalization.models import Encoder
from relpos_lab.generalization.tasks import BLANK

__all__ = ["BLANK", "example_tokens", "typed_tokens"]  # the page's inputs, through the app side

CACHE_ENTRIES = 8
KIND_LABELS = {
    "relative": "relative (trained)",
    "absolute": "absolute (trained)",
    "random": "relative (random initialization)",
}
KIND_WEIGHTS = {"relative": "trained", "absolute": "trained", "random": "random initialization"}


@cached(len(KIND_LABELS), resource=True)
def model(kind: str) -> Encoder:
    return load_encoder(kind)


@dataclass(frozen=True)
class GeneralizationView:
    lengths: np.ndarray  # (L,) evaluation lengths
    curves: dict[str, dict[str, np.ndarray]]  # model -> token_acc / seq_acc -> (L,)
    loss_curves: dict[str, tuple[np.ndarray, np.ndarray]]  # model -> (steps, losses)
    train_max_len: int
    min_len: int
    task: dict
    config: dict  # the relative model's config
    table: np.ndarray  # (L, 2 * models) the accuracies as one matrix, for download

    @property
    def losses(self) -> np.ndarray:
        """(steps, models) every model's training loss, in ``loss_curves`` order."""
        return np.stack([loss for _, loss in self.loss_curves.values()]).T


@cached(1)
def generalization_view() -> GeneralizationView:
    summary = generalization_table()
    models = summary["models"]
    lengths = [int(n) for n in models["relative"]["eval"]]
    curves = {
        name: {
            metric: np.array([m["eval"][str(n)][metric] for n in lengths], dtype=np.float32)
            for metric in ("token_acc", "seq_acc")
        }
        for name, m in models.items()
    }
    loss_curves = {
        name: (np.array(m["loss_curve"]["step"]), np.array(m["loss_curve"]["loss"]))
        for name, m in models.items()
    }
    table = np.stack([c[metric] for c in curves.values() for metric in ("token_acc", "seq_acc")])
    return GeneralizationView(
        lengths=np.array(lengths),
        curves=curves,
        loss_curves=loss_curves,
        train_max_len=summary["train"]["train_max_len"],
        min_len=summary["train"]["min_len"],
        task=summary["task"],
        config=models["relative"]["config"],
        table=table.T.astype(np.float32),
    )


def typed_tokens(text: str, vocab: int, limit: int) -> tuple[int, ...]:
    """The first ``limit`` token ids typed on the page (URL parameter ``trained_tokens``).

    Text that is not a list of ids raises a ValueError naming the parameter, the ids allowed
    and the text:

    >>> typed_tokens("3, 7 1", vocab=16, limit=2)
    (3, 7)
    >>> typed_tokens("abc", vocab=16, limit=8)
    Traceback (most recent call last):
    ValueError: trained_tokens (token ids): must be integers in [1, 15] separated by
    spaces or commas, got 'abc'
    """
    try:
        ids = parse_tokens(text, vocab)
    except ValueError:
        shown = repr(text if len(text) <= 40 else text[:40] + "...")
        shown = shown if text.strip() else "an empty text"
        raise ValueError(
            f"trained_tokens (token ids): must be integers in [1, {vocab - 1}] separated by "
            f"spaces or commas, got {shown}"
        ) from None
    return tuple(int(t) for t in ids[:limit])


@dataclass(frozen=True)
class TablesView:
    distances: tuple[str, ...]  # row labels: "-k" .. "k"
    w_k: np.ndarray  # (2k+1, head_dim)
    w_v: np.ndarray  # (2k+1, head_dim)
    cos_k: np.ndarray  # (2k+1, 2k+1) cosine similarity between distances of w^K
    cos_v: np.ndarray  # (2k+1, 2k+1) of w^V


@cached(CACHE_ENTRIES)
def tables_view(kind: str, layer: int) -> TablesView:
    w_k, w_v = relative_tables(model(kind))[layer]
    k = (w_k.shape[0] - 1) // 2
    return TablesView(
        distances=tuple(str(r) for r in range(-k, k + 1)),
        w_k=view_array(w_k),
        w_v=view_array(w_v),
        cos_k=view_array(distance_cosine(w_k)),
        cos_v=view_array(distance_cosine(w_v)),
    )


@dataclass(frozen=True)
class PredictionView:
    tokens: np.ndarray  # (n,) int64
    target: np.ndarray  # (n,) int64
    prediction: np.ndarray  # (n,) int64
    weights: np.ndarray  # (layers, heads, n, n) attention weights
    accuracy: float


@cached(CACHE_ENTRIES)
def prediction_view(kind: str, tokens: tuple[int, ...]) -> PredictionView:
    result = predict_with_traces(model(kind), list(tokens))
    return PredictionView(
        tokens=result.tokens.numpy(),
        target=result.target.numpy(),
        prediction=result.prediction.numpy(),
        weights=np.stack([view_array(trace.weights[0]) for trace in result.traces]),
        accuracy=result.accuracy,
    )


def download_arrays(
    gen: GeneralizationView, tables_kind: str, layer: int, kind: str, view: PredictionView
) -> dict[str, Labelled]:
    """Everything the Length generalization page shows, labelled for explorer.frame.downloads."""
    tables = tables_view(tables_kind, layer)
    metrics = ("token accuracy", "sequence accuracy")
    steps = next(iter(gen.loss_curves.values()))[0]
    positions = [f"{i} {t}" for i, t in enumerate(view.tokens.tolist())]
    distances = list(tables.distances)
    arrays = {
        "generalization": Labelled(
            gen.table,
            "accuracy per evaluation length and model",
            rows=[str(n) for n in gen.lengths],
            cols=[f"{m} {metric}" for m in gen.curves for metric in metrics],
            corner="length \\ model metric",
        ),
        "training_loss": Labelled(
            gen.losses,
            "training loss per step",
            rows=[str(int(s)) for s in steps],
            cols=list(gen.loss_curves),
            corner="step \\ model",
        ),
    }
    for name, table, cos in (
        ("w_k", tables.w_k, tables.cos_k),
        ("w_v", tables.w_v, tables.cos_v),
    ):
        arrays[f"{name}_{tables_kind}_layer{layer}"] = Labelled(
            table,
            f"{name} of the {KIND_LABELS[tables_kind]} model, layer {layer}",
            rows=distances,
            cols=[str(c) for c in range(table.shape[1])],
            corner="distance j - i \\ channel",
        )
        arrays[f"cos_{name}_{tables_kind}_layer{layer}"] = Labelled(
            cos,
            f"cosine similarity between the distances of {name}",
            rows=distances,
            cols=distances,
            corner="distance \\ distance",
        )
    correct = view.prediction == view.target  # the strip's colour: green 1, red 0
    arrays[f"prediction_{kind}"] = Labelled(
        np.stack([view.tokens, view.target, view.prediction, correct]).T,
        f"input token, target and prediction of the {KIND_LABELS[kind]} model, and whether "
        "the prediction is the target (1 = yes: the strip's green cells)",
        rows=positions,
        cols=["input", "target", "prediction", "correct"],
        corner="position token",
    )
    arrays[f"attention_{kind}"] = Labelled(
        view.weights,
        "attention weights alpha_ij per layer and head",
        rows=positions,
        cols=positions,
        corner="query i \\ key j",
        split=("layer", "head"),
    )
    return arrays


def shown_record(kind: str, tables_kind: str, layer: int) -> dict[str, object]:
    """What a download records of the models shown: their weights and the page's own picks."""
    return {
        "_attention_weights": KIND_WEIGHTS[kind],
        "_tables_weights": KIND_WEIGHTS[tables_kind],
        "trained_model": KIND_LABELS[kind],
        "trained_tables_kind": KIND_LABELS[tables_kind],
        "trained_tables_layer": layer,
    }
