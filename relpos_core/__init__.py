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

from relpos_core.attention import ATTENTION_METHODS, AttentionTrace, relative_attention
from relpos_core.encodings import encoding_similarity, sinusoidal_encoding
from relpos_core.guard import check_fits, device_memory_bytes, format_bytes
from relpos_core.layer import RelativeMultiHeadAttention, RelativePosition
from relpos_core.logits import LOGIT_METHODS, MatmulTrace, relative_logits, trace_matmul_logits
from relpos_core.lookup import (
    gather_relative,
    relative_distances,
    relative_index,
    relative_table,
)
from relpos_core.masks import (
    causal_mask,
    combine_masks,
    masked_softmax,
    padding_mask,
    trailing_padding_mask,
)
from relpos_core.memory import attention_bytes, logits_bytes, memory_bytes
from relpos_core.methods import METHOD_NAMES, METHODS, Method, choose_method, get_method
from relpos_core.skew import (
    SkewTrace,
    absolute_to_relative_masked,
    absolute_to_relative_unmasked,
    skew_embeddings,
    skew_masked,
    skew_unmasked,
    trace_skew_masked,
    trace_skew_unmasked,
)
from relpos_core.trace import Step
from relpos_core.values import relative_values

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
    "check_fits",
    "choose_method",
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
