"""Trained weights for the explorer's views: a model of the family (relpos_lab.family), its own
q, k, v, tables and position scheme at one layer, on the view's characters.

The family's models are causal character language models (3 layers, d_model 128, 4 heads)
trained on Python's help topics, identical but for position: Shaw's at clip distances 0, 1, 2,
4, 8, 16 and 64, and one per published scheme. A view with trained weights reads the characters
of its typed text, or without one n characters of the held-out part of the corpus from its first
sentence of prose; it runs the model once per (model, text, layer) and keeps the q, k, v that
layer's attention saw and, for Shaw's models, its tables w^K, w^V.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.reading import model_for, sequence
from relpos_core.schemes import PositionScheme, ShawRelative
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import UNKNOWN, Vocabulary
from relpos_lab.family.model import CharLM


@cached(16, resource=True)  # every model of the family fits: 13
def family_model(name: str) -> tuple[CharLM, Vocabulary]:
    """The shipped model (shared by every session, read only: eval mode, no gradients)."""
    model, vocabulary = load_with_vocabulary(name)
    model.requires_grad_(False)
    return model, vocabulary


def attention_inputs(name: str, text: str, layers: int | None = None) -> torch.Tensor:
    """Model ``name`` run on ``text`` (not cached): the q, k, v the attention of each of its
    first ``layers`` layers (all by default) saw, (layers, 3, h, n, d)."""
    model, vocabulary = family_model(name)
    ids = vocabulary.encode(text)[None]  # (1, n)
    with torch.no_grad():
        inputs = model.attention_inputs(ids, layers)
    return torch.stack([torch.stack(layer)[:, 0] for layer in inputs])


@dataclass(frozen=True)
class TrainedTensors:
    """A trained model on one text at one layer: the token embeddings, what that layer's
    attention saw, and its tables."""

    name: str
    layer: int
    x: np.ndarray  # (n, d_model) the scaled token embeddings the model starts from
    qkv: np.ndarray  # (3, h, n, d) q, k, v of the layer's attention
    tables: np.ndarray  # (2, 2k+1, d) w^K and w^V of the layer (Shaw's); else (2, 0, d)


# One layer per entry, twelve entries: Position schemes reads six models at once (at n = 1024
# 1.7 MB each at one layer, 5 MB at all three) and its learned terms run the models uncached,
# so the page's values fit the cache's byte budget and this count, and drawing it again computes
# nothing (tests/app/test_footprint.py). At eight entries of three layers, each rerun at
# n = 1024 pushed out values the same run had cached and recomputed all six models (3-4 s).
@cached(12, resource=True)  # views hand its arrays to torch without a copy
def trained_tensors(name: str, text: str, layer: int) -> TrainedTensors:
    """Run model ``name`` on ``text`` up to layer ``layer`` (``CharLM.attention_inputs``):
    what that layer's attention saw, and its tables."""
    model, vocabulary = family_model(name)
    d = model.config.head_dim
    scheme = model.blocks[layer].attention.scheme
    with torch.no_grad():
        x = model.embed(vocabulary.encode(text)[None])[0]
        qkv = attention_inputs(name, text, layer + 1)[layer]
        tables = (
            torch.stack([scheme.table_k, scheme.table_v])
            if isinstance(scheme, ShawRelative)
            else torch.zeros(2, 0, d)
        )
    return TrainedTensors(name, layer, *(t.numpy().astype(np.float32) for t in (x, qkv, tables)))


def trained_for(params: ViewParams, scheme: str = "shaw") -> TrainedTensors:
    """The tensors of the model a trained view of ``scheme`` draws, on the view's characters,
    at the view's layer."""
    return trained_tensors(model_for(params, scheme), sequence(params), params.layer)


def model_scheme(name: str, layer: int) -> PositionScheme:
    """The position scheme of layer ``layer`` of family model ``name``: its learned
    parameters, read only (shared by every session)."""
    model, _ = family_model(name)
    found = model.blocks[layer].attention.scheme
    if found is None:
        raise ValueError(f"model {name!r} has no position scheme")
    return found


def trained_scheme(params: ViewParams, scheme: str) -> PositionScheme:
    """The position scheme of the view's layer in the model a trained view of ``scheme``
    draws."""
    return model_scheme(model_for(params, scheme), params.layer)


def unread_characters(params: ViewParams, scheme: str = "shaw") -> tuple[str, ...]:
    """The view's characters, in order and repeats kept, that the model of ``scheme`` encodes
    as the one unknown id (outside the vocabulary of its training text): it cannot tell them
    apart."""
    text = sequence(params)
    _, vocabulary = family_model(model_for(params, scheme))
    ids = vocabulary.encode(text).tolist()
    return tuple(c for c, i in zip(text, ids, strict=True) if i == UNKNOWN)


def never_trained(params: ViewParams) -> tuple[int, ...]:
    """The distances r in [-k, k] whose rows w_r of the trained Shaw model's tables training
    never updated: a causal model never reads a key ahead (r > 0), and its training windows of
    ``context`` characters hold no distance r <= -context. Their gradient is exactly 0, so
    they keep their initial draw, shrunk only by weight decay."""
    model, _ = family_model(model_for(params))
    k, context = params.k, model.config.context
    return tuple(r for r in range(-k, k + 1) if r > 0 or r <= -context)
