"""The kernels: the whole attention in one pass, keeping no (b, h, n_q, n_k) step.

  banded  the blocked loop over rows (``banded_attention``), or the region split
          (``regions``): any device, gradients by its own recomputing backward
  flex    FlexAttention off the band, the band batched (``flex``): banded on a GPU
  triton  both relative terms inside FlashAttention-2's loop (``triton_attention``)

All give the definition's numbers; ``choice.which_method`` decides when one runs.
"""

from __future__ import annotations

from relpos_core.methods.banded_attention import banded_attention
from relpos_core.methods.base import Kernel, Sizes
from relpos_core.methods.definition import check_finite_output
from relpos_core.methods.flex import flex_attention_relative
from relpos_core.methods.triton_attention import triton_attention
from relpos_core.precision import upcast


class BandedKernel(Kernel):
    """The banded method fused: Q w^T, a per-row constant off the band, a gather on it, in
    blocks of rows with a recomputing backward; the region split for plain self-attention."""

    name = "banded"
    summary = "the banded terms fused in blocks of rows, recomputed in the backward"

    def run(self, call, q, k, v, table_k, table_v):
        dtype = q.dtype
        q, k, v, table_k, table_v = upcast(q, k, v, table_k, table_v)
        result = banded_attention(
            q, k, v, table_k, table_v, call.allowed, call.causal, call.query_offset,
            return_weights=call.return_weights, dropout_p=call.dropout_p,
            generator=call.generator,
        )  # fmt: skip
        out, weights = result if call.return_weights else (result, None)
        out = check_finite_output(out.to(dtype), q, k, v)
        return call.answer(out, None if weights is None else weights.to(dtype))

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


class Flex(Kernel):
    """The banded method's GPU kernel (``flex``): what "auto" runs on CUDA when the Triton
    kernel does not apply. FlexAttention over the two constant regions off the band, the band
    in one batched pass: a number of kernels per call that does not grow with n, where the
    blocked loop launches several per block and strip. For the fast call only (no trace,
    weights or dropout, which take the blocked path)."""

    name = "flex"
    summary = "FlexAttention off the band, the band batched: banded on a GPU"

    def run(self, call, q, k, v, table_k, table_v):
        # FlexAttention takes half inputs itself, its statistics in float32
        out = flex_attention_relative(
            q, k, v, table_k, table_v, call.allowed, call.causal, call.query_offset
        )
        return call.answer(out.to(q.dtype), None)

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """The band's scores, weights and their gradients (four at once), Q w^T, three region
        outputs and their sum, each region's block mask (a few bytes per 128 x 128 block)."""
        forward = s.queries + 2 * s.buckets + 4 * s.output + 3 * s.band + s.tables + s.rows
        if not grad:
            return forward
        return forward + 2 * (s.queries + s.keys + s.values) + 4 * s.band + 4 * s.output


class Triton(Kernel):
    """The fused Triton kernel (``triton_attention``): both terms inside FlashAttention-2's
    loop, forward and backward. Needs triton (optional) and CUDA, or Triton's interpreter on a
    CPU; ``method="triton"`` asks for it by name, "auto" takes it on CUDA where
    ``triton_unsupported`` finds nothing against it."""

    name = "triton"
    summary = "one Triton kernel: the key term gathered and the value term by bucket, in the loop"

    def run(self, call, q, k, v, table_k, table_v):
        # half inputs into the kernel, statistics and output sums in float32
        out = triton_attention(q, k, v, table_k, table_v, call.causal, call.query_offset)
        return call.answer(check_finite_output(out, q, k, v), None)  # in words on a CPU

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """Q w^K^T and the bucket masses (the band's logits until L is known), the content
        output and the output, the rows' statistics. Backward: the masses' gradient z w^V^T,
        dQW, dQ (twice: the kernel's and through QW), dK, dV, D. A model from the tensors the
        code makes; not yet measured on a GPU."""
        forward = 2 * s.buckets + 3 * s.output + 2 * s.rows
        if not grad:
            return forward
        return forward + 2 * s.buckets + 2 * s.queries + s.keys + s.values + s.output + s.rows


BANDED = BandedKernel()
FLEX = Flex()
TRITON = Triton()
