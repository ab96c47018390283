"""A scheme's terms on the heatmaps' window, shared by the family's views and profiles.

Every position term is a function of q_i, k_j and j - i, so the window's block of the whole term
is the term of the window's queries over the window's keys at positions 0..W-1.
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.frame.budget import plan_scheme
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from relpos_core.masks import combine_masks
from relpos_core.schemes import PositionScheme

# b batch (1) · h heads · i query pos · j key pos · d head dim


def as_float32(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


def window_allowed(params: ViewParams) -> torch.Tensor:
    """bool (W, W): which of the window's (query, key) cells the sidebar mask allows."""
    start, stop = params.window
    size = stop - start
    mask = example_inputs(params).mask
    block = None if mask is None else mask[..., start:stop]
    return combine_masks(block, params.causal, (1, 1, size, size))[0, 0]


def window_terms(
    scheme: PositionScheme, params: ViewParams, what: str, every_term: bool = False
) -> dict[str, torch.Tensor]:
    """The scheme's position term (or every term) on the window: the window's queries over the
    window's keys, queries and keys at 0..W-1 (the block of the whole: see the docstring)."""
    inputs = example_inputs(params, scheme.name)
    start, stop = params.window
    size = stop - start
    kept = len(scheme.TERMS) if every_term else 1  # the terms it returns, and their sum
    plan_scheme(what, scheme, size, size, traces=kept + 1)
    q, k = inputs.q[:, :, start:stop], inputs.k[:, :, start:stop]
    with torch.no_grad():
        if every_term:
            return scheme.terms(q, k, causal=params.causal)
        return {"position": scheme.position_term(q, k, causal=params.causal)}
