"""A multi-head relative attention layer, checkpoint-compatible with the widely copied
PyTorch layout (seed 001): ``fc_q``, ``fc_k``, ``fc_v``, ``fc_o``,
``relative_position_k.embeddings_table`` and ``relative_position_v.embeddings_table``.

Differences from seed 001, all deliberate: ``max_relative_position`` is a real argument (the seed
hard-codes 2); the scale is a float, not a device tensor; a query with no visible key gets a zero
output instead of uniform weights over masked keys (the seed fills -1e10). Outputs agree
wherever at least one key is visible.
"""

from __future__ import annotations

import torch
from torch import nn

from relpos_core.attention import ATTENTION_METHODS, AttentionTrace, relative_attention
from relpos_core.guard import check_fits
from relpos_core.lookup import gather_relative, relative_index_unguarded
from relpos_core.validation import check_choice, check_int, check_real, check_tensor


class RelativePosition(nn.Module):
    """The learned table w = (w_-k, ..., w_k) as a (2k+1, d) parameter ``embeddings_table``."""

    def __init__(self, num_units: int, max_relative_position: int) -> None:
        super().__init__()
        num_units = self.num_units = check_int("num_units", num_units, 1)
        k = self.max_relative_position = check_int(
            "max_relative_position", max_relative_position, 0
        )
        rows = 2 * k + 1
        check_fits(
            f"RelativePosition with max_relative_position = {k} and "
            f"num_units = {num_units} (a ({rows}, {num_units}) float32 table)",
            4 * rows * num_units,
            None,
        )
        self.embeddings_table = nn.Parameter(torch.empty(rows, num_units))
        nn.init.xavier_uniform_(self.embeddings_table)

    def forward(self, length_q: int, length_k: int) -> torch.Tensor:
        """a_ij for every pair: (length_q, length_k, num_units). Materializes; for inspection."""
        length_q = check_int("length_q (number of queries)", length_q, 1)
        length_k = check_int("length_k (number of keys)", length_k, 1)
        table = self.embeddings_table
        check_fits(  # the two int64 index tables, then the gathered vectors
            f"RelativePosition.forward with length_q = {length_q}, length_k = {length_k} "
            f"(a ({length_q}, {length_k}, {self.num_units}) tensor)",
            length_q * length_k * (16 + self.num_units * table.element_size()),
            None,
            table.device,
        )
        index = relative_index_unguarded(
            length_q, length_k, self.max_relative_position, 0, table.device
        )
        return gather_relative(table, index)


class RelativeMultiHeadAttention(nn.Module):
    """Multi-head self/cross attention with Shaw et al.'s relative key and value terms.

    forward(query (b, n_q, hid), key (b, n_k, hid), value (b, n_k, hid), mask) -> (b, n_q, hid).
    ``mask`` broadcasts to (b, heads, n_q, n_k); 0 / False = masked (seed 001's semantics).
    ``method`` picks the exact algorithm for the relative terms (all give the same numbers);
    "auto" runs the fused banded path, which trains without any (b, h, n_q, n_k) tensor.
    ``forward`` takes ``causal`` and ``query_offset`` as ``relative_attention`` does.
    """

    def __init__(
        self,
        hid_dim: int,
        n_heads: int,
        max_relative_position: int,
        dropout: float = 0.0,
        method: str = "auto",
    ) -> None:
        super().__init__()
        hid_dim = check_int("hid_dim", hid_dim, 1)
        n_heads = check_int("n_heads", n_heads, 1)
        if hid_dim % n_heads:
            raise ValueError(
                f"hid_dim must be divisible by n_heads, got hid_dim={hid_dim}, n_heads={n_heads}"
            )
        dropout = check_real("dropout", dropout, 0, 1, high_open=True)
        self.hid_dim = hid_dim
        self.n_heads = n_heads
        self.head_dim = hid_dim // n_heads
        k = self.max_relative_position = check_int(
            "max_relative_position", max_relative_position, 0
        )
        self.method = check_choice("method", method, ATTENTION_METHODS)
        table_values = 2 * (2 * k + 1) * self.head_dim  # w^K and w^V
        check_fits(
            f"RelativeMultiHeadAttention with max_relative_position = {k}, "
            f"hid_dim = {hid_dim}, n_heads = {n_heads}",
            4 * (table_values + 4 * hid_dim * (hid_dim + 1)),
            None,
        )
        self.relative_position_k = RelativePosition(self.head_dim, k)
        self.relative_position_v = RelativePosition(self.head_dim, k)
        self.fc_q = nn.Linear(hid_dim, hid_dim)
        self.fc_k = nn.Linear(hid_dim, hid_dim)
        self.fc_v = nn.Linear(hid_dim, hid_dim)
        self.fc_o = nn.Linear(hid_dim, hid_dim)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        return x.view(b, n, self.n_heads, self.head_dim).permute(0, 2, 1, 3)  # (b,h,n,dh)

    def _heads(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_tensor(name, x, 3)
            if x.shape[-1] != self.hid_dim:
                raise ValueError(
                    f"{name} must have last dim hid_dim={self.hid_dim}, got shape {tuple(x.shape)}"
                )
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(
                "query, key, value must share the batch size and key/value their length, got "
                f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
            )
        q = self._split_heads(self.fc_q(query))  # (b,h,i,dh)
        k = self._split_heads(self.fc_k(key))  # (b,h,j,dh)
        v = self._split_heads(self.fc_v(value))  # (b,h,j,dh)
        return q, k, v

    def _merge_heads(self, out: torch.Tensor) -> torch.Tensor:
        b, _, n_q, _ = out.shape
        return self.fc_o(out.permute(0, 2, 1, 3).reshape(b, n_q, self.hid_dim))  # (b,i,h*dh)

    def _tables(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """Both tables in the heads' dtype: under autocast the projections give bfloat16 or
        float16 heads from float32 parameters, and the tables follow them as a Linear's weight
        does (gradients reach the float32 tables through the cast)."""
        tables = (
            self.relative_position_k.embeddings_table,
            self.relative_position_v.embeddings_table,
        )
        return tuple(t.to(dtype) for t in tables)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        causal: bool = False,
        query_offset: int = 0,
    ) -> torch.Tensor:
        """(b, n_q, hid): the fast path (fused banded with "auto"), dropout in training mode."""
        q, k, v = self._heads(query, key, value)
        out = relative_attention(
            q, k, v, *self._tables(q.dtype), mask=mask, causal=causal, query_offset=query_offset,
            method=self.method, dropout_p=self.dropout.p if self.training else 0.0,
        )  # fmt: skip
        return self._merge_heads(out)

    def forward_with_trace(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        causal: bool = False,
        query_offset: int = 0,
    ) -> tuple[torch.Tensor, AttentionTrace]:
        """Output (b, n_q, hid) and the attention trace of the relative terms, per head.

        In training mode with dropout the output is the fast path's, with dropped-out weights
        (as seed 001), while the trace keeps the weights before dropout, i.e. what the layer
        computes in eval mode.
        """
        q, k, v = self._heads(query, key, value)
        options = dict(mask=mask, causal=causal, query_offset=query_offset)
        trace = relative_attention(
            q, k, v, *self._tables(q.dtype), **options, method=self.method, trace=True
        )
        if self.training and self.dropout.p > 0:
            out = relative_attention(
                q,
                k,
                v,
                *self._tables(q.dtype),
                **options,
                method=self.method,
                dropout_p=self.dropout.p,
            )
        else:
            out = trace.output
        return self._merge_heads(out), trace
