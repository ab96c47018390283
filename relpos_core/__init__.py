"""relpos_core: relative-position self-attention, exact, traced step by step, and trainable.

Shaw et al. 2018, "Self-Attention with Relative Position Representations";
Huang et al. 2018, "Music Transformer" (the skew).

Dimension legend used in shape comments throughout:
  b batch · h heads · i query pos · j key pos · d head dim · L = n_q = n_k
  k = max_relative_position, the clip distance (never the keys, which are k_j or ``k``)
Torch tensors in and out, float32 or float64, on any device. Imports only torch and numpy.

One call computes attention: ``relative_attention(q, k, v, table_k, table_v, ...)``, with
``trace=True`` for every step; the methods that compute the relative terms are objects in
``relpos_core.methods.METHODS``. The wider family of position schemes (Music Transformer,
Transformer-XL, T5, ALiBi, RoPE beside Shaw's) lives in ``relpos_core.schemes``.
"""

from __future__ import annotations

import importlib
from typing import Any

# Each public name and the module that defines it. A module is imported when one of its names is
# first asked for (PEP 562): importing a submodule that needs no tensor (relpos_core.clip, the
# explorer's landing page) does not load torch with every other module.
_MODULE_OF = {
    "clip_index": "relpos_core.clip",
    "ATTENTION_METHODS": "relpos_core.attention",
    "AttentionTrace": "relpos_core.attention",
    "relative_attention": "relpos_core.attention",
    "encoding_similarity": "relpos_core.encodings",
    "sinusoidal_encoding": "relpos_core.encodings",
    "check_fits": "relpos_core.guard",
    "device_memory_bytes": "relpos_core.guard",
    "format_bytes": "relpos_core.guard",
    "RelativeMultiHeadAttention": "relpos_core.layer",
    "RelativePosition": "relpos_core.layer",
    "LOGIT_METHODS": "relpos_core.logits",
    "MatmulTrace": "relpos_core.logits",
    "relative_logits": "relpos_core.logits",
    "trace_matmul_logits": "relpos_core.logits",
    "gather_relative": "relpos_core.lookup",
    "relative_distances": "relpos_core.lookup",
    "relative_index": "relpos_core.lookup",
    "relative_table": "relpos_core.lookup",
    "causal_mask": "relpos_core.masks",
    "combine_masks": "relpos_core.masks",
    "masked_softmax": "relpos_core.masks",
    "padding_mask": "relpos_core.masks",
    "trailing_padding_mask": "relpos_core.masks",
    "attention_bytes": "relpos_core.memory",
    "logits_bytes": "relpos_core.memory",
    "memory_bytes": "relpos_core.memory",
    "METHODS": "relpos_core.methods",
    "METHOD_NAMES": "relpos_core.methods",
    "Method": "relpos_core.methods",
    "check_implementation": "relpos_core.check",
    "choose_method": "relpos_core.methods",
    "get_method": "relpos_core.methods",
    "SkewTrace": "relpos_core.skew",
    "absolute_to_relative_masked": "relpos_core.skew",
    "absolute_to_relative_unmasked": "relpos_core.skew",
    "skew_embeddings": "relpos_core.skew",
    "skew_masked": "relpos_core.skew",
    "skew_unmasked": "relpos_core.skew",
    "trace_skew_masked": "relpos_core.skew",
    "trace_skew_unmasked": "relpos_core.skew",
    "Step": "relpos_core.trace",
    "relative_values": "relpos_core.values",
}

__all__ = [
    "ATTENTION_METHODS",
    "LOGIT_METHODS",
    "METHODS",
    "METHOD_NAMES",
    "AttentionTrace",
    "MatmulTrace",
    "Method",
    "RelativeMultiHeadAttention",
    "RelativePosition",
    "SkewTrace",
    "Step",
    "absolute_to_relative_masked",
    "absolute_to_relative_unmasked",
    "attention_bytes",
    "causal_mask",
    "check_implementation",
    "check_fits",
    "choose_method",
    "clip_index",
    "combine_masks",
    "device_memory_bytes",
    "encoding_similarity",
    "format_bytes",
    "gather_relative",
    "get_method",
    "logits_bytes",
    "masked_softmax",
    "memory_bytes",
    "padding_mask",
    "relative_attention",
    "relative_distances",
    "relative_index",
    "relative_logits",
    "relative_table",
    "relative_values",
    "sinusoidal_encoding",
    "skew_embeddings",
    "skew_masked",
    "skew_unmasked",
    "trace_matmul_logits",
    "trace_skew_masked",
    "trace_skew_unmasked",
    "trailing_padding_mask",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'relpos_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is an ordinary one
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
