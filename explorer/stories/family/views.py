"""The position-scheme pages' cached views: every scheme of the catalogue on one q, k, v
(their settings: ``explorer.stories.family.settings``).

Every scheme comes from ``explorer.weights.schemes.scheme_for``: on random weights drawn from a
seed derived from the view's seed and its name (Shaw's with the tables every other page draws),
so a scheme's parameters change only with the seed. A cached view takes the view's
:class:`ViewParams` and one :class:`SchemeConfig` (the scheme's own settings only: changing T5's
buckets leaves every other scheme's cache alone) and returns frozen float32 numpy; each first
checks its largest computation against the per-request budget.

Above DISPLAY_MAX positions the heatmaps show the window [s, s+W). Every position term here is
a function of q_i, k_j and j - i, so the window's block of the whole term is the term of the
window's queries over the window's keys at positions 0..W-1 (as the Shaw story's ``logits_view``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.budget import plan_scheme, rows_within_budget
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.family.profiles import ProfileView, profile_view
from explorer.stories.family.settings import FamilySettings
from explorer.stories.family.window_terms import as_float32, window_allowed, window_terms
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.schemes import PositionScheme
from relpos_core.schemes.catalogue import scheme_names

# b batch (1) · h heads · i query pos · j key pos · d head dim · m distances j - i

CACHE_ENTRIES = 8
ATTENTION_ROWS = 128  # query rows per block of the compared attention: (h, 128, n) terms


@dataclass(frozen=True)
class PositionView:
    """What a scheme's position adds to the logit, every head, on the window (NaN = masked)."""

    term: np.ndarray  # (h, W, W)

    @property
    def allowed(self) -> np.ndarray:
        """(W, W) 1.0 where the mask lets the query attend, 0.0 where the term is blank."""
        return np.isfinite(self.term[0]).astype(np.float32)


@cached(CACHE_ENTRIES)
def position_view(params: ViewParams, config: SchemeConfig) -> PositionView:
    scheme = scheme_for(params, config)
    term = window_terms(scheme, params, "position term")["position"][0]  # (h, W, W)
    allowed = window_allowed(params)
    return PositionView(term=np.where(allowed.numpy(), as_float32(term), np.nan).astype(np.float32))


@cached(4)
def scheme_terms(params: ViewParams, config: SchemeConfig, head: int) -> dict[str, np.ndarray]:
    """Every term of one head's logit on the window, in paper order: name -> (W, W), NaN = masked
    (Transformer-XL's (a)-(d))."""
    scheme = scheme_for(params, config)
    terms = window_terms(scheme, params, "terms", every_term=True)
    allowed = window_allowed(params).numpy()
    return {
        name: np.where(allowed, as_float32(term[0, head]), np.nan).astype(np.float32)
        for name, term in terms.items()
    }


@cached(CACHE_ENTRIES)
def unavailable(params: ViewParams, config: SchemeConfig) -> str | None:
    """Why ``config``'s scheme cannot run on this view (RoPE needs an even head dim), or None."""
    try:
        scheme_for(params, config)
    except ValueError as error:
        return str(error)
    return None


def unavailable_schemes(params: ViewParams, settings: FamilySettings) -> dict[str, str]:
    """Scheme -> the reason it cannot run on this view, for the schemes that cannot."""
    reasons = {name: unavailable(params, settings.config(name, params)) for name in scheme_names()}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def family_profiles(params: ViewParams, settings: FamilySettings) -> dict[str, ProfileView]:
    """The profile of every scheme that can run on this view, in registry order (each cached
    on its own)."""
    missing = unavailable_schemes(params, settings)
    return {
        name: profile_view(params, settings.config(name, params))
        for name in scheme_names()
        if name not in missing
    }


# ---- compare two schemes --------------------------------------------------------------------


@dataclass(frozen=True)
class CompareView:
    """Two schemes' attention on the same q, k, v: every head's weights on the window
    (NaN = masked), and per head the largest |B - A| of the weights (window rows, every key)
    and of the outputs z (window rows)."""

    weights_a: np.ndarray  # (h, W, W)
    weights_b: np.ndarray  # (h, W, W)
    difference: np.ndarray  # (h, W, W) weights_b - weights_a
    weight_diff: np.ndarray  # (h,)
    output_diff: np.ndarray  # (h,)


def _attention_rows(scheme: PositionScheme, params: ViewParams):
    """(weights (h, W, n), z (h, W, d)) of the window's query rows over every key, in blocks of
    rows that fit the budget (rows are independent: exact)."""
    inputs = example_inputs(params, scheme.name)
    n = params.length
    start, stop = params.window
    rows = rows_within_budget(scheme, n, min(stop - start, ATTENTION_ROWS), traces=2)
    plan_scheme("attention", scheme, rows, n, traces=2)
    weights, outputs = [], []
    with torch.no_grad():
        for r0 in range(start, stop, rows):
            r1 = min(stop, r0 + rows)
            z, alpha = scheme(
                inputs.q[:, :, r0:r1],
                inputs.k,
                inputs.v,
                mask=inputs.mask,
                causal=params.causal,
                query_offset=r0,
            )
            weights.append(alpha[0])
            outputs.append(z[0])
    return torch.cat(weights, dim=1), torch.cat(outputs, dim=1)


@cached(4)
def scheme_weights(params: ViewParams, config: SchemeConfig) -> np.ndarray:
    """(h, W, W) one scheme's attention weights on the window (NaN = masked): the page's view
    when the other scheme of the pair cannot run on this view."""
    start, stop = params.window
    weights, _ = _attention_rows(scheme_for(params, config), params)
    allowed = window_allowed(params).numpy()
    return np.where(allowed, as_float32(weights[:, :, start:stop]), np.nan).astype(np.float32)


@cached(4)
def compare_view(params: ViewParams, config_a: SchemeConfig, config_b: SchemeConfig) -> CompareView:
    start, stop = params.window
    weights_a, z_a = _attention_rows(scheme_for(params, config_a), params)
    weights_b, z_b = _attention_rows(scheme_for(params, config_b), params)
    allowed = window_allowed(params).numpy()

    def window(weights: torch.Tensor) -> np.ndarray:
        return np.where(allowed, as_float32(weights[:, :, start:stop]), np.nan).astype(np.float32)

    shown_a, shown_b = window(weights_a), window(weights_b)
    return CompareView(
        weights_a=shown_a,
        weights_b=shown_b,
        difference=shown_b - shown_a,
        weight_diff=as_float32((weights_b - weights_a).abs().amax((-2, -1))),
        output_diff=as_float32((z_b - z_a).abs().amax((-2, -1))),
    )
