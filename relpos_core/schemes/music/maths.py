"""Music Transformer's relative attention as tensor2tensor's v2 computes it: Huang et al. 2018,
"Music Transformer", Sec. 3.4, and tensor2tensor's ``dot_product_self_attention_relative_v2``
(masked) and ``dot_product_unmasked_self_attention_relative_v2`` (both directions).

    e_ij = q_i · (k_j + E_(j-i)) / sqrt(d),   z_i = sum_j alpha_ij (v_j [+ E^V_(j-i)])

Per head, one embedding per distance r with |r| <= L - 1 (L = ``max_relative_position``), no
clipping: a distance beyond the table gets the zero vector (tensor2tensor pads the table with
zeros). Causal attention uses only the past half, r <= 0 (the masked variant). For a square
self-attention the logits go through the skew (``relpos_core.skew``): Q E^T then pad, reshape,
slice, so nothing of size (n, n, d) is built. The value term (tensor2tensor's
``add_relative_to_values``) is optional.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from relpos_core.guard import check_fits
from relpos_core.lookup import relative_distances_unguarded
from relpos_core.schemes.base import PositionScheme, init_normal
from relpos_core.skew import (
    absolute_to_relative_masked,
    absolute_to_relative_unmasked,
    skew_masked,
    skew_unmasked,
)
from relpos_core.validation import check_bool, check_int


class MusicRelative(PositionScheme):
    name = "music"
    TERMS = ("content", "relative")
    POSITION_TERMS = ("relative",)

    def __init__(
        self,
        heads: int,
        head_dim: int,
        max_relative_position: int = 64,
        values: bool = False,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(heads, head_dim)
        length = check_int("max_relative_position (table length L)", max_relative_position, 1)
        self.max_relative_position = length
        self.values = check_bool("values", values)
        rows = 2 * length - 1
        check_fits(
            f"music tables with L = {length}, heads = {heads}, d = {head_dim}",
            8 * heads * rows * head_dim,
            None,
        )
        std = head_dim**-0.5  # tensor2tensor's initializer for the relative embeddings
        self.embed_k = init_normal((heads, rows, head_dim), std, generator)  # row c: r = c - (L-1)
        self.embed_v = init_normal((heads, rows, head_dim), std, generator) if values else None
        self.has_value_term = values

    def _slot(self, r: torch.Tensor, causal: bool) -> torch.Tensor:
        """Row of the zero-padded table for each distance: r + L - 1, or 2L - 1 (the zero row)."""
        last = self.max_relative_position - 1
        inside = (r >= -last) & (r <= (0 if causal else last))
        return torch.where(inside, r + last, 2 * last + 1)

    def padded(self, table: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """The table with one zero row appended: (h, 2L, d)."""
        return F.pad(table.to(dtype), (0, 0, 0, 1))

    def sequence_embeddings(
        self, table: torch.Tensor, length: int, causal: bool, dtype: torch.dtype
    ) -> torch.Tensor:
        """E for the distances of a length-n sequence, zero beyond the table: (h, W, d) with
        W = 2n-1 (row c: r = c - (n-1)), or W = n when causal (r = -(n-1)..0).

        tensor2tensor's ``get_relative_embeddings_left`` / ``_left_right``: pad with zeros, slice.
        """
        width = length if causal else 2 * length - 1
        r = torch.arange(width, device=table.device) - (length - 1)
        return self.padded(table, dtype)[:, self._slot(r, causal)]

    def _square(self, q: torch.Tensor, k: torch.Tensor, query_offset: int) -> bool:
        return query_offset == 0 and q.shape[2] == k.shape[2]

    def position_terms(self, q, k, causal, query_offset):
        n_q, n_k = q.shape[2], k.shape[2]
        if self._square(q, k, query_offset):  # the paper's skew
            e = self.sequence_embeddings(self.embed_k, n_q, causal, q.dtype)
            rel = q @ e.transpose(-2, -1)  # (b,h,i,d),(h,d,W) -> (b,h,i,W)
            rel = torch.tril(skew_masked(rel)) if causal else skew_unmasked(rel)
        else:  # any block of rows: one gather from Q E^T per query
            slot = self._slot(
                relative_distances_unguarded(n_q, n_k, query_offset, q.device), causal
            )
            per_slot = q @ self.padded(self.embed_k, q.dtype).transpose(-2, -1)  # (b,h,i,2L)
            rel = per_slot.gather(-1, slot.expand(*q.shape[:2], -1, -1))
        return {"relative": rel * self.scale}

    def relative_values(self, weights, causal, query_offset):
        if self.embed_v is None:
            return None
        b, h, n_q, n_k = weights.shape
        if query_offset == 0 and n_q == n_k:  # the inverse skew, then (b,h,i,W),(h,W,d)
            e = self.sequence_embeddings(self.embed_v, n_q, causal, weights.dtype)
            to_rel = absolute_to_relative_masked if causal else absolute_to_relative_unmasked
            return to_rel(weights) @ e
        slot = self._slot(
            relative_distances_unguarded(n_q, n_k, query_offset, weights.device), causal
        )
        mass = weights.new_zeros(b, h, n_q, 2 * self.max_relative_position)
        mass.scatter_add_(-1, slot.expand(b, h, -1, -1), weights)  # weight per distance slot
        return mass @ self.padded(self.embed_v, weights.dtype)  # the zero row drops the rest

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        length = self.max_relative_position
        # the zero-padded table (h, 2L, d), or the sequence's embeddings (h, 2n-1, d)
        tables = self.heads * 2 * max(length, n_q, n_k) * self.head_dim * itemsize
        # the gather (any block): Q E^T per table row (b,h,n_q,2L), int64 distances and slots
        work = batch * self.heads * n_q * 2 * length * itemsize + 2 * n_q * n_k * 8
        if n_q == n_k:  # the skew when the queries start at 0: Q E^T (b,h,n,2n-1)
            work = max(work, batch * self.heads * n_q * (2 * n_q - 1) * itemsize)
        return tables + work

    def extra_repr(self) -> str:
        return (
            super().extra_repr()
            + f", max_relative_position={self.max_relative_position}, values={self.values}"
        )
