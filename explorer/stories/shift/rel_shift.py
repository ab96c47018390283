"""Transformer-XL's ``rel_shift`` as a story: every step, where each value came from and where
it ends up, and the cells the shift gets wrong (:mod:`explorer.stories.shift.stepping` follows
one picked result cell through the steps).

Q queries follow M memory positions (K = Q + M keys). Positions are the sequence's, as on every
page: query i and key j of the segment sit at position i and j, the memory keys at -M..-1, so
key j is column M + j of the result (:meth:`ShiftStory.column`) and the distance is j - i. The
values are the XL position terms (b) + (d) of one head, (q_i + v)·W_R R_(i-j) / sqrt(d), from
``relpos_core``'s ``TransformerXL`` on the view's example queries; the definition they are
checked against is the same scheme's gathered terms. Cell positions come from running the
core's traced shift on cell codes, as the Skew page does: nothing here re-derives the pad /
reshape / slice arithmetic. The story is drawn for at most STORY_QUERIES queries; the check
(the badge) runs the shift on at most CHECK_QUERIES.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from explorer.figures import formulas
from explorer.frame.budget import REQUEST_BUDGET_BYTES
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.lookup import relative_distances
from relpos_core.schemes import TransformerXL, trace_rel_shift

STORY_QUERIES = 12  # the steps are drawn cell by cell for at most this many queries
CHECK_QUERIES = 512  # the badge's shift runs on at most this many queries
MEMORY_MAX = 12  # memory positions M a view may add
CACHE_ENTRIES = 8
STEPS = ("input", "padded", "reshaped", "sliced", "result")
STEP_WORDS = ("relative", "padded", "reshaped", "sliced", "result")
KEPT, WRONG, DROPPED = 0, 1, 2  # where a cell's value ends up (a result cell's own verdict)

STEP_FORMULAS = {
    "input": formulas.XL_INPUT,
    "padded": formulas.XL_PADDED,
    "reshaped": formulas.XL_RESHAPED,
    "sliced": formulas.XL_SLICED,
    "result": formulas.XL_SHIFT,
}
STEP_TEXT = {
    "input": "One row per query, one column per distance j - i, from -(n_k - 1) on the left to 0 "
    "on the right: the relative layout. Query i needs the distances -(M + i)..0, back to the "
    "first memory key at position -M; the ones further left point before it.",
    "padded": "Add one column of zeros on the left. Nothing moves yet.",
    "reshaped": "Read the padded numbers row by row and cut them into rows of n_q. Each old row "
    "now starts one place further along than the one above: the per-row shift, no gather.",
    "sliced": "Drop the first row: the first n_q numbers, row 0's pad and its distances that "
    "point before the first key.",
    "result": "Read the rest back as n_q rows of n_k: the M memory keys (m, positions -M..-1), "
    "then keys 0..n_q-1. Cell (i, j) holds distance j - i for every key j <= i; right of that, "
    "the shift is wrong: the pad zero, then the next query's distances that point before the "
    "first key.",
}


def xl_scheme(params: ViewParams) -> TransformerXL:
    """The view's Transformer-XL position parameters (W_R, u, v): with trained weights the
    family's Transformer-XL model's at the view's layer, else drawn from the view's seed; the
    same ones the Position schemes and Compare schemes pages use."""
    return scheme_for(params, SchemeConfig("xl"))  # type: ignore[return-value]


def position_definition(scheme: TransformerXL, q: torch.Tensor, memory: int) -> torch.Tensor:
    """(b) + (d) gathered by each cell's distance (1, h, Q, K), queries at positions M.."""
    b, h, n_q, d = q.shape
    keys = torch.zeros(b, h, n_q + memory, d, dtype=q.dtype)  # (b) and (d) read no key
    return scheme.position_term(q, keys, query_offset=memory, max_bytes=REQUEST_BUDGET_BYTES)


