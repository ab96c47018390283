"""Shaw et al. 2018's key term as FlexAttention's ``score_mod``, and what it cannot carry.

    e_ij = q_i · k_j / sqrt(d) + q_i · w^K_clip(j-i, k) / sqrt(d)

The key term is read from a precomputed table: q_i · w^K_r / sqrt(d) for each query and each of
the 2k + 1 clipped distances r, (b, h, n_q, 2k + 1), picked per cell at clip(j - i, k) + k.
The value term z_i += sum_j alpha_ij w^V_clip(j-i, k) changes the output, not the logits: a
``score_mod`` cannot express it (``VALUE_TERM``).
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # Shaw's key term: q_i · w^K_clip(j - i, {k}) / sqrt(d), the query at position q_idx + {offset}
    distance = kv_idx - (q_idx + {offset})
    return score + q_wk[b, h, q_idx, distance.clamp(-{k}, {k}) + {k}]
"""

VALUE_TERM = (
    "Shaw's value term adds sum_j alpha_ij w^V_clip(j-i, k) to each query's output, after the "
    "softmax: a score_mod changes only the logits, so FlexAttention cannot express it. "
    "relpos_core.relative_attention(q, k, v, table_k, table_v) computes the whole attention "
    "with it, and the scheme's relative_values(weights, causal, query_offset) the term alone, to "
    "add to FlexAttention's output given the same weights."
)


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """The key term over q · k / sqrt(d): the same logits as ``scheme.logits`` (``causal``
    changes nothing: the mask hides the future). The table keeps its autograd graph to q and
    w^K."""
    clip = scheme.max_relative_position
    name = f"{scheme.name}_score_mod"
    q_wk = (q @ scheme.table_k.to(q.dtype).T) * scheme.scale  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
    return Mod(
        kind="score_mod",
        name=name,
        source=SOURCE.format(name=name, k=clip, offset=query_offset),
        closes_over={"q_wk": q_wk},
        words=(
            f"q_wk: q_i · w^K_r / sqrt(d) for each query and each clipped distance r = -{clip} "
            f"... {clip}, {tuple(q_wk.shape)}, read at clip(j - i, {clip}) + {clip}."
        ),
    )
