"""Every layer and head of a family model on a text, with where each head puts its weight,
and the page that draws one head further."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.figures.head_reading import HeadReading, read_head
from explorer.frame.memory import cached
from explorer.stories.predict.views import attention_rows, plan_forward, shown_text
from explorer.weights.trained import family_model
from relpos_core.schemes.catalogue import scheme_entry, scheme_names

GRID_MAX = 256  # characters the every-head grid reads: the text's first ones


@dataclass(frozen=True)
class HeadsView:
    """Model ``name``'s attention in every layer and head on ``text`` (the page's text, its
    first GRID_MAX characters), with where each head puts its weight."""

    name: str
    text: str
    weights: np.ndarray  # (layers, heads, m, m): query i down, key j across; NaN for j > i
    readings: tuple[tuple[HeadReading, ...], ...]  # [layer][head], from read_head

    @property
    def labels(self) -> tuple[str, ...]:
        return shown_text(self.text)


def heads_view(name: str, text: str) -> HeadsView:
    """Every layer and head of model ``name`` on the first GRID_MAX characters of ``text``.
    Under a causal mask those rows are the same whether or not the model reads further, so
    the view is cached by those characters alone (a longer text keeps the grid it had)."""
    return _heads_view(name, text[:GRID_MAX])


@cached(4)
def _heads_view(name: str, text: str) -> HeadsView:
    if not text:
        raise ValueError("text must hold at least 1 character, got ''")
    model, vocabulary = family_model(name)
    ids = vocabulary.encode(text)[None]
    plan_forward(model, ids.shape[1], ids.shape[1], "every head")
    with torch.no_grad():
        weights = attention_rows(model, ids).numpy().astype(np.float32)
    m = len(text)
    weights[..., np.triu(np.ones((m, m), dtype=bool), 1)] = np.nan  # keys after the query
    readings = tuple(tuple(read_head(head) for head in layer) for layer in weights)
    return HeadsView(name, text, weights, readings)


def head_link(name: str, layer: int, head: int) -> tuple[str, dict[str, object]] | None:
    """The page that draws head ``head`` of ``layer`` of model ``name`` further, and the
    controls that open it there (the sidebar's text and n stay as they are): the Attention
    page for Shaw's model (k = 8), Position schemes for another scheme's model (its position
    term, that head); None for the models with no position term in attention, which no other
    page draws."""
    view = {"weights": "trained", "layer": layer}
    if name not in scheme_names():
        return None
    entry = scheme_entry(name)
    if entry.from_view("k"):  # its clip distance is the sidebar's: the Attention page draws it
        clip = next(s.keyword for s in entry.settings if s.view == "k")
        k = dict(entry.model_params)[clip]
        return "attention.py", {**view, "k": k, "attention_head": head}
    return "family.py", {**view, "scheme": name, "family_head": head}
