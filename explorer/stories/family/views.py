"""The position-scheme pages' cached views: six relative position schemes on one q, k, v
(their settings: ``explorer.stories.family.settings``).

Every scheme is drawn with ``relpos_core.schemes.make_scheme`` from a seed derived from the
view's seed and its name, so a scheme's parameters change only with the seed. A cached view
takes the view's :class:`ViewParams` and one :class:`SchemeConfig` (the scheme's own settings
only: changing T5's buckets leaves every other scheme's cache alone) and returns frozen float32
numpy; each first checks its largest computation against the per-request budget.

Above DISPLAY_MAX positions the heatmaps show the window [s, s+W). Every position term here is
a function of q_i, k_j and j - i, so the window's block of the whole term is the term of the
window's queries over the window's keys at positions 0..W-1 (as the Shaw story's ``logits_view``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.figures.scales import Scale, make_scale, own_scales_caption
from explorer.frame.budget import plan_scheme, rows_within_budget
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.family.settings import FamilySettings
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.masks import combine_masks
from relpos_core.schemes import (
    SCHEME_NAMES,
    PositionScheme,
    content_free,
    distance_profile,
    scheme_profile,
)
from relpos_core.schemes.profile import BLOCK_CELLS

# b batch (1) · h heads · i query pos · j key pos · d head dim · m distances j - i

CACHE_ENTRIES = 8
# A profile of every diagonal holds heads·n² cells per scheme: up to this many (n = 512 at four
# heads) the page runs it with content and content-free; above, see profile_view(). At 2^22
# cells (n = 1024) one scheme's whole profile took 240-290 MB for 1-3 s, more than a small
# host has to spare; the rows and the window take a tenth.
FULL_PROFILE_CELLS = 2**20
ATTENTION_ROWS = 128  # query rows per block of the compared attention: (h, 128, n) terms
TOEPLITZ_RTOL = 1e-5  # a deviation this small relative to the term's largest |value| is rounding


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


def window_allowed(params: ViewParams) -> torch.Tensor:
    """bool (W, W): which of the window's (query, key) cells the sidebar mask allows."""
    start, stop = params.window
    size = stop - start
    mask = example_inputs(params).mask
    block = None if mask is None else mask[..., start:stop]
    return combine_masks(block, params.causal, (1, 1, size, size))[0, 0]


