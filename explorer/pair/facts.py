"""Every number the definition gives one pair (i, j) of one head, computed on query row i alone.

For query i and key j of head h (Shaw et al. 2018, eqs. 2-4, the queries scaled by 1/sqrt(d)):

    r = j - i,  table row = clip(r, k) + k,  a^K_ij = w^K[row],  a^V_ij = w^V[row]
    e_ij = q_i . k_j / sqrt(d) + q_i . a^K_ij / sqrt(d)     (content + relative)
    alpha_ij = exp(e_ij) / sum over allowed j' of exp(e_ij')  (0 where the mask hides j)
    z_i = sum_j alpha_ij (v_j + a^V_ij)

and the pair's share of z_i is the projection of its term on z_i:
``alpha_ij (v_j + a^V_ij) . z_i / |z_i|^2``; the shares of a row sum to 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.pair.definition import Pair, hidden_reason
from explorer.weights.example import example_inputs


@dataclass(frozen=True)
class PairFacts:
    """The numbers of one pair for one head, by the definition (see the module docstring)."""

    pair: Pair
    head: int
    allowed: bool
    why_hidden: str  # "" when allowed
    a_k: np.ndarray  # (d,) w^K[table row]
    a_v: np.ndarray  # (d,) w^V[table row]
    content: float
    relative: float
    weight: float  # 0 where hidden
    share: float  # projection share of z_i (0 where hidden or z_i = 0)
    row_weight_sum: float  # sum of the row's weights (1, or 0 when every key is hidden)

    @property
    def logit(self) -> float:
        return self.content + self.relative


@cached(32)
def pair_facts(params: ViewParams, head: int, i: int, j: int) -> PairFacts:
    """Every number of pair (i, j) for ``head``, computed on query row i alone (all n keys)."""
    n = params.length
    if not (0 <= i < n and 0 <= j < n):
        raise ValueError(f"pair (i, j) must lie in [0, {n - 1}], got ({i}, {j})")
    if not 0 <= head < params.heads:
        raise ValueError(f"head must be in [0, {params.heads - 1}], got {head}")
    inputs = example_inputs(params)
    pair = Pair(i, j, params.k)
    q = inputs.scaled_q[0, head, i].double()  # (d,) q_i / sqrt(d)
    keys, values = inputs.k[0, head].double(), inputs.v[0, head].double()  # (n, d)
    table_k, table_v = inputs.table_k.double(), inputs.table_v.double()
    rows = (torch.arange(n) - i).clamp(-params.k, params.k) + params.k  # table row of every j
    content = keys @ q  # (n,)
    relative = table_k[rows] @ q
    allowed = torch.ones(n, dtype=torch.bool) if inputs.mask is None else inputs.mask.reshape(n)
    if inputs.causal:
        allowed = allowed & (torch.arange(n) <= i)
    logits = (content + relative).masked_fill(~allowed, -math.inf)
    weights = torch.softmax(logits, -1) if bool(allowed.any()) else torch.zeros(n)
    weights = torch.nan_to_num(weights)
    terms = weights[:, None] * (values + table_v[rows])  # (n, d) alpha_ij (v_j + a^V_ij)
    z = terms.sum(0)
    norm2 = float(z @ z)
    share = float(terms[j] @ z) / norm2 if norm2 > 0 else 0.0
    return PairFacts(
        pair=pair,
        head=head,
        allowed=bool(allowed[j]),
        why_hidden=hidden_reason(params, inputs.causal, i, j),
        a_k=table_k[pair.table_row].float().numpy(),
        a_v=table_v[pair.table_row].float().numpy(),
        content=float(content[j]),
        relative=float(relative[j]),
        weight=float(weights[j]),
        share=share,
        row_weight_sum=float(weights.sum()),
    )
