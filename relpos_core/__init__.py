"""relpos_core: every step of relative-position self-attention, exact and traced.

Shaw et al. 2018, "Self-Attention with Relative Position Representations";
Huang et al. 2018, "Music Transformer" (the skew).

Dimension legend used in shape comments throughout:
  b batch · h heads · i query pos · j key pos · d head dim · k clip distance · L = n_q = n_k
Torch tensors in and out, float32 or float64. Never imports streamlit.
"""

from relpos_core.attention import (
    ATTENTION_METHODS,
    AttentionTrace,
    masked_softmax,
    relative_attention,
)
from relpos_core.banded import choose_method
from relpos_core.encodings import encoding_similarity, sinusoidal_encoding
from relpos_core.fast import FAST_METHODS, relative_attention_output
from relpos_core.layer import RelativeMultiHeadAttention, RelativePosition
from relpos_core.logits import (
    LOGIT_METHODS,
    MatmulTrace,
    relative_logits,
    skew_embeddings,
    trace_matmul_logits,
)
from relpos_core.lookup import (
    gather_relative,
    relative_distances,
    relative_index,
    relative_table,
)
from relpos_core.masks import causal_mask, padding_mask, trailing_padding_mask
from relpos_core.memory import MEMORY_METHODS, logits_bytes, memory_bytes
from relpos_core.skew import (
    SkewTrace,
    absolute_to_relative_masked,
    absolute_to_relative_unmasked,
    skew_masked,
    skew_unmasked,
    trace_skew_masked,
    trace_skew_unmasked,
)
from relpos_core.trace import Step
from relpos_core.values import relative_values

__all__ = [
    "ATTENTION_METHODS",
    "FAST_METHODS",
    "LOGIT_METHODS",
    "MEMORY_METHODS",
    "AttentionTrace",
    "MatmulTrace",
    "RelativeMultiHeadAttention",
    "RelativePosition",
    "SkewTrace",
    "Step",
    "absolute_to_relative_masked",
    "absolute_to_relative_unmasked",
    "causal_mask",
    "choose_method",
    "encoding_similarity",
    "gather_relative",
    "logits_bytes",
    "masked_softmax",
    "memory_bytes",
    "padding_mask",
    "relative_attention",
    "relative_attention_output",
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