def _window_terms(
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
    term = _window_terms(scheme, params, "position term")["position"][0]  # (h, W, W)
    allowed = window_allowed(params)
    return PositionView(term=np.where(allowed.numpy(), _np(term), np.nan).astype(np.float32))


@cached(4)
def scheme_terms(params: ViewParams, config: SchemeConfig, head: int) -> dict[str, np.ndarray]:
    """Every term of one head's logit on the window, in paper order: name -> (W, W), NaN = masked
    (Transformer-XL's (a)-(d))."""
    scheme = scheme_for(params, config)
    terms = _window_terms(scheme, params, "terms", every_term=True)
    allowed = window_allowed(params).numpy()
    return {
        name: np.where(allowed, _np(term[0, head]), np.nan).astype(np.float32)
        for name, term in terms.items()
    }


@dataclass(frozen=True)
class ProfileView:
    """A scheme's position term along every distance j - i of the whole sequence.

    ``mean`` / ``std`` per head and pooled over heads (every cell of every head at distance r);
    NaN where no cell is allowed (j > i under a causal mask). ``with_content``: the term as
    computed with the view's q and k; else its position-only part (q, k replaced by their mean
    over positions). ``deviation``: the max-norm distance of the term to the nearest Toeplitz
    matrix (relpos_core's ``toeplitz_deviation``), measured ``over`` the whole matrix or the
    window's block only; ``scale``: the term's largest |value| there.
    """

    distance: np.ndarray  # (m,) j - i, -(n-1)..n-1
    mean: np.ndarray  # (h, m)
    std: np.ndarray  # (h, m)
    pooled_mean: np.ndarray  # (m,)
    pooled_std: np.ndarray  # (m,)
    free_mean: np.ndarray  # (h, m) the position-only part, a function of j - i: no spread
    with_content: bool
    deviation: float  # with content
    deviation_position: float  # position only
    scale: float
    scale_position: float
    over: str  # "whole" or "window"
    logit_bytes: int  # the scheme's estimate for its logits at this n (b = 1)

    def curve(self, head: int | None = None, normalise: bool = False, position_only=False):
        """(mean (m,), std (m,)) of one head or pooled over heads (None); with ``normalise``
        both divided by the curve's largest |mean| (so every curve peaks at ±1).
        ``position_only``: the content-free part, its spread over the heads when pooled."""
        if position_only:
            free = self.free_mean
            mean = free.mean(0) if head is None else free[head]
            std = free.std(0) if head is None else np.zeros_like(mean)
        else:
            mean, std = (
                (self.pooled_mean, self.pooled_std)
                if head is None
                else (self.mean[head], self.std[head])
            )
        if normalise:
            peak = float(np.nanmax(np.abs(mean), initial=0.0))
            if peak > 0:
                mean, std = mean / peak, std / peak
        return mean, std

    def toeplitz(self, position_only: bool = False) -> bool:
        """Whether the term is a function of j - i alone, up to float32 rounding."""
        if position_only:
            return self.deviation_position <= TOEPLITZ_RTOL * max(self.scale_position, 1.0)
        return self.deviation <= TOEPLITZ_RTOL * max(self.scale, 1.0)


def _scale(profile) -> float:
    low, high = profile.low.abs(), profile.high.abs()
    both = torch.cat([low[low.isfinite()], high[high.isfinite()]])
    return float(both.max()) if both.numel() else 0.0


def _row_profile(scheme: PositionScheme, params: ViewParams):
    """The content-free term's values at every distance from its last and first query rows
    (a function of j - i is fixed by them): (distance (m,), value (h, m)), O(n) work."""
    inputs = example_inputs(params, scheme.name)
    n = params.length
    q, k = content_free(inputs.q), content_free(inputs.k)
    plan_scheme("position-only profile", scheme, 1, n)
    with torch.no_grad():
        last = scheme.position_term(q[:, :, -1:], k, causal=params.causal, query_offset=n - 1)
        first = scheme.position_term(q[:, :, :1], k, causal=params.causal)
    past = distance_profile(last, query_offset=n - 1, causal=params.causal)  # -(n-1)..0
    future = distance_profile(first, causal=params.causal)  # 0..n-1 (only 0 when causal)
    distance = torch.cat([past.distance[:-1], future.distance])
    mean = torch.cat([past.mean[0, :, :-1], future.mean[0]], dim=-1)
    return distance, mean


@cached(16)
def profile_view(params: ViewParams, config: SchemeConfig) -> ProfileView:
    """The distance profile of ``config``'s position term, and both Toeplitz deviations.

    Up to FULL_PROFILE_CELLS (heads·n²) both profiles run over the whole matrix. Above, every
    diagonal of six (h, n, n) terms twice would take several seconds: the profile drawn is the
    position-only part from two query rows (exact, it is a function of j - i), and both
    deviations are measured on the window's block.
    """
    scheme = scheme_for(params, config)
    n, heads = params.length, params.heads
    inputs = example_inputs(params, scheme.name)
    rows = max(1, min(n, BLOCK_CELLS // (heads * n)))  # scheme_profile's blocks of rows
    nbytes = scheme.logit_bytes(n, n)
    distance, free_mean = _row_profile(scheme, params)
    if heads * n * n <= FULL_PROFILE_CELLS:
        plan_scheme("distance profile", scheme, rows, n)  # the window's path plans its own
        with torch.no_grad():
            full = scheme_profile(scheme, inputs.q, inputs.k, causal=params.causal)
            free = scheme_profile(
                scheme, inputs.q, inputs.k, causal=params.causal, position_only=True
            )
        pooled = full.pooled()
        return ProfileView(
            distance=full.distance.numpy(),
            mean=_np(full.mean[0]),
            std=_np(full.std[0]),
            pooled_mean=_np(pooled.mean[0, 0]),
            pooled_std=_np(pooled.std[0, 0]),
            free_mean=_np(free_mean),
            with_content=True,
            deviation=full.toeplitz_deviation,
            deviation_position=free.toeplitz_deviation,
            scale=_scale(full),
            scale_position=_scale(free),
            over="whole",
            logit_bytes=nbytes,
        )
    mean = free_mean
    term = _window_terms(scheme, params, "window profile")["position"]
    start, stop = params.window
    inputs_free = (content_free(inputs.q), content_free(inputs.k))
    with torch.no_grad():
        window_free = scheme.position_term(
            inputs_free[0][:, :, start:stop], inputs_free[1][:, :, start:stop], causal=params.causal
        )
    on_window = distance_profile(term, causal=params.causal)
    free_window = distance_profile(window_free, causal=params.causal)
    pooled_mean = mean.mean(0)  # every head has one cell per distance and row: equal weights
    spread = ((mean - pooled_mean) ** 2).mean(0).sqrt()
    return ProfileView(
        distance=distance.numpy(),
        mean=_np(mean),
        std=np.zeros(tuple(mean.shape), np.float32),
        pooled_mean=_np(pooled_mean),
        pooled_std=_np(spread),
        free_mean=_np(free_mean),
        with_content=False,
        deviation=on_window.toeplitz_deviation,
        deviation_position=free_window.toeplitz_deviation,
        scale=_scale(on_window),
        scale_position=_scale(free_window),
        over="window",
        logit_bytes=nbytes,
    )


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
    reasons = {name: unavailable(params, settings.config(name, params)) for name in SCHEME_NAMES}
    return {name: reason for name, reason in reasons.items() if reason is not None}


def family_profiles(params: ViewParams, settings: FamilySettings) -> dict[str, ProfileView]:
    """The profile of every scheme that can run on this view, in registry order (each cached
    on its own)."""
    missing = unavailable_schemes(params, settings)
    return {
        name: profile_view(params, settings.config(name, params))
        for name in SCHEME_NAMES
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
def compare_view(params: ViewParams, config_a: SchemeConfig, config_b: SchemeConfig) -> CompareView:
    start, stop = params.window
    weights_a, z_a = _attention_rows(scheme_for(params, config_a), params)
    weights_b, z_b = _attention_rows(scheme_for(params, config_b), params)
    allowed = window_allowed(params).numpy()

    def window(weights: torch.Tensor) -> np.ndarray:
        return np.where(allowed, _np(weights[:, :, start:stop]), np.nan).astype(np.float32)

    shown_a, shown_b = window(weights_a), window(weights_b)
    return CompareView(
        weights_a=shown_a,
        weights_b=shown_b,
        difference=shown_b - shown_a,
        weight_diff=_np((weights_b - weights_a).abs().amax((-2, -1))),
        output_diff=_np((z_b - z_a).abs().amax((-2, -1))),
    )


SATURATE_QUANTILE = 0.995  # a diverging scale bound at this quantile of |value| when it helps


@dataclass(frozen=True)
class ColourRange:
    """The ±bound of a diverging colour scale for some panels, and what it leaves out."""

    zrange: tuple[float, float] | None  # None: the largest |value| (the usual scale)
    note: str  # a caption sentence when colours saturate, else ""


def colour_range(panels: list[np.ndarray]) -> ColourRange:
    """A few large values would wash every other cell out to white: when the largest |value|
    is over twice the SATURATE_QUANTILE quantile of |value|, bound the scale there and say how
    many cells saturate (hover and the zoom still give exact values)."""
    values = np.abs(np.concatenate([np.ravel(p) for p in panels]))
    values = values[np.isfinite(values)]
    if values.size == 0:
        return ColourRange(None, "")
    bound, top = float(np.quantile(values, SATURATE_QUANTILE)), float(values.max())
    if bound <= 0 or top <= 2 * bound:
        return ColourRange(None, "")
    beyond = float((values > bound).mean())
    return ColourRange(
        (-bound, bound),
        f"Colours saturate beyond ±{bound:.3g} ({beyond:.1%} of cells; the largest |value| is "
        f"{top:.3g}).",
    )


def term_scales(terms: list[np.ndarray], shared: bool) -> tuple[list[Scale], str]:
    """One colour scale per head (each its own, or one for all) and the caption that says so,
    with any saturation note."""
    groups = [terms] if shared else [[t] for t in terms]
    ranges = [colour_range(g) for g in groups]
    scales = [
        make_scale("diverging", g, zrange=r.zrange) for g, r in zip(groups, ranges, strict=True)
    ]
    notes = " ".join(dict.fromkeys(r.note for r in ranges if r.note))
    if shared:
        return scales * len(terms), scales[0].caption + " " + notes
    return scales, own_scales_caption(scales) + " " + notes
