"""The Check page's own inputs for each kind: the view's tensors (the trained model's, or the
seeded random ones of every page) at the sidebar's n (up to ``N_MAX``), k, heads and d, in the
kind's calling convention, float64, as the checker's case and inputs.

    shaw       q, k, v, w^K, w^V of the view; clip = k, causal as the sidebar's mask
    skew       rel[i, r] = q_i · a^K at the distance r - (n - 1): the view's q and table
    rel-shift  the same numbers after n // 2 memory positions (at least one), as Transformer-XL
               orders them: m = n + memory columns, column c the distance query - key = m-1-c
    alibi      a head count of the page's own (6 by default: not a power of two, as no sidebar
               choice is) and n
    t5-bucket  the grid of j - i over max(n, 16) positions, both directions unless causal, 16
               buckets and max distance 12: small, so that the grid reaches every branch of the
               bucketing and each known bug gives numbers of its own
    rope       the view's q as x at positions 10..n+9 (not from 0), base 10000
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from relpos_core.check import KINDS

N_MAX = 64  # the page checks at most this many positions: a file of a few hundred kB
T5_BUCKETS, T5_MAX, T5_GRID_MIN = 16, 12, 16
ROPE_BASE = 10_000.0
ROPE_FIRST = 10  # the first position: an implementation that counts from 0 shows
ALIBI_HEADS = (1, 2, 3, 4, 6, 8, 12)  # the page's own choice: most are not powers of two
ALIBI_HEADS_DEFAULT = 6


@dataclass(frozen=True)
class PageInputs:
    """One kind's inputs on this view: the checker's case, the tensor arguments (what the
    visitor downloads) and the call with its other arguments written out."""

    kind: str
    case: tuple[tuple[str, object], ...]
    arrays: tuple[tuple[str, np.ndarray], ...]
    call: str
    about: str = ""  # what the numbers are, when they are not the view's own tensors alone
    from_view: bool = True  # drawn from the view's q, k, v and tables (trained or random)

    @property
    def case_dict(self) -> dict[str, object]:
        return dict(self.case)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {name: torch.from_numpy(np.array(a)) for name, a in self.arrays}


def distance_logits(q: np.ndarray, table_k: np.ndarray, width: int) -> np.ndarray:
    """(1, h, n, width): column c holds q_i · a^K at the distance key - query = c - (width - 1)
    (the table's row clip(c - (width - 1), k) + k)."""
    clip = (table_k.shape[0] - 1) // 2
    rows = np.clip(np.arange(width) - (width - 1), -clip, clip) + clip
    return np.einsum("bhid,rd->bhir", q, table_k[rows])


def length(params: ViewParams) -> int:
    return min(params.length, N_MAX)


def page_inputs(
    kind: str, params: ViewParams, alibi_heads: int = ALIBI_HEADS_DEFAULT
) -> PageInputs:
    """The inputs of ``kind`` on this view (see the module docstring)."""
    n, heads = length(params), params.heads
    causal = params.causal
    if kind == "alibi":
        case = (("heads", alibi_heads), ("n", n))
        about = (
            f"two sizes: n = {n} and a head count of this page's own, {alibi_heads} (the "
            "sidebar's are powers of two, where the paper's slope rule for other counts never "
            "shows)"
        )
        return PageInputs(kind, case, (), f"fn(heads={alibi_heads}, n={n})", about, False)
    if kind == "t5-bucket":
        side = max(n, T5_GRID_MIN)
        grid = np.arange(side)[None, :] - np.arange(side)[:, None]  # (query i, key j): j - i
        case = {"distances": f"j - i, i, j < {side}", "bidirectional": not causal,
                "num_buckets": T5_BUCKETS, "max_distance": T5_MAX}  # fmt: skip
        call = (
            f"fn(relative_position, bidirectional={not causal}, num_buckets={T5_BUCKETS}, "
            f"max_distance={T5_MAX})"
        )
        about = (
            f"the distances j - i over {side} positions (at least {T5_GRID_MIN}), both "
            f"directions unless the sidebar's mask is causal; {T5_BUCKETS} buckets and max "
            f"distance {T5_MAX}, small, so that the grid reaches every branch of the bucketing"
        )
        arrays = (("relative_position", grid),)
        return PageInputs(kind, tuple(case.items()), arrays, call, about, False)
    view = example_inputs(params)
    q, k, v = (t[:, :, :n].double().numpy() for t in (view.q, view.k, view.v))
    table_k, table_v = (t.double().numpy() for t in (view.table_k, view.table_v))
    clip = (table_k.shape[0] - 1) // 2
    if kind == "shaw":
        case = {"n": n, "clip": clip, "heads": heads, "causal": causal}
        arrays = (("q", q), ("k", k), ("v", v), ("table_k", table_k), ("table_v", table_v))
        call = f"fn(q, k, v, table_k, table_v, clip={clip}, causal={causal})"
        return PageInputs(kind, tuple(case.items()), arrays, call)
    if kind == "rope":
        last = ROPE_FIRST + n - 1
        case = {"n": n, "d": q.shape[-1], "base": ROPE_BASE, "positions": f"{ROPE_FIRST}..{last}"}
        arrays = (("x", q), ("positions", np.arange(ROPE_FIRST, last + 1, dtype=np.int64)))
        about = f"x is the view's q; the positions start at {ROPE_FIRST}, not 0"
        call = f"fn(x, positions, base={ROPE_BASE})"
        return PageInputs(kind, tuple(case.items()), arrays, call, about)
    if kind == "skew":
        rel = distance_logits(q, table_k, n)
        about = "rel[i, r] = q_i · a^K at the distance r - (n - 1), from the view's q and w^K"
        return PageInputs(kind, (("n", n), ("heads", heads)), (("rel", rel),), "fn(rel)", about)
    if kind == "rel-shift":
        m = n + max(1, n // 2)  # keys: the memory, then the segment
        case = (("n", n), ("m", m), ("heads", heads))
        about = (
            f"after {m - n} memory positions, x[i, c] = q_i · a^K at the distance query - key "
            f"= {m} - 1 - c, from the view's q and w^K"
        )
        arrays = (("x", distance_logits(q, table_k, m)),)
        return PageInputs(kind, case, arrays, "fn(x)", about)
    raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
