"""Transformer-XL's terms (b), (c) and (d) as FlexAttention's ``score_mod``.

    A_ij = q_i · k_j / sqrt(d) + (q_i + v) · W_R R_(i-j) / sqrt(d) + u · k_j / sqrt(d)

(b) and (d) depend on the pair only through the distance i - j, so they are precomputed per
query for each of the n_q + n_k - 1 distances the rows reach, (b, h, n_q, n_q + n_k - 1): the
reference code's relative layout before its ``rel_shift``, here read at each cell's own distance
(exact in every cell, two-sided too). (c) is one number per key, (b, h, n_k).
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # (q_i + v) · W_R R_(i - j) / sqrt(d) at column i - j {shift}, plus u · k_j / sqrt(d)
    return score + position[b, h, q_idx, q_idx - kv_idx + {last_key}] + u_k[b, h, kv_idx]
"""


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """(b) + (c) + (d) over q · k / sqrt(d): the same logits as ``scheme.logits`` (``causal``
    changes nothing: the mask hides the future). The tables keep their autograd graph to q, k,
    W_R, u and v."""
    n_q, n_k = q.shape[2], k.shape[2]
    low = query_offset - (n_k - 1)  # the smallest i - j
    keys = scheme.relative_keys(torch.arange(low, query_offset + n_q, device=q.device), q.dtype)
    u, v = scheme.u.to(q.dtype), scheme.v.to(q.dtype)  # (h, d)
    position = ((q + v[None, :, None, :]) @ keys.transpose(-2, -1)) * scheme.scale  # (b,h,i,m)
    u_k = (k @ u[None, :, :, None])[..., 0] * scheme.scale  # (b,h,j,d),(1,h,d,1) -> (b,h,j)
    name = f"{scheme.name}_score_mod"
    shift = f"+ {-low}" if low <= 0 else f"- {low}"  # column = i - j - low
    return Mod(
        kind="score_mod",
        name=name,
        source=SOURCE.format(name=name, shift=shift, last_key=n_k - 1),
        closes_over={"position": position, "u_k": u_k},
        words=(
            f"position: (q_i + v) · W_R R_(i-j) / sqrt(d) for each query and each distance "
            f"i - j = {low} ... {query_offset + n_q - 1}, {tuple(position.shape)}; u_k: "
            f"u · k_j / sqrt(d) for each key, {tuple(u_k.shape)}."
        ),
    )