@dataclass(frozen=True)
class ShiftStep:
    """One step of the shift of one head, and where each of its cells came from and goes.

    ``z`` (rows, cols) float32. ``code``: 0 for a pad, else 1 + row * K + column of the input
    cell the value copies (:meth:`origin` decodes it). ``fate``: KEPT (reaches a right result
    cell), WRONG (reaches a wrong one) or DROPPED (the slice drops it). ``x_ticks`` and
    ``y_ticks`` name every column and row. Arrays are shared: read only.
    """

    name: str
    formula: str
    z: np.ndarray
    code: np.ndarray
    fate: np.ndarray
    x_title: str
    y_title: str
    x_ticks: tuple[str, ...]
    y_ticks: tuple[str, ...]
    keys: int  # K, to decode codes

    @property
    def shape(self) -> tuple[int, int]:
        return self.z.shape  # type: ignore[return-value]

    @property
    def x(self) -> np.ndarray:
        """Axis coordinate of each column: its index (ticks carry the meaning)."""
        return np.arange(self.shape[1])

    @property
    def y(self) -> np.ndarray:
        return np.arange(self.shape[0])

    @property
    def pad(self) -> np.ndarray:
        return self.code == 0

    def origin(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(input row, input column c, distance j - i = c - (K - 1)) of every cell; the pad
        gets row and column -1 and distance 1 (no distance of the layout is positive)."""
        flat = self.code.astype(np.int64) - 1
        row, col = np.divmod(flat, self.keys)
        pad = self.pad
        return (np.where(pad, -1, row), np.where(pad, -1, col),
                np.where(pad, 1, col - (self.keys - 1)))  # fmt: skip


@dataclass(frozen=True)
class ShiftStory:
    steps: tuple[ShiftStep, ...]  # input, padded, reshaped, sliced, result
    queries: int  # Q of the story
    memory: int  # M
    keys: int  # K = Q + M
    head: int
    valid: np.ndarray  # (Q, K) bool, the core's: column <= M + i, i.e. key j <= i
    distance: np.ndarray  # (Q, K) int, column - (M + i): the distance j - i of the definition
    definition: np.ndarray  # (Q, K) float32, the scheme's gathered (b) + (d) of the head
    start: int = 0  # position of the first query row (the story always starts at row 0)
    follows_pads: ClassVar[bool] = True  # a click on a pad picks the result cell it lands in

    def step(self, name: str) -> ShiftStep:
        return self.steps[STEPS.index(name)]

    def column(self, j: int) -> int:
        """The result's column of key j (position j; a memory key: j < 0): M + j."""
        return self.memory + j

    def key(self, column: int) -> int:
        """The position of the result's ``column``: column - M (negative: a memory key)."""
        return column - self.memory


def fates(codes: list[np.ndarray], valid: np.ndarray) -> list[np.ndarray]:
    """KEPT / WRONG / DROPPED for every cell of every step, read off the result's codes.

    A value keeps its code through the steps. A pad has none: reshaping keeps the row-major
    order, so a pad that reaches the result is the cell right after the value before it.
    """
    result = codes[-1]
    kept = result[valid]
    wrong = result[~valid & (result > 0)]
    flat = result.reshape(-1)
    before_pad = flat[np.flatnonzero(flat == 0) - 1]  # result cell 0 is never a pad
    out = []
    for code in codes:
        fate = np.full(code.shape, DROPPED, dtype=np.int8)
        fate[np.isin(code, kept) & (code > 0)] = KEPT
        fate[np.isin(code, wrong)] = WRONG
        cells = code.reshape(-1)
        pads = np.flatnonzero(cells == 0)
        pads = pads[pads > 0]
        fate.reshape(-1)[pads[np.isin(cells[pads - 1], before_pad)]] = WRONG
        out.append(fate)
    return out


def _ticks(name: str, rows: int, cols: int, memory: int, keys: int):
    """Tick text of every column and row of a step."""
    distances = [str(c - (keys - 1)) for c in range(keys)]  # j - i
    if name == "input":
        return tuple(distances), tuple(str(i) for i in range(rows))
    if name == "padded":
        return ("pad", *distances), tuple(str(i) for i in range(rows))
    if name == "result":  # key j at column M + j; the memory keys at positions -M..-1
        return tuple(f"m{c - memory}" if c < memory else str(c - memory) for c in range(cols)), (
            tuple(str(i) for i in range(rows))
        )
    return tuple(str(c) for c in range(cols)), tuple(str(r) for r in range(rows))


@cached(CACHE_ENTRIES, resource=True)
def shift_story(params: ViewParams, head: int, memory: int) -> ShiftStory:
    """Every step of rel_shift on the first min(n, STORY_QUERIES) queries after ``memory``
    memory positions, for head ``head`` (cached and shared: read only)."""
    scheme = xl_scheme(params)
    q = example_inputs(params, "xl").q[:, :, :STORY_QUERIES]  # (1, h, Q, d)
    queries = q.shape[2]
    keys = queries + memory
    with torch.no_grad():
        trace = trace_rel_shift(scheme.relative_layout(q, keys))
        definition = position_definition(scheme, q, memory)[0, head]
    codes_in = 1 + torch.arange(queries * keys, dtype=torch.float64).reshape(queries, keys)
    origin = trace_rel_shift(codes_in)  # float64 keeps every code exact
    codes = [getattr(origin, name).round().to(torch.int32).numpy() for name in STEPS]
    valid = trace.valid.numpy()
    steps = []
    for name, code, fate in zip(STEPS, codes, fates(codes, valid), strict=True):
        z = getattr(trace, name)[0, head].numpy().astype(np.float32)
        for array in (z, code, fate):
            array.flags.writeable = False
        rows, cols = code.shape
        x_ticks, y_ticks = _ticks(name, rows, cols, memory, keys)
        steps.append(
            ShiftStep(
                name=name,
                formula=STEP_FORMULAS[name],
                z=z,
                code=code,
                fate=fate,
                x_title={
                    "input": "distance j - i",
                    "padded": "distance j - i",
                    "result": "key j (m: memory)" if memory else "key j",
                }.get(name, "column"),
                y_title="query i" if name in ("input", "padded", "result") else "row",
                x_ticks=x_ticks,
                y_ticks=y_ticks,
                keys=keys,
            )
        )
    definition_z = definition.numpy().astype(np.float32)
    distance = relative_distances(queries, keys, query_offset=memory).numpy()  # j - i
    for array in (valid, definition_z, distance):
        array.flags.writeable = False
    return ShiftStory(tuple(steps), queries, memory, keys, head, valid, distance, definition_z)


@dataclass(frozen=True)
class ShiftCheck:
    """rel_shift against the scheme's gathered (b) + (d), every head, on ``queries`` queries."""

    queries: int
    memory: int
    max_diff: float  # max |shift - definition| over the valid cells (key j <= i)
    wrong_cells: int  # cells outside the valid region: the shift is wrong there
    cells: int  # Q * K of one head
    logit_bytes: int  # the scheme's estimate for every term at the full n, K = n + M
    position_bytes: int  # of which the position terms' own work (R, W_R R, the products)


@cached(CACHE_ENTRIES)
def shift_check(params: ViewParams, memory: int) -> ShiftCheck:
    """The shift and the definition on the first min(n, CHECK_QUERIES) queries."""
    scheme = xl_scheme(params)
    q = example_inputs(params, "xl").q[:, :, :CHECK_QUERIES]
    queries = q.shape[2]
    keys = queries + memory
    with torch.no_grad():
        trace = trace_rel_shift(scheme.relative_layout(q, keys))
        definition = position_definition(scheme, q, memory)
    valid = trace.valid
    diff = (trace.result - definition).abs()[..., valid]
    full = params.length
    return ShiftCheck(
        queries=queries,
        memory=memory,
        max_diff=float(diff.max()),
        wrong_cells=int((~valid).sum()),
        cells=int(valid.numel()),
        logit_bytes=scheme.logit_bytes(full, full + memory),
        position_bytes=scheme.position_bytes(full, full + memory),
    )
