"""DeBERTa's disentangled attention as FlexAttention's ``score_mod``, with its own scale.

    A_ij = (q_i · k_j + q_i · P^K[c(i, j)] + k_j · P^Q[c(i, j)]) / sqrt(3 d)

It closes over c2p = q P^K^T / sqrt(3d) per query, (b, h, n_q, 2 span), p2c = k P^Q^T /
sqrt(3d) per key, (b, h, n_k, 2 span), and the row c of each distance i - j the rows reach, an
index vector of n_q + n_k - 1 entries (c depends on the pair only through i - j). The softmax
scale is 1/sqrt(3d), not FlexAttention's 1/sqrt(d): ``Mod.scale`` carries it.
"""

from __future__ import annotations

import torch

from relpos_core.mods import Mod

SOURCE = """
def {name}(score, b, h, q_idx, kv_idx):
    # the row of P for i - j (entry q_idx - kv_idx + {last_key}); c2p reads the query, p2c the key
    c = row[q_idx - kv_idx + {last_key}]
    return score + c2p[b, h, q_idx, c] + p2c[b, h, kv_idx, c]
"""


def score_mod(
    scheme, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0, *, causal: bool = False
) -> Mod:
    """c2p + p2c over q · k, all divided by sqrt(3d) (``scale``): the same logits as
    ``scheme.logits`` (``causal`` changes nothing: the mask hides the future). The tables keep
    their autograd graph to q, k, P and its projections."""
    n_q, n_k = q.shape[2], k.shape[2]
    # c(i, j) along the last row of keys: (n_q + n_k - 1,) for i - j = offset - (n_k - 1) ...
    grid = scheme.rows(n_q + n_k - 1, 1, query_offset - (n_k - 1), q.device)
    row = grid[:, 0]
    pos_key, pos_query = scheme.position_vectors(q.dtype)  # (h, 2span, d) each
    c2p = (q @ pos_key.transpose(-2, -1)) * scheme.scale  # (b,h,i,d),(h,d,2span) -> (b,h,i,2span)
    p2c = (k @ pos_query.transpose(-2, -1)) * scheme.scale  # (b,h,j,2span)
    name = f"{scheme.name}_score_mod"
    low = query_offset - (n_k - 1)
    return Mod(
        kind="score_mod",
        name=name,
        source=SOURCE.format(name=name, last_key=n_k - 1),
        closes_over={"c2p": c2p, "p2c": p2c, "row": row},
        words=(
            f"c2p: q_i · P^K_c / sqrt(3d) per query, {tuple(c2p.shape)}; p2c: k_j · P^Q_c / "
            f"sqrt(3d) per key, {tuple(p2c.shape)}; row: the row c of each distance i - j = "
            f"{low} ... {query_offset + n_q - 1}, ({len(row)},)."
        ),
        scale=scheme.scale,
    )
