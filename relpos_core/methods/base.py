"""What every method is: the sizes of the tensors a call can make, and the two kinds of method.

A ``Method`` computes the two relative terms of Shaw et al. (2018), eqs. 3-4,

    key term     S_rel[b, h, i, j] = q_i · a^K_ij          (unscaled)
    value term   z^rel[b, h, i, :] = sum_j alpha_ij a^V_ij

and runs the attention as the definition, step by step, around them (``definition``). A
``Kernel`` runs the whole attention at once and keeps no (b, h, n_q, n_k) step. Both have one
way to run, ``run(call, q, k, v, table_k, table_v)``, and their own memory model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import torch

from relpos_core.methods.banded import STRIP_ROWS, block_rows
from relpos_core.methods.definition import run_steps
from relpos_core.methods.flex import BAND_ROWS
from relpos_core.methods.regions import region_bytes

if TYPE_CHECKING:  # the admitted call; admission imports the methods, not the other way
    from relpos_core.admission import AttentionCall

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
    """One exact way to compute the relative key and value terms; it runs the definition."""

    name: ClassVar[str]
    summary: ClassVar[str]
    can_trace: ClassVar[bool] = True  # its terms can be returned step by step
    has_grad: ClassVar[bool] = True  # autograd (or its own backward) gives exact gradients
    kernel: ClassVar[Kernel | None] = None  # its fused kernel, for a call that keeps no step

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

    def run(self, call: AttentionCall, q, k, v, table_k, table_v):
        """Eqs. 2-4 step by step around this method's two terms (``definition.run_steps``)."""
        return run_steps(self, call, q, k, v, table_k, table_v)

    def position_bytes(self, n_q: int, n_k: int, d: int, bh: int, k: int, causal: bool) -> int:
        """Values of the position-dependent intermediate (what Huang et al. compare)."""
        raise NotImplementedError

    def working_bytes(self, n_q: int, n_k: int, d: int, bh: int, k: int, itemsize: int) -> int:
        """Further temporaries at the peak of one term, in bytes (indices, copies)."""
        return 0

    def term_bytes(self, s: Sizes) -> TermBytes:
        """The memory model of the two terms, measured by ``scripts/measure_memory.py``."""
        raise NotImplementedError


class Kernel:
    """The whole attention in one pass, no (b, h, n_q, n_k) step kept: z, or (z, alpha)."""

    name: ClassVar[str]
    summary: ClassVar[str]

    def run(self, call: AttentionCall, q, k, v, table_k, table_v):
        """What ``relative_attention`` returns for the admitted call."""
        raise NotImplementedError

    def fused_bytes(self, s: Sizes, grad: bool, return_weights: bool, dropout: bool) -> int:
        """Peak bytes of the kernel, with its backward when ``grad``."""
        raise NotImplementedError
