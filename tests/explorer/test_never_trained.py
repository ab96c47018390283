"""The rows the app draws as never trained are exactly those training could not move: autograd
on the shipped causal models gives them a gradient of exactly zero (every other row a nonzero
one), and the shipped rows are their initial draw, shrunk only by weight decay. And the
characters the app flags as unreadable are exactly those the model encodes as unknown."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from explorer.frame.params import TRAINED_CLIPS, ViewParams, trained_model_name
from explorer.weights.source import source_of
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import UNKNOWN, held_out_ids
from relpos_lab.family.train import TrainSettings, fresh_model
from tests.explorer.trained_params import trained_view

TYPED = "naïve café — 東京 😀 <b>x</b> $y$"


def table_gradients(name: str) -> tuple[torch.nn.Module, list[tuple[torch.Tensor, torch.Tensor]]]:
    """The shipped model ``name`` and, per layer, the gradients of w^K and w^V of the
    next-character loss on one training-length window (every distance training ever saw)."""
    model, _ = load_with_vocabulary(name)
    model.requires_grad_(True)
    context = model.config.context
    ids = held_out_ids()[: context + 1][None]  # (1, context + 1)
    logits = model(ids[:, :-1])
    F.cross_entropy(logits[0], ids[0, 1:]).backward()
    grads = [
        (b.attention.scheme.table_k.grad, b.attention.scheme.table_v.grad) for b in model.blocks
    ]
    return model, grads


@pytest.mark.parametrize("k", [k for k in TRAINED_CLIPS if k > 0])
def test_the_rows_marked_never_trained_get_exactly_zero_gradient(k: int) -> None:
    distances = source_of(trained_view(k=k)).never_trained()
    assert {r for r in distances if r > 0} == set(range(1, k + 1))  # every row ahead
    model, grads = table_gradients(trained_model_name(k))
    fresh = fresh_model(model.config, TrainSettings())
    marked = [r + k for r in distances]
    others = [r for r in range(2 * k + 1) if r not in marked]
    for layer, pair in enumerate(grads):
        for which, grad in enumerate(pair):
            assert torch.count_nonzero(grad[marked]) == 0, (k, layer, which)
            assert (grad[others].abs().amax(dim=1) > 0).all(), (k, layer, which)
        start = fresh.blocks[layer].attention.scheme
        shipped = model.blocks[layer].attention.scheme
        for now, initial in ((shipped.table_k, start.table_k), (shipped.table_v, start.table_v)):
            cosine = F.cosine_similarity(now[marked].flatten(), initial[marked].flatten(), dim=0)
            assert cosine > 0.9999, (k, layer)  # the initial draw, only scaled (weight decay)


def test_random_weights_have_no_never_trained_rows() -> None:
    assert source_of(ViewParams(k=4, mask="causal")).never_trained() == ()


def test_the_unread_characters_are_those_encoded_as_unknown() -> None:
    source = source_of(trained_view(text=TYPED))
    _, vocabulary = load_with_vocabulary(source.model())
    ids = vocabulary.encode(TYPED)
    assert source.unread() == tuple(
        c for c, i in zip(TYPED, ids.tolist(), strict=True) if i == UNKNOWN
    )
    assert len(source.unread()) == 7 and set(source.unread()) == set("ïé東京😀$")
    assert source_of(ViewParams(text=TYPED)).unread() == ()  # random weights read every word
