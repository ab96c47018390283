"""T5's bias as FlexAttention's ``score_mod``: b_h[bucket(j - i)], added as it is.

It closes over the (h, buckets) table and the bucket of each distance j - i the rows reach, an
index vector of n_q + n_k - 1 entries: nothing of size (n_q, n_k). Causal attention buckets
one direction (all buckets for the past) and two-sided attention both, so the function is built
for one ``causal``.
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

from .maths import t5_bucket

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # b_h[bucket(j - i)]: entry kv_idx - q_idx + {last_query} holds the bucket of j - i
    return score + bias[h, bucket[kv_idx - q_idx + {last_query}]]
"""


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """The bucketed bias over q · k / sqrt(d), for ``causal`` (unidirectional buckets) or both
    directions: the same logits as ``scheme.logits`` with that ``causal``. The table keeps its
    autograd graph to the scheme's bias."""
    n_q, n_k = q.shape[2], k.shape[2]
    first = -(query_offset + n_q - 1)  # the smallest j - i
    distance = torch.arange(first, n_k - query_offset, device=q.device)
    bucket = t5_bucket(distance, not causal, scheme.num_buckets, scheme.max_distance)
    bias = scheme.bias.to(q.dtype).T  # (buckets, h) -> (h, buckets)
    name = f"{scheme.name}_score_mod"
    way = "one direction (causal)" if causal else "both directions"
    return Mod(
        kind="score_mod",
        name=name,
        source=SOURCE.format(name=name, last_query=n_q - 1),
        closes_over={"bias": bias, "bucket": bucket},
        words=(
            f"bias: each head's bias per bucket, {tuple(bias.shape)}; bucket: the bucket of each "
            f"distance j - i = {first} ... {n_k - 1 - query_offset}, ({len(bucket)},), "
            f"bucketed {way}."
        ),
    )
