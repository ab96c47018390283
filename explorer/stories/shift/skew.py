"""The skew as a story: every step of Huang et al.'s skew and where each value came from
(:mod:`explorer.stories.shift.stepping` follows one picked result cell through the steps).

The values are ``relpos_core``'s traced skew of one head; the positions come from running the
same skew on cell codes (:func:`explorer.weights.example.skew_provenance`), so nothing here
re-derives the pad / reshape / slice arithmetic. Above DISPLAY_MAX positions the story is the
skew of the window's W queries over a length-W sequence: relative logits depend on j - i only, so
its result is exactly the window of the full result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

import relpos_core as rc
from explorer.frame.budget import plan_compute
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.example import decode_provenance, example_inputs, skew_provenance

CACHE_ENTRIES = 8
STEPS = ("input", "padded", "reshaped", "result")
E_R = r"(E_r)_c = w^K_{\operatorname{clip}(c - (n-1),\, k)},\quad r = c - (n - 1)"

# LaTeX of each step, (masked, unmasked): what relpos_core.skew does, n the sequence length
# (Huang et al.'s L), d the head dimension; the queries come in scaled by 1/sqrt(d).
STEP_FORMULAS = {
    "input": (
        r"S = \frac{Q E_r^\top}{\sqrt{d}} \in \mathbb{R}^{n \times n},\quad "
        r"S_{ic} = \frac{q_i \cdot (E_r)_c}{\sqrt{d}},"
        r"\quad r = c - (n-1) \in \{-(n-1), \dots, 0\}",
        r"S = \frac{Q E_r^\top}{\sqrt{d}} \in \mathbb{R}^{n \times (2n-1)},\quad "
        r"S_{ic} = \frac{q_i \cdot (E_r)_c}{\sqrt{d}},"
        r"\quad r = c - (n-1) \in \{-(n-1), \dots, n-1\}",
    ),
    "padded": (
        r"\bigl[\,0 \;\big|\; S\,\bigr] \in \mathbb{R}^{n \times (n+1)}"
        r"\quad\text{(one zero column on the left)}",
        r"\bigl[\,S \;\big|\; 0\,\bigr] \in \mathbb{R}^{n \times 2n}"
        r"\quad\text{(one zero column on the right)}",
    ),
    "reshaped": (
        r"\operatorname{reshape}_{(n+1) \times n}\bigl[\,0 \;\big|\; S\,\bigr]"
        r"\quad\text{(the same numbers, read row by row)}",
        r"\operatorname{reshape}_{(n+1) \times (2n-1)}\bigl(\operatorname{flatten}"
        r"\bigl[\,S \;\big|\; 0\,\bigr] \,\|\, 0_{n-1}\bigr)",
    ),
    "result": (
        r"S^{\mathrm{rel}} = \text{reshaped}[1{:},\,:]\;\text{(drop row 0)},\quad "
        r"S^{\mathrm{rel}}_{ij} = S_{i,\, j - i + n - 1}\ \text{for}\ j \le i",
        r"S^{\mathrm{rel}} = \text{reshaped}[{:}n,\; n-1{:}\,],\quad "
        r"S^{\mathrm{rel}}_{ij} = S_{i,\, j - i + n - 1}\ \text{for every}\ i, j",
    ),
}
STEP_TEXT = {
    "input": "One row per query, one column per distance r: the relative layout. Cell (i, r) "
    "is $q_i \\cdot (E_r)_c$ / √d; the distances a row needs are those with "
    "$0 \\le i + r < n$.",
    "padded": "Add one column of zeros. Nothing moves yet; the zero is what shifts every row by "
    "one more place than the row above once the rows are read as one long list.",
    "reshaped": "Read the padded matrix row by row and cut it into rows of a new width. Each "
    "row now starts one place later in the old rows: the per-row shift, without a gather. The "
    "outlined block is what the slice keeps; the greyed cells are dropped.",
    "result": "The slice: row $i$, column $j$ holds $q_i \\cdot (E_r)_c$ / √d at "
    "$r = j - i$, the relative logit of $(i, j)$ in the absolute layout, as on the Relative "
    "logits page.",
}


@dataclass(frozen=True)
class SkewStep:
    """One step of the skew of one head, and where each of its cells came from.

    ``z`` (rows, cols) float32. ``code``: the provenance code of each cell (0 for a pad), which
    identifies one value across the steps; :meth:`origin` decodes it into the query row and
    the relative distance r of the input cell the value copies. ``kept``: cells whose values
    reach a valid cell of the result (on ``reshaped``: the block the slice keeps). ``x``: the
    axis coordinate of each column (r on the first two steps, the column on ``reshaped``, the
    key position on ``result``); ``y`` likewise for rows. Arrays are shared: read only.
    """

    name: str
    formula: str
    z: np.ndarray
    code: np.ndarray
    kept: np.ndarray
    x: np.ndarray
    y: np.ndarray
    x_title: str
    y_title: str
    length: int  # n of the skew, to decode codes
    masked: bool
    start: int  # position of the first query

    @property
    def shape(self) -> tuple[int, int]:
        return self.z.shape  # type: ignore[return-value]

    @property
    def pad(self) -> np.ndarray:
        return self.code == 0

    def origin(
        self, rows: slice = slice(None), cols: slice = slice(None)
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source query position, distance r, is_pad) of the cells [rows, cols]; a pad has
        source -1 and r 0."""
        code = torch.from_numpy(self.code[rows, cols].astype(np.int64))
        row, distance, pad = (t.numpy() for t in decode_provenance(code, self.length,
                                                                   self.masked))  # fmt: skip
        return np.where(pad, -1, row + self.start), distance, pad


