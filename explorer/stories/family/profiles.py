"""A scheme's position term along every distance j - i (its distance profile), with content and
position only, and how far the term is from a function of j - i alone (a Toeplitz matrix).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.budget import plan_scheme
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.family.window_terms import as_float32, window_terms
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.schemes import PositionScheme, content_free, distance_profile, scheme_profile
from relpos_core.schemes.profile import BLOCK_CELLS

# h heads · i query pos · j key pos · m distances j - i
# A profile of every diagonal holds heads·n² cells per scheme: up to this many (n = 512 at four
# heads) the page runs it with content and content-free; above, see profile_view(). At 2^22
# cells (n = 1024) one scheme's whole profile took 240-290 MB for 1-3 s, more than a small
# host has to spare; the rows and the window take a tenth.
FULL_PROFILE_CELLS = 2**20
TOEPLITZ_RTOL = 1e-5  # a deviation this small relative to the term's largest |value| is rounding


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
            mean=as_float32(full.mean[0]),
            std=as_float32(full.std[0]),
            pooled_mean=as_float32(pooled.mean[0, 0]),
            pooled_std=as_float32(pooled.std[0, 0]),
            free_mean=as_float32(free_mean),
            with_content=True,
            deviation=full.toeplitz_deviation,
            deviation_position=free.toeplitz_deviation,
            scale=_scale(full),
            scale_position=_scale(free),
            over="whole",
            logit_bytes=nbytes,
        )
    mean = free_mean
    term = window_terms(scheme, params, "window profile")["position"]
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
        mean=as_float32(mean),
        std=np.zeros(tuple(mean.shape), np.float32),
        pooled_mean=as_float32(pooled_mean),
        pooled_std=as_float32(spread),
        free_mean=as_float32(free_mean),
        with_content=False,
        deviation=on_window.toeplitz_deviation,
        deviation_position=free_window.toeplitz_deviation,
        scale=_scale(on_window),
        scale_position=_scale(free_window),
        over="window",
        logit_bytes=nbytes,
    )
