"""The exact methods for the relative key and value terms, one small object each, in a registry.

    key term     S_rel[b, h, i, j] = q_i · a^K_ij          (Shaw et al. 2018, eq. 4; unscaled)
    value term   z^rel[b, h, i, :] = sum_j alpha_ij a^V_ij  (eq. 3)

All methods give the same numbers; they differ in what they materialize:

  loop    the definition, Python loops over (i, j)                  reference only
  einsum  a^K gathered to (n_q, n_k, d), one einsum                  O(n^2 d)
  matmul  tensor2tensor's transpose -> reshape -> matmul             O(n^2 d)
  skew    Q Er^T over all 2L-1 distances, then the skew (Huang)      O(L d)     n_q = n_k only
  bucket  Q w^T over the 2k+1 buckets, then gather by index          O(n k + n^2)
  banded  Q w^T; two per-row constants off the band, gather on it    O(n k)     (see ``banded``)

Each method knows its two terms, its memory model, and what it can do (trace, gradients, the
shapes it supports). Adding a method is one class here and one line in ``METHODS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import torch

from relpos_core.banded import STRIP_ROWS, banded_logits, banded_values, block_rows
from relpos_core.flex import BAND_ROWS, flex_available
from relpos_core.lookup import clip_distance_from_table, gather_relative, relative_index_unguarded
from relpos_core.regions import region_bytes
from relpos_core.skew import absolute_to_relative_unmasked, skew_embeddings_unguarded, skew_unmasked
from relpos_core.validation import check_bool, check_device, check_int

INDEX_BYTES = 8  # int64


@dataclass(frozen=True)
class Sizes:
    """Bytes of each kind of tensor one attention call can make, for its shapes and dtype."""

    square: int  # (b, h, n_q, n_k) floats: logits, weights
    flags: int  # (b, h, n_q, n_k) bools: a mask
    index: int  # (n_q, n_k) int64: the clip index
    pairs_k: int  # (n_q, n_k, d) floats: a^K materialized
    pairs_v: int  # (n_q, n_k, d_v) floats: a^V materialized
    queries: int  # (b, h, n_q, d) floats
    keys: int  # (b, h, n_k, d) floats
    values: int  # (b, h, n_k, d_v) floats
    output: int  # (b, h, n_q, d_v) floats
    buckets: int  # (b, h, n_q, 2k+1) floats: Q w^T, a bucket mass
    block: int  # (b·h, rows, n_k) floats: one block of the banded method
    skew: int  # (b, h, n_q+1, 2n_q-1) floats: the skew's padded relative layout
    rows: int  # (b, h, n_q) at 8 bytes: per-row flags, sums, log-sum-exp
    tables: int  # (2k+1, d) and (2k+1, d_v) floats: both tables (a copy, their gradients)
    strips: int  # int64 indices of the banded strips that differ (``banded.Strips``)
    band: int = 0  # (b, h, n_q, BAND_ROWS + 2k - 2) floats, at least float32: ``flex``'s band
    regions: int = 0  # peak of the region split (``regions``) forward, self-attention only
    regions_grad: int = 0  # the same with its backward

    @classmethod
    def of(cls, shape: tuple[int, int, int, int, int, int], k: int, itemsize: int) -> Sizes:
        """``shape`` = (b, h, n_q, n_k, d, d_v), k the clip distance."""
        b, h, n_q, n_k, d, d_v = shape
        bh = b * h
        band_rows = min(BAND_ROWS, n_q)
        cells = bh * n_q * n_k
        return cls(
            square=cells * itemsize,
            flags=cells,
            index=n_q * n_k * INDEX_BYTES,
            pairs_k=n_q * n_k * d * itemsize,
            pairs_v=n_q * n_k * d_v * itemsize,
            queries=bh * n_q * d * itemsize,
            keys=bh * n_k * d * itemsize,
            values=bh * n_k * d_v * itemsize,
            output=bh * n_q * d_v * itemsize,
            buckets=bh * n_q * (2 * k + 1) * itemsize,
            block=bh * block_rows(n_q, n_k, bh) * n_k * itemsize,
            skew=bh * (n_q + 1) * (2 * n_q - 1) * itemsize,
            rows=bh * n_q * 8,
            tables=(2 * k + 1) * (d + d_v) * itemsize,
            # inner strips share one index; those clipped by either end of the keys differ:
            # about k / STRIP_ROWS + 2 strips at each end, each STRIP_ROWS x (STRIP_ROWS + 2k)
            strips=INDEX_BYTES * min(n_q, 2 * k + 6 * STRIP_ROWS) * min(n_k, STRIP_ROWS + 2 * k),
            band=bh * (-(-n_q // band_rows) * band_rows) * (band_rows + 2 * k) * max(itemsize, 4),
            regions=region_bytes(b, h, n_q, d, d_v, k, itemsize, False) if n_q == n_k else 0,
            regions_grad=region_bytes(b, h, n_q, d, d_v, k, itemsize, True) if n_q == n_k else 0,
        )


class TermBytes(NamedTuple):
    """A method's memory model for the unfused attention (``memory.attention_bytes``), in bytes.

    key       peak while the key term runs, its (b, h, n_q, n_k) result included
    held      what that result holds afterwards (one square; a view of a larger buffer more)
    value     peak while the value term runs, its (b, h, n_q, d_v) result included
    saved     what autograd keeps of both terms until the backward
    backward  the most the terms' backward adds at once
    """

    key: int
    held: int
    value: int
    saved: int
    backward: int


class Method:
    """One exact way to compute the relative key and value terms."""

    name: ClassVar[str]
    summary: ClassVar[str]
    can_trace: ClassVar[bool] = True  # its terms can be returned step by step
    has_grad: ClassVar[bool] = True  # autograd (or its own backward) gives exact gradients
    fused: ClassVar[bool] = False  # runs the whole attention without (b,h,n_q,n_k) tensors

    def unsupported(self, n_q: int, n_k: int, query_offset: int) -> str | None:
        """Why this method cannot run these shapes, or None if it can."""
        return None

    def key_term(
        self, q: torch.Tensor, table: torch.Tensor, n_k: int, query_offset: int
    ) -> torch.Tensor:
        """q_i · a^K_ij: (b, h, n_q, d), (2k+1, d) -> (b, h, n_q, n_k)."""
        raise NotImplementedError

    def value_term(
        self, weights: torch.Tensor, table: torch.Tensor, query_offset: int
    ) -> torch.Tensor:
        """sum_j weights_ij a^V_ij: (b, h, n_q, n_k), (2k+1, d) -> (b, h, n_q, d)."""
        raise NotImplementedError

    def position_bytes(self, n_q: int, n_k: int, d: int, bh: int, k: int, causal: bool) -> int:
        """Values of the position-dependent intermediate (what Huang et al. compare)."""
        raise NotImplementedError

    def working_bytes(self, n_q: int, n_k: int, d: int, bh: int, k: int, itemsize: int) -> int:
        """Further temporaries at the peak of one term, in bytes (indices, copies)."""
        return 0

    def term_bytes(self, s: Sizes) -> TermBytes:
        """The memory model of the two terms, measured by ``scripts/measure_memory.py``."""
        raise NotImplementedError


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
    fused = True

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

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """Peak of the fused path (``banded_attention``) with or without its backward.

        Forward: the scaled queries, Q (w^K - w^K_-k)^T, the block buffer every block reuses
        (and dropout's keep-mask beside it), each block's output and bucket mass (and their
        concatenation), the rows' log-sum-exp, and the weights if returned.
        Backward: the block buffers for P and dP (and the keep-mask), the gradients of q, k,
        v, the scaled queries, and the bucket terms of the output gradient. Without weights
        or dropout, self-attention may run the region split (``regions``): the larger of the
        two bounds.
        """
        if not return_weights and not dropout:  # the region split may run instead
            regions = s.regions_grad if grad else s.regions
            return max(regions, self._blocked_bytes(s, grad, return_weights, dropout))
        return self._blocked_bytes(s, grad, return_weights, dropout)

    def _blocked_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        blocks = 2 if dropout else 1
        vectors = s.queries + s.keys + s.values + s.output
        forward = s.queries + 3 * s.buckets + 2 * s.output + blocks * s.block + s.strips
        forward += s.tables + s.rows
        if return_weights:
            forward += s.square
        if not grad:
            return forward
        backward = 2 * vectors + 4 * s.buckets + (blocks + 1) * s.block + s.strips
        backward += 2 * s.tables + s.rows
        return max(forward, s.output + backward)


class Flex(Banded):
    """The banded method's GPU kernel (``relpos_core.flex``): what "auto" runs on CUDA.

    FlexAttention over the two constant regions off the band, the band in one batched pass: a
    number of kernels per call that does not grow with n, where the blocked loop launches
    several per block and strip. Not in ``METHODS``: it is banded's numbers by another route,
    for the fast call only (no trace, weights or dropout, which take the blocked path).
    """

    name = "flex"
    summary = "FlexAttention off the band, the band batched: banded on a GPU"

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """The band's scores, weights and their gradients (four at once), Q w^T, three region
        outputs and their sum, each region's block mask (a few bytes per 128 x 128 block)."""
        forward = s.queries + 2 * s.buckets + 4 * s.output + 3 * s.band + s.tables + s.rows
        if not grad:
            return forward
        return forward + 2 * (s.queries + s.keys + s.values) + 4 * s.band + 4 * s.output


class Triton(Banded):
    """The fused Triton kernel (``relpos_core.triton_attention``): both terms inside
    FlashAttention-2's loop, forward and backward. Not in ``METHODS``: like ``FLEX`` it is the
    whole attention, not a pair of terms, and it needs triton (optional) and CUDA, or Triton's
    interpreter on a CPU; ``method="triton"`` asks for it by name, "auto" takes it on CUDA where
    ``triton_unsupported`` finds nothing against it. Its terms, where asked, are banded's.
    """

    name = "triton"
    summary = "one Triton kernel: the key term gathered and the value term by bucket, in the loop"

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """Q w^K^T and the bucket masses (the band's logits until L is known), the content
        output and the output, the rows' statistics. Backward: the masses' gradient z w^V^T,
        dQW, dQ (twice: the kernel's and through QW), dK, dV, D. A model from the tensors the
        code makes; not yet measured on a GPU."""
        forward = 2 * s.buckets + 3 * s.output + 2 * s.rows
        if not grad:
            return forward
        return forward + 2 * s.buckets + 2 * s.queries + s.keys + s.values + s.output + s.rows


FLEX = Flex()
TRITON = Triton()
METHODS: dict[str, Method] = {
    m.name: m for m in (Loop(), Einsum(), Matmul(), Skew(), Bucket(), Banded())
}
METHOD_NAMES = tuple(METHODS)
AUTO_ORDER = ("banded", "bucket", "skew", "einsum", "matmul", "loop")  # fastest first


def get_method(name: object) -> Method:
    """The registered method called ``name`` (ValueError naming the choices otherwise)."""
    if not isinstance(name, str) or name not in METHODS:
        raise ValueError(f"method must be one of auto, {', '.join(METHOD_NAMES)}; got {name!r}")
    return METHODS[name]


def choose_method(
    n_q: int,
    n_k: int,
    query_offset: int = 0,
    *,
    trace: bool = False,
    grad: bool = False,
    device: torch.device | str | None = None,
    dropout: bool = False,
    weights: bool = False,
) -> Method:
    """What ``method="auto"`` runs: the first method of AUTO_ORDER that can do what is asked.

    On CUDA the fast call (no ``trace``, ``dropout`` or returned ``weights``) runs ``FLEX``,
    banded's kernel there, whose launches do not grow with n. ``relative_attention`` looks at
    ``TRITON`` before this: it depends on the dtype, head sizes and mask, which this does not see
    (``admission.auto_method``).

    Measured on a 2-core CPU (``python -m relpos_lab.bench``), banded is the fastest exact
    method at every n tried and the least memory-hungry, and it supports every shape, offset,
    trace and gradient, so it is the answer today; the scan keeps "auto" honest if a method
    with limits is ever put first.

    >>> choose_method(1024, 1024).name, choose_method(1024, 1024, device="cuda").name
    ('banded', 'flex')
    """
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    trace, grad, dropout, weights = (
        check_bool(name, value)
        for name, value in (
            ("trace", trace),
            ("grad", grad),
            ("dropout", dropout),
            ("weights", weights),
        )
    )
    device = check_device("device", device)
    if flex_available(torch.device("cpu") if device is None else device):
        if not (trace or dropout or weights):
            return FLEX
    for name in AUTO_ORDER:
        method = METHODS[name]
        if method.unsupported(n_q, n_k, query_offset) is None:
            if (method.can_trace or not trace) and (method.has_grad or not grad):
                return method
    raise AssertionError("the loop definition supports everything")
