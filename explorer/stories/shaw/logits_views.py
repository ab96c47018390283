"""Cached relative logits of the Shaw story: every head's content and relative terms on the
window, each method's agreement with the one-pair-at-a-time definition, and tensor2tensor's six
matmul steps as tensors. A frozen ViewParams in, numpy float32 out.

Tensors that grow as (n, n, d) are only built for as many query rows as a fixed budget allows.
Above DISPLAY_MAX positions the relative terms depend on j - i only, so the diagonal block
[s, s+W) x [s, s+W) of the relative logits is exactly the relative logits of the W queries
q[s:s+W] over a length-W sequence: the logits and skew pages run their methods on that block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

import relpos_core as rc
from explorer.frame.budget import plan_compute
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.shaw.views import CACHE_ENTRIES
from explorer.weights.example import ExampleInputs, example_inputs, view_array

A_K_BUDGET = 2**22  # values of a materialized (rows, n, d) a^K block (16 MB of float32)
LOOP_PAIRS = 2048  # (i, j) pairs the Python-loop definition is run on


def materialized_rows(n: int, d: int) -> int:
    """Query rows of an (rows, n, d) a^K that fit in A_K_BUDGET (at least 1, at most n)."""
    return max(1, min(n, A_K_BUDGET // (n * d)))


def square_side(n: int, pairs: int) -> int:
    """Side of the top-left block of at most ``pairs`` (i, j) pairs, at most n: a slow method
    is drawn on a square block of the window, not on a few rows as long as the window."""
    return max(1, min(n, math.isqrt(pairs)))


@dataclass(frozen=True)
class LogitsView:
    """Both terms of the logit as they enter the softmax, 1/sqrt(d) included."""

    content: np.ndarray  # (h, W, W) q_i · k_j / sqrt(d) of every head on the window
    relative: np.ndarray  # (h, W, W) the relative term q_i · a^K_ij / sqrt(d) (bucket method)
    definition: np.ndarray  # (h, m, m) one pair at a time, the window's top-left block
    einsum: np.ndarray  # (h, m', m') the top-left block a materialized a^K fits
    matmul: np.ndarray  # (h, m', m')
    max_diff: dict[str, float]  # method -> max |method - definition| over all it computed
    compared: dict[str, int]  # method -> side of the top-left block it computed and was compared


def definition_logits(q: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Eq. 4 of the paper over the whole window, a^K_ij = w_clip(j-i,k) gathered for a few query
    rows at a time (each block of rows within A_K_BUDGET): (1, h, W, d) -> (1, h, W, W).

    The loop checks this formula one pair at a time on its corner; this covers every cell, so a
    method is compared on the whole of what it computed."""
    n, d = q.shape[-2], q.shape[-1]
    rows = materialized_rows(n, d)
    return torch.cat(
        [
            rc.relative_logits(q[:, :, i : i + rows], table, n, method="einsum", query_offset=i)
            for i in range(0, n, rows)
        ],
        dim=-2,
    )


def window_inputs(params: ViewParams) -> tuple[ExampleInputs, torch.Tensor]:
    """The view's inputs and the window's queries q[:, :, s:s+W] / sqrt(d) (1, h, W, d).

    The queries are scaled first, as tensor2tensor's multi-head attention does, so that every
    product with them is a term of the logit exactly as it enters the softmax.
    """
    inputs = example_inputs(params)
    start, stop = params.window
    return inputs, inputs.scaled_q[:, :, start:stop]  # the 1/sqrt(d) every page shares


