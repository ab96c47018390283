"""The exact methods for the relative key and value terms, one small object each.

All give the same numbers; they differ in what they materialize:

  loop    the definition, Python loops over (i, j)                  reference only
  einsum  a^K gathered to (n_q, n_k, d), one einsum                  O(n^2 d)
  matmul  tensor2tensor's transpose -> reshape -> matmul             O(n^2 d)
  skew    Q Er^T over all 2L-1 distances, then the skew (Huang)      O(L d)     n_q = n_k only
  bucket  Q w^T over the 2k+1 buckets, then gather by index          O(n k + n^2)
  banded  Q w^T; two per-row constants off the band, gather on it    O(n k)     (see ``banded``)

Each knows its two terms, its memory model and what it can do (trace, gradients, the shapes it
supports); banded also has a fused kernel (``kernels.BANDED``) for a call that keeps no step.
"""

from __future__ import annotations

import torch

from relpos_core.lookup import clip_distance_from_table, gather_relative, relative_index_unguarded
from relpos_core.methods.banded import banded_logits, banded_values, block_rows
from relpos_core.methods.base import INDEX_BYTES, Method, TermBytes
from relpos_core.methods.kernels import BANDED
from relpos_core.skew import absolute_to_relative_unmasked, skew_embeddings_unguarded, skew_unmasked


class Loop(Method):
    name = "loop"
    summary = "the definition: one (i, j) pair at a time"

    def key_term(self, q, table, n_k, query_offset):
        index = relative_index_unguarded(
            q.shape[-2], n_k, clip_distance_from_table(table), query_offset
        )
        out = q.new_zeros(*q.shape[:-2], q.shape[-2], n_k)
        for i in range(q.shape[-2]):
            for j in range(n_k):
                out[..., i, j] = (q[..., i, :] * table[index[i, j]]).sum(-1)  # q_i · w_clip(j-i)
        return out

    def value_term(self, weights, table, query_offset):
        n_q, n_k = weights.shape[-2:]
        index = relative_index_unguarded(n_q, n_k, clip_distance_from_table(table), query_offset)
        rows = []
        for i in range(n_q):
            row = weights.new_zeros(*weights.shape[:-2], table.shape[1])
            for j in range(n_k):
                row = row + weights[..., i, j, None] * table[index[i, j]]
            rows.append(row)
        return torch.stack(rows, dim=-2)

    def position_bytes(self, n_q, n_k, d, bh, k, causal):
        return d  # one vector at a time

    def term_bytes(self, s):
        # autograd keeps the table row each cell read (a^K and a^V, one row at a time), and
        # every cell written into the result copies the gradient of the whole result once
        return TermBytes(
            key=2 * s.index + s.square,
            held=s.square,
            value=2 * s.index + 2 * s.output,
            saved=s.pairs_k + s.pairs_v + s.index,
            backward=3 * s.square,
        )


def t2t_relative_inner(x: torch.Tensor, z: torch.Tensor, transpose: bool) -> torch.Tensor:
    """tensor2tensor's ``_relative_attention_inner``, relative part: one function for both terms.

    x (b, h, n_q, m), z (n_q, n_k, d) the materialized a_ij. transpose=True: x = q (m = d)
    -> (b, h, n_q, n_k), the key term. transpose=False: x = weights (m = n_k) -> (b, h, n_q, d),
    the value term. Transpose the queries to the front so each query meets its own (n_k, d).
    """
    b, h, n_q, m = x.shape
    x_t = x.permute(2, 0, 1, 3).reshape(n_q, b * h, m)  # (i, b·h, m)
    zt = z.transpose(1, 2) if transpose else z  # (i, d, j) or (i, j, d)
    product = x_t @ zt  # (i, b·h, m),(i, m, ·) -> (i, b·h, ·)
    return product.reshape(n_q, b, h, product.shape[-1]).permute(1, 2, 0, 3)  # (b, h, i, ·)


class Materialized(Method):
    """Base of the two methods that gather a_ij = w[clip(j - i, k) + k] to (n_q, n_k, d)."""

    def table_at_pairs(self, table, n_q, n_k, query_offset):
        k = clip_distance_from_table(table)
        return gather_relative(
            table, relative_index_unguarded(n_q, n_k, k, query_offset, table.device)
        )

    def position_bytes(self, n_q, n_k, d, bh, k, causal):
        return n_q * n_k * d  # a^K, shared by heads and batch

    def working_bytes(self, n_q, n_k, d, bh, k, itemsize):
        return n_q * n_k * INDEX_BYTES

    def term_bytes(self, s):
        # each term: the index (two while it is clipped), then a^K or a^V gathered from it;
        # autograd keeps both gathers and both indices, and the backward builds the gradient
        # of a^K or a^V (one at a time) beside the weights' gradient
        return TermBytes(
            key=s.index + max(s.index, s.pairs_k) + s.square,
            held=s.square,
            value=s.index + max(s.index, s.pairs_v) + 2 * s.output,
            saved=s.pairs_k + s.pairs_v + 2 * s.index,
            backward=max(s.pairs_k, s.pairs_v) + s.square,
        )


class Einsum(Materialized):
    name = "einsum"
    summary = "a^K gathered to (n_q, n_k, d), one einsum (the widely copied PyTorch layer)"

    def key_term(self, q, table, n_k, query_offset):
        a_k = self.table_at_pairs(table, q.shape[-2], n_k, query_offset)
        return torch.einsum("bhid,ijd->bhij", q, a_k)  # (b,h,i,d),(i,j,d) -> (b,h,i,j)

    def value_term(self, weights, table, query_offset):
        a_v = self.table_at_pairs(table, *weights.shape[-2:], query_offset)
        return torch.einsum("bhij,ijd->bhid", weights, a_v)  # (b,h,i,j),(i,j,d) -> (b,h,i,d)


