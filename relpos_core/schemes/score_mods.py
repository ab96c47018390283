"""Every scheme's FlexAttention ``score_mod``, found by walking the scheme folders.

Each folder's ``score_mod`` module defines exactly one of

    score_mod(scheme, q, k, query_offset=0, *, causal=False) -> Mod
        the scheme's position terms added to FlexAttention's score q_i · k_j · scale, reading
        small precomputed tables (``Mod.closes_over``), so that
        flex_attention(q, k, v, score_mod=mod.fn, scale=mod.scale) gives the scheme's logits
        and, where it has no value term, its output. Built for one ``causal`` (T5's buckets
        and the Music Transformer's table differ by direction) and one ``query_offset``.
    NOT_A_SCORE_MOD
        words: why the scheme is no score modification and how FlexAttention runs it (RoPE)

and, where the scheme has a term on the values that FlexAttention cannot express, ``VALUE_TERM``:
words naming the library's call that computes it.

The tables keep their autograd graph back to q, k and the scheme's parameters, so a backward
through FlexAttention (on CUDA) reaches them. For a forward only run (FlexAttention has no
backward on the CPU, torch 2.13), build the mod under ``torch.no_grad()``: tables that require
grad make FlexAttention's tracing read a non-leaf tensor's ``.grad``, which torch warns about.
"""

from __future__ import annotations

from types import ModuleType

import torch

from relpos_core.guard import check_fits
from relpos_core.mods import Mod
from relpos_core.schemes.base import PositionScheme
from relpos_core.schemes.catalogue import scheme_entry
from relpos_core.schemes.folders import part
from relpos_core.validation import check_bool


def score_mod_module(name: str) -> ModuleType | None:
    """The ``score_mod`` module of scheme ``name``'s folder, checked to define exactly one of
    ``score_mod`` and ``NOT_A_SCORE_MOD``; None for a scheme with no folder or no module."""
    folder = scheme_entry(name).folder
    module = part(folder, "score_mod") if folder else None
    if module is None:
        return None
    function = getattr(module, "score_mod", None)
    words = getattr(module, "NOT_A_SCORE_MOD", None)
    function_ok = callable(function) and words is None
    words_ok = function is None and isinstance(words, str) and bool(words.strip())
    if not (function_ok or words_ok):
        raise ValueError(
            f"{module.__name__} must define exactly one of score_mod (a function) and "
            "NOT_A_SCORE_MOD (words)"
        )
    return module


def has_score_mod(name: str) -> bool:
    """Whether scheme ``name``'s folder defines a ``score_mod`` function.

    >>> has_score_mod("alibi"), has_score_mod("rope")  # RoPE rotates q and k instead
    (True, False)
    """
    module = score_mod_module(name)
    return module is not None and hasattr(module, "score_mod")


def score_mod_of(
    scheme: PositionScheme,
    q: torch.Tensor,
    k: torch.Tensor,
    query_offset: int = 0,
    *,
    causal: bool = False,
    max_bytes: int | None = None,
) -> Mod | str:
    """The scheme's ``score_mod`` for these q (b,h,n_q,d) and k (b,h,n_k,d), the queries at
    positions ``query_offset`` onwards and ``causal`` as the scheme's call takes it; or, where
    its folder says it is not one, those words.

    Inputs are checked as the scheme checks them; the tables are sized against ``max_bytes``
    (None: the device's memory) by the scheme's own estimate of its position work.
    """
    if not isinstance(scheme, PositionScheme):
        raise ValueError(f"scheme must be a PositionScheme, got {type(scheme).__name__}")
    scheme.check_inputs(q, k, query_offset)
    check_bool("causal", causal)
    module = score_mod_module(scheme.name)
    if module is None:
        return f"{scheme_entry(scheme.name).label} has no score_mod in its folder yet."
    if not hasattr(module, "score_mod"):
        return module.NOT_A_SCORE_MOD
    b, _, n_q, _ = q.shape
    check_fits(
        f"{scheme.name} score_mod tables with b = {b}, n_q = {n_q}, n_k = {k.shape[2]}",
        scheme.position_bytes(n_q, k.shape[2], b, q.element_size()),
        max_bytes,
        q.device,
    )
    return module.score_mod(scheme, q, k, query_offset, causal=causal)


def value_term_words(name: str) -> str | None:
    """What FlexAttention cannot express of scheme ``name`` (its term on the values) and the
    library's call that computes it; None where the scheme has no such term."""
    module = score_mod_module(name)
    return None if module is None else getattr(module, "VALUE_TERM", None)
