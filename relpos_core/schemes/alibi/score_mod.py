"""ALiBi as FlexAttention's ``score_mod``: the logit plus -m_h |j - i|, added as it is (the
slopes are set for logits already divided by sqrt(d)).

It closes over the H slopes alone; the distance is computed in the function from the indices.
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # ALiBi: -m_h |j - i|, the query at position q_idx + {offset}
    distance = kv_idx - (q_idx + {offset})
    return score - slopes[h] * distance.abs()
"""


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """-m_h |j - i| added to q · k / sqrt(d): the same logits as ``scheme.logits``, either
    direction (``causal`` changes nothing: the mask hides the future)."""
    name = f"{scheme.name}_score_mod"
    slopes = scheme.slopes.to(q.dtype)  # (h,)
    return Mod(
        kind="score_mod",
        name=name,
        source=SOURCE.format(name=name, offset=query_offset),
        closes_over={"slopes": slopes},
        words=f"slopes: each head's slope m_h, {tuple(slopes.shape)}; nothing of size n.",
    )
