"""Shaw et al. 2018, "Self-Attention with Relative Position Representations", eqs. (3)-(5).

    e_ij = q_i · (k_j + a^K_ij) / sqrt(d),   z_i = sum_j alpha_ij (v_j + a^V_ij)
    a^K_ij = w^K_clip(j-i, k),  a^V_ij = w^V_clip(j-i, k),  clip(x, k) = max(-k, min(k, x))

Two learned (2k+1, d) tables shared by every head. Computed by bands
(``relpos_core.methods.banded``): Q (w^K)^T per query, then each cell picks its bucket; no
(n, n, d) tensor.
"""

from __future__ import annotations

import torch

from relpos_core.guard import check_fits
from relpos_core.methods.banded import banded_logits, banded_values
from relpos_core.schemes.base import PositionScheme
from relpos_core.validation import check_generator, check_int


class ShawRelative(PositionScheme):
    name = "shaw"
    TERMS = ("content", "relative")
    POSITION_TERMS = ("relative",)
    has_value_term = True

    def __init__(
        self,
        heads: int,
        head_dim: int,
        max_relative_position: int = 16,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(heads, head_dim)
        head_dim = self.head_dim
        k = check_int("max_relative_position (clip distance k)", max_relative_position, 0, 2**20)
        self.max_relative_position = k
        check_fits(f"shaw tables with k = {k}, d = {head_dim}", 8 * (2 * k + 1) * head_dim, None)
        check_generator("generator", generator)
        bound = (6.0 / (2 * k + 1 + head_dim)) ** 0.5  # Xavier-uniform, as the reference layer
        shape = (2 * k + 1, head_dim)
        self.table_k = torch.nn.Parameter((torch.rand(shape, generator=generator) * 2 - 1) * bound)
        self.table_v = torch.nn.Parameter((torch.rand(shape, generator=generator) * 2 - 1) * bound)

    def position_terms(self, q, k, causal, query_offset):
        table = self.table_k.to(q.dtype)  # the tables follow the inputs' dtype, as every scheme
        return {"relative": banded_logits(q, table, k.shape[2], query_offset) * self.scale}

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        return batch * self.heads * n_q * (2 * self.max_relative_position + 1) * itemsize

    def relative_values(self, weights, causal, query_offset):
        return banded_values(weights, self.table_v.to(weights.dtype), query_offset)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", max_relative_position={self.max_relative_position}"
