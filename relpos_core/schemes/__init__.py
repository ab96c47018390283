"""The family of relative position schemes, each one small ``PositionScheme`` object.

    shaw   Shaw et al. 2018: clipped learned tables for keys and values
    music  Huang et al. 2018 / tensor2tensor v2: per-distance embeddings, zero beyond the table
    xl     Dai et al. 2019 (Transformer-XL): sinusoid R_(i-j), projection, global biases u and v
    t5     Raffel et al. 2020 (T5): one learned scalar per head per log-spaced bucket
    alibi  Press et al. 2022 (ALiBi): fixed linear penalty -m_h |j - i|
    rope   Su et al. 2021 (RoPE): rotary embedding of queries and keys

Every scheme shares the content term q_i · k_j / sqrt(d) and adds its own position terms;
``scheme(q, k, v, causal=...)`` returns (z, alpha). ``make_scheme`` builds one by name from a
seed; ``profile`` measures how far a term is from a function of j - i.
"""

from __future__ import annotations

import torch

from relpos_core.checks import check_choice, check_int
from relpos_core.schemes.alibi import ALiBi, alibi_slopes
from relpos_core.schemes.base import CONTENT, PositionScheme
from relpos_core.schemes.music import MusicRelative
from relpos_core.schemes.profile import (
    DistanceProfile,
    content_free,
    distance_profile,
    scheme_profile,
)
from relpos_core.schemes.rel_shift import RelShiftTrace, rel_shift, trace_rel_shift
from relpos_core.schemes.rope import Rotary, rotary_angles, rotate
from relpos_core.schemes.shaw import ShawRelative
from relpos_core.schemes.t5 import T5Bias, t5_bucket
from relpos_core.schemes.transformer_xl import TransformerXL, xl_sinusoid

SCHEMES: dict[str, type[PositionScheme]] = {
    cls.name: cls for cls in (ShawRelative, MusicRelative, TransformerXL, T5Bias, ALiBi, Rotary)
}
SCHEME_NAMES = tuple(SCHEMES)
LEARNED = ("shaw", "music", "xl", "t5")  # schemes whose constructor draws parameters


def make_scheme(name: str, heads: int, head_dim: int, seed: int = 0, **params) -> PositionScheme:
    """The scheme ``name`` with its parameters drawn from ``seed`` (the global RNG untouched).

    ``params`` are the scheme's own keyword arguments (e.g. ``max_relative_position`` for shaw,
    ``num_buckets`` for t5, ``base`` for rope).

    >>> make_scheme("alibi", heads=2, head_dim=4)
    ALiBi(heads=2, head_dim=4, max_bias=8.0)
    """
    cls = SCHEMES[check_choice("scheme", name, SCHEME_NAMES)]
    seed = check_int("seed", seed, 0, 2**63 - 1)
    if "generator" in params:
        raise ValueError(
            "make_scheme draws parameters from seed; pass seed=, not generator= (construct "
            f"{cls.__name__} directly to use your own generator)"
        )
    if name in LEARNED:
        params["generator"] = torch.Generator().manual_seed(seed)
    try:
        return cls(heads, head_dim, **params)
    except TypeError as error:  # an unknown keyword: name what the scheme takes
        if "unexpected keyword" not in str(error):
            raise
        raise ValueError(f"scheme {name!r} does not take those parameters: {error}") from None


__all__ = [
    "CONTENT",
    "LEARNED",
    "SCHEMES",
    "SCHEME_NAMES",
    "ALiBi",
    "DistanceProfile",
    "MusicRelative",
    "PositionScheme",
    "RelShiftTrace",
    "Rotary",
    "ShawRelative",
    "T5Bias",
    "TransformerXL",
    "alibi_slopes",
    "content_free",
    "distance_profile",
    "make_scheme",
    "rel_shift",
    "rotary_angles",
    "rotate",
    "scheme_profile",
    "t5_bucket",
    "trace_rel_shift",
    "xl_sinusoid",
]
