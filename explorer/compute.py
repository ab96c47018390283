"""Cached calls into relpos_core: a frozen ViewParams (+ small ints) in, numpy float32 out.

Nothing here holds a tensor after it returns, and every cache has a bounded number of entries.
Tensors that grow as (n, n, d) are only built for as many query rows as a fixed budget allows.
Every function first asks ``explorer.budget.plan_compute`` for its largest computation, so
whatever the controls or the URL say, an over-budget view is refused before anything is built.

Above DISPLAY_MAX positions every (n, n) view is the window ``params.window`` on both axes. The
relative terms depend on j - i only, so the diagonal block [s, s+W) x [s, s+W) of the relative
logits is exactly the relative logits of the W queries q[s:s+W] over a length-W sequence: the
logits and skew pages run their methods on that block. Attention needs every key of a row: it
runs ``relative_attention`` with ``query_offset`` on the window's query rows, one head, all n
keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st
import torch

import relpos_core as rc
from explorer.budget import plan_compute
from explorer.example import (
    ExampleInputs,
    decode_provenance,
    example_inputs,
    skew_provenance,
)
from explorer.params import ViewParams

CACHE_ENTRIES = 8
A_K_BUDGET = 2**22  # values of a materialized (rows, n, d) a^K block (16 MB of float32)
LOOP_PAIRS = 2048  # (i, j) pairs the Python-loop definition is run on
DISPLAY_ROWS = 2048  # rows of a flattened intermediate drawn in one heatmap


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy().astype(np.float32)


def materialized_rows(n: int, d: int) -> int:
    """Query rows of an (rows, n, d) a^K that fit in A_K_BUDGET (at least 1, at most n)."""
    return max(1, min(n, A_K_BUDGET // (n * d)))


def loop_rows(n: int) -> int:
    """Query rows the definition (a Python loop over pairs) is evaluated on."""
    return max(1, min(n, LOOP_PAIRS // n))


@dataclass(frozen=True)
class Panel:
    """One matrix to draw: what it is, its formula, the full tensor's shape, a 2-D view."""

    name: str
    formula: str
    shape: tuple[int, ...]
    z: np.ndarray
    rows_title: str = "query i"
    cols_title: str = "key j"
    note: str = ""


# ---- lookup ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookupView:
    distance: np.ndarray  # (W, W) j - i on the window (the whole (n, n) when n <= DISPLAY_MAX)
    clipped: np.ndarray  # (W, W) clip(j - i, -k, k)
    index: np.ndarray  # (W, W) clip(j - i, -k, k) + k
    table_k: np.ndarray  # (2k+1, d) w^K
    table_v: np.ndarray  # (2k+1, d) w^V


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def lookup_view(params: ViewParams) -> LookupView:
    start, stop = params.window
    size, k = stop - start, params.k
    plan_compute("lookup table", "bucket", size, params.head_dim, k=k, traces=3)
    inputs = example_inputs(params)
    distance = rc.relative_distances(size, size)  # a diagonal window: j - i as at its origin
    return LookupView(
        distance=_np(distance),
        clipped=_np(distance.clamp(-k, k)),
        index=_np(rc.relative_index(size, size, k)),
        table_k=_np(inputs.table_k),
        table_v=_np(inputs.table_v),
    )


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def gathered_channel(params: ViewParams, channel: int) -> np.ndarray:
    """a^K[:, :, channel] on the window (W, W), without building a^K: w^K[index, channel]."""
    view = lookup_view(params)
    return view.table_k[:, channel][view.index.astype(np.int64)]


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def gathered_row(params: ViewParams, query: int) -> np.ndarray:
    """a^K[query, window] (W, d): the vectors query ``query`` meets at the window's keys."""
    view = lookup_view(params)
    start, stop = params.window
    index = rc.relative_index(1, stop - start, params.k, query_offset=query - start)[0]  # (W,)
    return view.table_k[index.numpy()]


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def window_index(params: ViewParams) -> np.ndarray:
    """clip(j - i, k) + k on the window's pairs (W, W), int64 (every diagonal window alike)."""
    start, stop = params.window
    return rc.relative_index(stop - start, stop - start, params.k).numpy()