class Matmul(Materialized):
    name = "matmul"
    summary = "tensor2tensor's transpose -> reshape -> matmul on a gathered a^K"

    def key_term(self, q, table, n_k, query_offset):
        a_k = self.table_at_pairs(table, q.shape[-2], n_k, query_offset)
        return t2t_relative_inner(q, a_k, transpose=True)

    def value_term(self, weights, table, query_offset):
        a_v = self.table_at_pairs(table, *weights.shape[-2:], query_offset)
        return t2t_relative_inner(weights, a_v, transpose=False)


class Skew(Method):
    name = "skew"
    summary = "Q Er^T over the 2L-1 distances, then Huang et al.'s skew (pad, reshape, slice)"

    def unsupported(self, n_q, n_k, query_offset):
        if n_q != n_k or query_offset != 0:
            return (
                "the skew needs n_q == n_k and query_offset == 0, got "
                f"n_q={n_q}, n_k={n_k}, query_offset={query_offset}"
            )
        return None

    def key_term(self, q, table, n_k, query_offset):
        e_r = skew_embeddings_unguarded(table, n_k)  # (2L-1, d): distances -(L-1)..L-1
        return skew_unmasked(q @ e_r.T)  # (b,h,L,2L-1) -> (b,h,L,L)

    def value_term(self, weights, table, query_offset):
        rel = absolute_to_relative_unmasked(weights)  # (b,h,L,2L-1), [.., i, j-i+L-1]
        return rel @ skew_embeddings_unguarded(table, weights.shape[-1])  # (b,h,L,2L-1),(2L-1,d)

    def position_bytes(self, n_q, n_k, d, bh, k, causal):
        return (n_q if causal else 2 * n_q - 1) * d  # Er; Huang's masked skew needs n rows

    def working_bytes(self, n_q, n_k, d, bh, k, itemsize):
        return 3 * bh * n_q * 2 * n_q * itemsize  # Q Er^T, padded, flattened + pad

    def term_bytes(self, s):
        # Q Er^T, its padded copy and the flattened one at once; the result is a view of the
        # last, so it holds (b, h, L+1, 2L-1) floats. The value term pads the weights twice
        # (after a finiteness check of them), and autograd keeps that relative layout
        return TermBytes(
            key=3 * s.skew,
            held=s.skew,
            value=max(s.square + 3 * s.flags, 2 * s.skew) + 2 * s.output,
            saved=s.skew,
            backward=3 * s.skew,
        )


class Bucket(Method):
    name = "bucket"
    summary = "Q w^T per bucket, gathered (key) or scattered (value) by the clip index"

    def key_term(self, q, table, n_k, query_offset):
        k = clip_distance_from_table(table)
        index = relative_index_unguarded(q.shape[-2], n_k, k, query_offset, q.device)
        per_bucket = q @ table.T  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
        return per_bucket.gather(-1, index.expand(*q.shape[:-2], -1, -1))  # (b,h,i,j)

    def value_term(self, weights, table, query_offset):
        k = clip_distance_from_table(table)
        n_q, n_k = weights.shape[-2:]
        index = relative_index_unguarded(n_q, n_k, k, query_offset, weights.device).expand_as(
            weights
        )
        buckets = weights.new_zeros(*weights.shape[:-1], 2 * k + 1)
        buckets = buckets.scatter_add(-1, index, weights)  # (b,h,i,2k+1): mass per distance
        return buckets @ table  # (b,h,i,2k+1),(2k+1,d) -> (b,h,i,d)

    def position_bytes(self, n_q, n_k, d, bh, k, causal):
        return bh * n_q * (2 * k + 1)  # Q w^T

    def working_bytes(self, n_q, n_k, d, bh, k, itemsize):
        return n_q * n_k * INDEX_BYTES

    def term_bytes(self, s):
        # the index (two while clipped) and Q w^T, gathered; scattered into a bucket mass
        # (a zero one and the sum), times w^V. Autograd keeps both indices and the mass
        return TermBytes(
            key=2 * s.index + s.buckets + s.square,
            held=s.square,
            value=2 * s.index + 2 * s.buckets + 2 * s.output,
            saved=2 * s.index + s.buckets,
            backward=s.square + 2 * s.buckets,
        )


class Banded(Method):
    name = "banded"
    summary = "Q w^T; constants off the band, a gather on it; fused and blocked without a trace"
    kernel = BANDED  # the blocked loop (``banded_attention``), for a call that keeps no step

    def key_term(self, q, table, n_k, query_offset):
        return banded_logits(q, table, n_k, query_offset)

    def value_term(self, weights, table, query_offset):
        return banded_values(weights, table, query_offset)

    def position_bytes(self, n_q, n_k, d, bh, k, causal):
        return bh * n_q * (2 * k + 1)  # Q w^T

    def working_bytes(self, n_q, n_k, d, bh, k, itemsize):
        return bh * block_rows(n_q, n_k, bh) * n_k * itemsize  # one block of rows

    def term_bytes(self, s):
        # unfused (a trace, or weights with gradients): the blocks of the key term and their
        # concatenation; each block's bucket mass; the backward gives each block of rows the
        # gradient of the whole weights before they are summed
        return TermBytes(
            key=s.buckets + 2 * s.square + s.strips,
            held=s.square,
            value=2 * s.buckets + 2 * s.output + s.strips,
            saved=s.buckets + 2 * s.strips,  # each block's own strips, for the gathers
            backward=3 * s.square,
        )