@cached(CACHE_ENTRIES)
def logits_view(params: ViewParams) -> LogitsView:
    """Every head's content and relative logits on the window, and each method's agreement."""
    inputs, q = window_inputs(params)  # relative logits on the window = those of q over W
    table, n, d, h, k = inputs.table_k, q.shape[-2], params.head_dim, params.heads, params.k
    start, stop = params.window
    # The slow methods run on the window's top-left m x m block: the relative term depends on
    # j - i only, so the block is exactly that corner of the full matrix.
    m_loop = square_side(n, LOOP_PAIRS)
    m_mat = square_side(n, A_K_BUDGET // d)
    for method, rows in (("loop", m_loop), ("einsum", m_mat), ("matmul", m_mat)):
        plan_compute("relative logits", method, rows, d, h, k=k, traces=2)
    plan_compute("relative logits", "skew", n, d, h, k=k, traces=2)
    plan_compute("relative logits", "bucket", n, d, h, k=k, traces=3)
    plan_compute("relative logits", "banded", n, d, h, k=k, traces=3)
    # the whole definition: a block of a^K rows at a time, the (h, W, W) result kept
    plan_compute("relative logits", "einsum", n, d, h, k=k, rows=materialized_rows(n, d), traces=2)
    definition = rc.relative_logits(q[:, :, :m_loop], table, m_loop, method="loop")
    by_method = {
        "einsum": rc.relative_logits(q[:, :, :m_mat], table, m_mat, method="einsum"),
        "matmul": rc.relative_logits(q[:, :, :m_mat], table, m_mat, method="matmul"),
        "skew": rc.relative_logits(q, table, n, method="skew"),
        "bucket": rc.relative_logits(q, table, n, method="bucket"),
        "banded": rc.relative_logits(q, table, n, method="banded"),
    }
    whole = definition_logits(q, table)  # every cell of the window
    by_method = {"loop": definition, **by_method}
    compared = {name: rel.shape[-1] for name, rel in by_method.items()}
    max_diff = {
        name: float((rel - whole[:, :, :side, :side]).abs().max())
        for (name, rel), side in zip(by_method.items(), compared.values(), strict=True)
    }
    keys = inputs.k[0, :, start:stop]  # (h, W, d)
    return LogitsView(
        content=view_array(q[0] @ keys.transpose(-2, -1)),  # (h,W,d),(h,d,W) -> (h,W,W)
        relative=view_array(by_method["bucket"][0]),
        definition=view_array(definition[0]),
        einsum=view_array(by_method["einsum"][0]),
        matmul=view_array(by_method["matmul"][0]),
        max_diff=max_diff,
        compared=compared,
    )


MATMUL_AXES = {
    "q": ("b", "h", "i", "d"),
    "a_k": ("i", "j", "d"),
    "q_t": ("i", "b", "h", "d"),
    "q_t_r": ("i", "b·h", "d"),
    "product": ("i", "b·h", "j"),
    "product_r": ("i", "b", "h", "j"),
    "result": ("b", "h", "i", "j"),
}
SLICES_MAX = 8  # slices of a tensor drawn (the leading axes' first combinations)


@dataclass(frozen=True)
class TensorStep:
    """One of tensor2tensor's steps as the tensor it is: its shape and axis names, and its first
    ``SLICES_MAX`` slices over the leading axes (each slice the last two axes)."""

    name: str
    formula: str
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    slices: np.ndarray  # (s, rows, cols): slice t is value[index[t]]
    index: tuple[tuple[int, ...], ...]  # leading-axes index of each slice

    @property
    def slice_count(self) -> int:
        """Slices of the whole tensor (the product of its leading axes)."""
        return int(np.prod(self.shape[:-2], dtype=np.int64))


@cached(CACHE_ENTRIES)
def matmul_steps(params: ViewParams) -> tuple[TensorStep, ...]:
    """tensor2tensor's six steps (seed 000) on the first ``materialized_rows`` queries.

    Above DISPLAY_MAX positions: the window's queries over the window's keys.
    """
    inputs, q = window_inputs(params)
    n = q.shape[-2]
    m = materialized_rows(n, params.head_dim)
    plan_compute(
        "tensor2tensor steps", "matmul", n, params.head_dim, params.heads, k=params.k, rows=m
    )
    trace = rc.trace_matmul_logits(q[:, :, :m], inputs.table_k, n)
    steps = []
    for step in trace.steps():
        value = view_array(step.value)
        lead = value.shape[:-2]
        index = tuple(np.ndindex(*lead))[:SLICES_MAX]
        flat = value.reshape(-1, *value.shape[-2:])[:SLICES_MAX]
        steps.append(
            TensorStep(
                name=step.name,
                formula=step.formula,
                shape=tuple(value.shape),
                axes=MATMUL_AXES[step.name],
                slices=np.ascontiguousarray(flat),
                index=index,
            )
        )
    return tuple(steps)
