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

Each scheme is one folder here, ``<name>/`` (``folders`` says what each of its modules holds):
its class, its catalogue entry (label, paper, formulas, settings, trained model), the checker's
definition of it, its reading by distance and how checkpoints store it. ``catalogue`` is the
walk of those entries and loads no torch; nor does this package until one of its classes or
functions is asked for. The names below are re-exported from the folders' maths modules.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULE_OF = {
    "CONTENT": "base",
    "PositionScheme": "base",
    "ALiBi": "alibi",
    "alibi_slopes": "alibi",
    "MusicRelative": "music",
    "DistanceProfile": "profile",
    "content_free": "profile",
    "distance_profile": "profile",
    "scheme_profile": "profile",
    "RelShiftTrace": "xl.shift",
    "rel_shift": "xl.shift",
    "trace_rel_shift": "xl.shift",
    "Rotary": "rope",
    "check_scaling": "rope",
    "rope_decay_bound": "rope",
    "rope_frequencies": "rope",
    "rotary_angles": "rope",
    "rotate": "rope",
    "ShawRelative": "shaw",
    "T5Bias": "t5",
    "t5_bucket": "t5",
    "TransformerXL": "xl",
    "xl_sinusoid": "xl",
    "make_scheme": "build",
    "scheme_class": "build",
    "SchemeEntry": "catalogue",
    "Setting": "catalogue",
    "ROPE_SCALINGS": "catalogue",
    "RopeScaling": "catalogue",
    "rope_scaling": "catalogue",
    "registered": "catalogue",
    "scheme_entries": "catalogue",
    "scheme_entry": "catalogue",
    "scheme_label": "catalogue",
    "scheme_names": "catalogue",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'relpos_core.schemes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"relpos_core.schemes.{module}"), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
