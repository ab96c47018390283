"""The Check page's own inputs for each kind: the view's tensors (the trained model's, or the
seeded random ones of every page) at the sidebar's n (up to ``N_MAX``), k, heads and d, in the
kind's calling convention, float64, as the checker's case and inputs.

Each kind builds its own from the view's numbers (its ``example``, in its scheme's folder,
``relpos_core/schemes/<name>/reference.py``): Shaw's takes the view's q, k, v and tables, the
skew and rel-shift the view's q against its table, RoPE the view's q at positions counted from
10, ALiBi a head count of the page's own, T5's bucketing a grid of distances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from relpos_core.check import KINDS
from relpos_core.check.kind import Example

N_MAX = 64  # the page checks at most this many positions: a file of a few hundred kB


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


def length(params: ViewParams) -> int:
    return min(params.length, N_MAX)


def own_default(kind: str) -> int | None:
    """The default of ``kind``'s own control (None: it has none)."""
    control = KINDS[kind].control
    return None if control is None else control.default


def view_tensors(params: ViewParams, n: int) -> tuple[np.ndarray, ...]:
    """(q, k, v, table_k, table_v) of the view, float64, the first ``n`` positions."""
    view = example_inputs(params)
    q, k, v = (t[:, :, :n].double().numpy() for t in (view.q, view.k, view.v))
    return (q, k, v, *(t.double().numpy() for t in (view.table_k, view.table_v)))


def page_inputs(kind: str, params: ViewParams, own: int | None = None) -> PageInputs:
    """The inputs of ``kind`` on this view; ``own`` the value of the kind's own control (its
    default when None)."""
    if kind not in KINDS or KINDS[kind].example is None:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    n = length(params)
    own = own_default(kind) if own is None else own
    example = Example(n, params.heads, params.causal, lambda: view_tensors(params, n), own)
    built = KINDS[kind].example(example)
    return PageInputs(kind, built.case, built.arrays, built.call, built.about, built.from_view)