@dataclass(frozen=True)
class SkewStory:
    steps: tuple[SkewStep, ...]  # input, padded, reshaped, result
    masked: bool
    length: int  # n of the skew: W, the window's length above DISPLAY_MAX
    start: int  # position of the window's first query / key
    head_dim: int  # d: every value is divided by sqrt(d)
    valid: np.ndarray  # (n, n) bool: result cells that are q_i · w_clip(j-i,k) / sqrt(d)
    definition: np.ndarray  # (n, n) q_i · w^K[clip(j - i, k) + k] / sqrt(d), by "bucket"
    table_rows: np.ndarray  # (n, n) clip(j - i, k) + k
    max_diff: float  # max |result - definition| over the valid cells, every head
    bytes_skew: int  # Er the skew needs at the full n
    bytes_materialized: int  # a^K the einsum / matmul paths need at the full n
    bytes_logits: int  # the (h, n, n) logits every path pays
    follows_pads: ClassVar[bool] = False  # a click on a pad picks no cell

    def step(self, name: str) -> SkewStep:
        return self.steps[STEPS.index(name)]


def slice_offset(outer: np.ndarray, inner: np.ndarray) -> tuple[int, int]:
    """(row, col) at which ``inner`` sits inside ``outer`` (codes): where the slice cut."""
    rows, cols = inner.shape
    for r in range(outer.shape[0] - rows + 1):
        for c in range(outer.shape[1] - cols + 1):
            if np.array_equal(outer[r, c : c + cols], inner[0]) and np.array_equal(
                outer[r : r + rows, c : c + cols], inner
            ):
                return r, c
    raise AssertionError("the result is not a block of the reshaped tensor")


@cached(CACHE_ENTRIES, resource=True)
def skew_story(params: ViewParams, head: int, masked: bool) -> SkewStory:
    """Every step of the (masked or unmasked) skew of head ``head`` on the view's window.

    Cached as a shared resource (no copy per rerun: a W = 512 story holds ~20 MB); its arrays
    are read only.
    """
    inputs = example_inputs(params)
    start, stop = params.window
    q = inputs.scaled_q[:, :, start:stop]  # (1, h, n, d): the window's queries / sqrt(d)
    length, d, full = q.shape[-2], params.head_dim, params.length
    plan_compute("skew", "skew", length, d, params.heads, k=params.k, causal=masked, traces=2)
    e_r = rc.skew_embeddings(inputs.table_k, length)  # (2n-1, d): r = -(n-1)..n-1
    if masked:
        e_r = e_r[:length]  # r = -(n-1)..0: the causal half (Huang et al.)
    x = q @ e_r.T  # (1,h,n,d),(d,W) -> (1,h,n,W)
    trace = rc.trace_skew_masked(x) if masked else rc.trace_skew_unmasked(x)
    origin = skew_provenance(length, masked)
    codes = [step.value.round().to(torch.int32).numpy() for step in origin.steps()]
    result_code = codes[-1]
    row, distance, is_pad = decode_provenance(origin.result, length, masked)
    i = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    valid = (~is_pad & (row == i) & (distance == j - i)).numpy()
    valid_codes = np.sort(result_code[valid])
    top, left = slice_offset(codes[2], result_code)
    positions = np.arange(start, stop)
    steps = []
    for name, step, code in zip(STEPS, trace.steps(), codes, strict=True):
        rows, cols = code.shape
        if name == "reshaped":
            kept = np.zeros((rows, cols), dtype=bool)
            kept[top : top + length, left : left + length] = True
        elif name == "result":
            kept = valid
        else:  # codes are unique within a step: a sorted lookup finds the ones that survive
            at = np.searchsorted(valid_codes, code).clip(max=valid_codes.size - 1)
            kept = (valid_codes[at] == code) & (code > 0)
        if name == "input":
            x_axis = np.arange(cols) - (length - 1)  # the distance r of each column
        elif name == "padded":
            x_axis = np.arange(cols) - (length if masked else length - 1)  # pad at -n or n
        elif name == "result":
            x_axis = positions
        else:
            x_axis = np.arange(cols)
        z = step.value[0, head].detach().numpy().astype(np.float32)
        for array in (z, code, kept):
            array.flags.writeable = False
        steps.append(
            SkewStep(
                name=name,
                formula=STEP_FORMULAS[name][0 if masked else 1],
                z=z,
                code=code,
                kept=kept,
                x=x_axis,
                y=positions if name != "reshaped" else np.arange(rows),
                x_title={"input": "distance r", "padded": "distance r", "reshaped": "column"}.get(
                    name, "key j"
                ),
                y_title="row" if name == "reshaped" else "query i",
                length=length,
                masked=masked,
                start=start,
            )
        )
    definition = rc.relative_logits(q, inputs.table_k, method="bucket")
    max_diff = float((trace.result - definition).abs()[..., torch.tensor(valid)].max())
    return SkewStory(
        steps=tuple(steps),
        masked=masked,
        length=length,
        start=start,
        head_dim=d,
        valid=valid,
        definition=definition[0, head].numpy().astype(np.float32),
        table_rows=rc.relative_index(length, length, params.k).numpy().astype(np.int32),
        max_diff=max_diff,
        bytes_skew=rc.memory_bytes("skew", full, d, causal=masked),
        bytes_materialized=rc.memory_bytes("einsum", full, d),
        bytes_logits=rc.logits_bytes(full, params.heads),
    )
