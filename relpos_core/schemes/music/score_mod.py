"""The Music Transformer's relative logits (tensor2tensor's v2) as FlexAttention's ``score_mod``.

    e_ij = q_i · k_j / sqrt(d) + q_i · E_h,(j-i) / sqrt(d),  zero where |j - i| > L - 1

It closes over q_i · E_h,r / sqrt(d) for each query and each of the 2L - 1 distances r =
-(L-1) .. L-1 the table holds, (b, h, n_q, 2L - 1). A distance past the table reads nothing
(tensor2tensor's zero padding), and causal attention (the masked variant) reads only r <= 0, so
the function is built for one ``causal``. The optional value term (``values=True``) changes the
output, not the logits (``VALUE_TERM``).
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # q_i · E_(j - i) / sqrt(d) for {low} <= j - i <= {high}, zero elsewhere;
    # the query at position q_idx + {offset}
    distance = kv_idx - (q_idx + {offset})
    inside = (distance >= {low}) & (distance <= {high})
    read = q_e[b, h, q_idx, (distance + {last}).clamp(0, {width})]
    return score + torch.where(inside, read, torch.zeros_like(read))
"""

VALUE_TERM = (
    "With values on (tensor2tensor's add_relative_to_values), the Music Transformer adds "
    "sum_j alpha_ij E^V_(j-i) to each query's output, after the softmax: a score_mod changes "
    "only the logits, so FlexAttention cannot express it. The scheme's "
    "relative_values(weights, causal, query_offset) computes the term, to add to "
    "FlexAttention's output given the same weights; calling the scheme computes both."
)


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """The relative logits over q · k / sqrt(d), for ``causal`` (the past half only) or both
    directions: the same logits as ``scheme.logits`` with that ``causal``. The table keeps its
    autograd graph to q and the embeddings."""
    last = scheme.max_relative_position - 1
    high = 0 if causal else last
    name = f"{scheme.name}_score_mod"
    embeddings = scheme.embed_k.to(q.dtype)  # (h, 2L-1, d): row c is distance c - (L-1)
    q_e = (q @ embeddings.transpose(-2, -1)) * scheme.scale  # (b,h,i,d),(h,d,2L-1) -> (b,h,i,2L-1)
    source = SOURCE.format(
        name=name, low=-last, high=high, last=last, width=2 * last, offset=query_offset
    )
    return Mod(
        kind="score_mod",
        name=name,
        source=source,
        closes_over={"q_e": q_e},
        words=(
            f"q_e: q_i · E_r / sqrt(d) for each query and each distance r = -{last} ... {last}, "
            f"{tuple(q_e.shape)}, read at j - i + {last} when {-last} <= j - i <= {high}, "
            "zero elsewhere."
        ),
    )