# ---- relative logits ------------------------------------------------------------------------


@dataclass(frozen=True)
class LogitsView:
    content: np.ndarray  # (W, W) q_i · k_j of the head on the window
    definition: np.ndarray  # (loop_rows, W) q_i · w_clip(j-i,k), one pair at a time
    einsum: np.ndarray  # (materialized_rows, W)
    matmul: np.ndarray  # (materialized_rows, W)
    bucket: np.ndarray  # (W, W) the relative term on the window
    max_diff: dict[str, float]  # method -> max |method - definition| over all heads


def window_inputs(params: ViewParams) -> tuple[ExampleInputs, torch.Tensor]:
    """The view's inputs and the window's queries q[:, :, s:s+W] (1, h, W, d)."""
    inputs = example_inputs(params)
    start, stop = params.window
    return inputs, inputs.q[:, :, start:stop]


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def logits_view(params: ViewParams, head: int) -> LogitsView:
    inputs, q = window_inputs(params)  # relative logits on the window = those of q over W
    table, n, d, h, k = inputs.table_k, q.shape[-2], params.head_dim, params.heads, params.k
    start, stop = params.window
    m_loop = loop_rows(n)
    m_mat = materialized_rows(n, d)
    for method, rows in (("loop", m_loop), ("einsum", m_mat), ("matmul", m_mat)):
        plan_compute("relative logits", method, n, d, h, k=k, rows=rows, traces=2)
    plan_compute("relative logits", "skew", n, d, h, k=k, traces=2)
    plan_compute("relative logits", "bucket", n, d, h, k=k, traces=2)
    definition = rc.relative_logits(q[:, :, :m_loop], table, n, method="loop")
    by_method = {
        "einsum": rc.relative_logits(q[:, :, :m_mat], table, n, method="einsum"),
        "matmul": rc.relative_logits(q[:, :, :m_mat], table, n, method="matmul"),
        "skew": rc.relative_logits(q, table, n, method="skew"),
        "bucket": rc.relative_logits(q, table, n, method="bucket"),
    }
    max_diff = {
        name: float((rel[:, :, :m_loop] - definition).abs().max())
        for name, rel in by_method.items()
    }
    keys = inputs.k[0, head, start:stop]  # (W, d)
    return LogitsView(
        content=_np(q[0, head] @ keys.T),  # (W,d),(d,W) -> (W,W)
        definition=_np(definition[0, head]),
        einsum=_np(by_method["einsum"][0, head]),
        matmul=_np(by_method["matmul"][0, head]),
        bucket=_np(by_method["bucket"][0, head]),
        max_diff=max_diff,
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


def flatten_rows(value: np.ndarray) -> np.ndarray:
    """(a, b, ..., last) -> (a*b*..., last): leading axes merged into rows, C order."""
    return value.reshape(-1, value.shape[-1]) if value.ndim > 1 else value[None, :]


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def matmul_panels(params: ViewParams) -> tuple[Panel, ...]:
    """tensor2tensor's six steps (seed 000) on the first ``materialized_rows`` queries.

    Each tensor is drawn with its leading axes merged into rows, so a transpose shows up as a
    reordering of rows and a reshape as no change at all. Above DISPLAY_MAX positions: the
    window's queries over the window's keys.
    """
    inputs, q = window_inputs(params)
    n = q.shape[-2]
    m = materialized_rows(n, params.head_dim)
    plan_compute(
        "tensor2tensor steps", "matmul", n, params.head_dim, params.heads, k=params.k, rows=m
    )
    trace = rc.trace_matmul_logits(q[:, :, :m], inputs.table_k, n)
    panels = []
    for step in trace.steps():
        axes = MATMUL_AXES[step.name]
        flat = flatten_rows(_np(step.value))
        note = ""
        if flat.shape[0] > DISPLAY_ROWS:
            note = f"showing the first {DISPLAY_ROWS} of {flat.shape[0]} rows"
            flat = flat[:DISPLAY_ROWS]
        panels.append(
            Panel(
                name=step.name,
                formula=step.formula,
                shape=step.shape,
                z=flat,
                rows_title="rows (" + ", ".join(axes[:-1]) + ")",
                cols_title=axes[-1],
                note=note,
            )
        )
    return tuple(panels)


# ---- skew -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkewView:
    panels: tuple[Panel, ...]  # input, padded, reshaped, result
    distances: tuple[np.ndarray, ...]  # per panel: relative distance each cell holds
    pads: tuple[np.ndarray, ...]  # per panel: bool, the cell holds a pad zero
    invalid: np.ndarray  # (W, W) bool: result cells that are not q_i · w_clip(j-i,k)
    definition: np.ndarray  # (W, W) q_i · w_clip(j-i,k) of the head
    masked_result: np.ndarray  # (W, W) result with the causal mask applied (NaN for j > i)
    max_diff: float  # max |result - definition| over valid cells, all heads
    bytes_skew: int  # Er the skew needs
    bytes_materialized: int  # a^K the einsum / matmul paths need
    bytes_logits: int  # the (h, n, n) logits every path pays


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def skew_view(params: ViewParams, head: int, masked: bool) -> SkewView:
    """The skew of the window's queries over a length-W sequence (W = n up to DISPLAY_MAX)."""
    inputs, q = window_inputs(params)
    n, d, full = q.shape[-2], params.head_dim, params.length
    plan_compute("skew", "skew", n, d, params.heads, k=params.k, causal=masked, traces=2)
    e_r = rc.skew_embeddings(inputs.table_k, n)  # (2n-1, d): distances -(n-1)..n-1
    if masked:
        e_r = e_r[:n]  # distances -(n-1)..0 (Huang et al.: the causal half only)
    x = q @ e_r.T  # (1,h,n,d),(d,W) -> (1,h,n,W)
    trace = rc.trace_skew_masked(x) if masked else rc.trace_skew_unmasked(x)
    origin = skew_provenance(n, masked)
    formulas = dict(trace.FORMULAS)
    if masked:
        formulas["padded"] = "pad one zero column on the left -> (L, L+1)"
        formulas["reshaped"] = "reshape -> (L+1, L), then drop row 0"
    else:
        formulas["padded"] = "pad one zero column on the right -> (L, 2L)"
        formulas["reshaped"] = "flatten, pad L-1 zeros, reshape -> (L+1, 2L-1); keep [:L, L-1:]"
    panels, distances, pads = [], [], []
    for step, where in zip(trace.steps(), origin.steps(), strict=True):
        value = step.value[0, head]
        panels.append(
            Panel(
                name=step.name,
                formula=formulas[step.name],
                shape=tuple(value.shape),
                z=_np(value),
                cols_title="key j" if step.name == "result" else "column c",
                rows_title="query i" if step.name != "reshaped" else "row",
            )
        )
        row, distance, is_pad = decode_provenance(where.value, n, masked)
        distances.append(distance.numpy().astype(np.int32))
        pads.append(is_pad.numpy())
    row, distance, is_pad = decode_provenance(origin.result, n, masked)
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    invalid = is_pad | (row != i) | (distance != j - i)
    definition = rc.relative_logits(q, inputs.table_k, method="bucket")
    valid = ~invalid
    max_diff = float((trace.result - definition).abs()[..., valid].max())
    result = _np(trace.result[0, head])
    causal = rc.causal_mask(n).numpy()
    return SkewView(
        panels=tuple(panels),
        distances=tuple(distances),
        pads=tuple(pads),
        invalid=invalid.numpy(),
        definition=_np(definition[0, head]),
        masked_result=np.where(causal, result, np.nan).astype(np.float32),
        max_diff=max_diff,
        bytes_skew=rc.memory_bytes("skew", full, d, causal=masked),
        bytes_materialized=rc.memory_bytes("einsum", full, d),
        bytes_logits=rc.logits_bytes(full, params.heads),
    )


# ---- attention ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionView:
    content_logits: np.ndarray  # (W, W) on the window
    relative_logits: np.ndarray  # (W, W)
    scaled_logits: np.ndarray  # (W, W) (content + relative) / sqrt(d)
    masked_logits: np.ndarray  # (W, W), NaN where the mask forbids
    allowed: np.ndarray  # (W, W) 1.0 / 0.0
    weights: np.ndarray  # (W, W), NaN where the mask forbids
    content_output: np.ndarray  # (W, d) sum_j a_ij v_j over all n keys
    relative_output: np.ndarray  # (W, d) sum_j a_ij a^V_ij
    output: np.ndarray  # (W, d) z_i
    weight_inside: tuple[float, float]  # least and most weight a row puts on the window's keys
    scale: float


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def attention_view(params: ViewParams, head: int) -> AttentionView:
    """One head, the window's query rows against all n keys (rows are independent: exact)."""
    start, stop = params.window
    n, d = params.length, params.head_dim
    plan_compute("attention", "bucket", n, d, 1, k=params.k, rows=stop - start, traces=6)
    inputs = example_inputs(params)
    one = slice(head, head + 1)
    trace = rc.relative_attention(
        inputs.q[:, one, start:stop],
        inputs.k[:, one],
        inputs.v[:, one],
        inputs.table_k,
        inputs.table_v,
        mask=inputs.mask,
        causal=inputs.causal,
        query_offset=start,
        method="bucket",
        trace=True,
    )
    allowed = trace.allowed[0, 0, :, start:stop]
    inside = trace.weights[0, 0, :, start:stop]

    def block(t: torch.Tensor) -> np.ndarray:
        return _np(t[0, 0, :, start:stop])

    def blank(t: torch.Tensor) -> np.ndarray:
        return np.where(allowed.numpy(), block(t), np.nan).astype(np.float32)

    mass = inside.sum(-1)  # (W,) weight each row puts on the window's keys
    return AttentionView(
        content_logits=block(trace.content_logits),
        relative_logits=block(trace.relative_logits),
        scaled_logits=block(trace.scaled_logits),
        masked_logits=blank(trace.scaled_logits),
        allowed=_np(allowed.float()),
        weights=blank(trace.weights),
        content_output=_np(trace.content_output[0, 0]),
        relative_output=_np(trace.relative_output[0, 0]),
        output=_np(trace.output[0, 0]),
        weight_inside=(float(mass.min()), float(mass.max())),
        scale=trace.scale,
    )


# ---- absolute vs relative -------------------------------------------------------------------


@dataclass(frozen=True)
class EncodingView:
    encoding: np.ndarray  # (W, d_model) sinusoidal PE of the window's positions
    similarity: np.ndarray  # (W, W) PE_i · PE_j on the window
    index: np.ndarray  # (W, W) clip(j - i, -k, k) + k
    diagonal_spread: float  # max over offsets of (max - min) of the similarity along a diagonal


@st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)
def encoding_view(params: ViewParams) -> EncodingView:
    start, stop = params.window
    n = stop - start
    plan_compute("encoding", "loop", n, params.d_model, k=params.k, traces=4)
    pe = rc.sinusoidal_encoding(stop, params.d_model, dtype=torch.float64)[start:]
    sim = rc.encoding_similarity(pe).numpy()
    spread = max(float(np.ptp(np.diagonal(sim, offset))) for offset in range(-(n - 1), n))
    return EncodingView(
        encoding=pe.numpy().astype(np.float32),
        similarity=sim.astype(np.float32),
        index=_np(rc.relative_index(n, n, params.k)),
        diagonal_spread=spread,
    )
