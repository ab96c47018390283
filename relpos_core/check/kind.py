"""What a kind of implementation is, for the checker: its cases, its definition, its known bugs.

A :class:`Kind` is a small object (one per file in this package): ``cases()`` lists the sizes
that expose each bug class, ``inputs(case)`` draws the float64 inputs of one (seeded),
``arguments(case, inputs)`` is what the user's function is called with, ``references`` gives the
definition's output (several when more than one convention is right, as RoPE's two layouts),
``compared`` the cells that count, and ``bugs`` the known wrong versions, each a function of
(case, inputs) in words: the checker names a bug when the user's output equals one of them.

Each kind lives in its scheme's folder (``relpos_core/schemes/<name>/reference.py``, its
``KIND``), and says there what a page needs of it: ``example`` builds its inputs from a view's
numbers (an :class:`Example`), ``control`` is an input of its own no view gives, ``mask_taken``
what it takes of a mask, and ``pair`` where a picked pair (i, j) lies in its output.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch

Case = Mapping[str, object]  # one size: n, clip, heads, causal, ...
Inputs = Mapping[str, torch.Tensor]
# Where a picked pair (i, j) lies in a kind's output:
#   cell           the cell (i, j)
#   memory cell    the cell (i, M + j): M memory keys come first (case "m" - "n" of them)
#   query row      the row of query i (an output that sums over every key)
#   position rows  the rows of positions i and j, each on its own
PAIR_LAYOUTS = ("cell", "memory cell", "query row", "position rows")


@dataclass(frozen=True)
class Example:
    """A view's numbers a kind builds a page's inputs from: ``n`` positions, ``heads``, the
    mask's causal part, ``tensors()`` -> (q, k, v) float64 (1, heads, n, d) and the clipped
    tables (table_k, table_v) (2c + 1, d), computed when asked; ``own`` the value of the kind's
    own control (None without one)."""

    n: int
    heads: int
    causal: bool
    tensors: Callable[[], tuple[np.ndarray, ...]]
    own: int | None = None


@dataclass(frozen=True)
class PageCase:
    """One kind's inputs on a page: the checker's case, the tensor arguments (what a visitor
    downloads), the call with its other arguments written out, what the numbers are when they
    are not the view's own tensors alone, and whether they are drawn from the view at all."""

    case: tuple[tuple[str, object], ...]
    arrays: tuple[tuple[str, np.ndarray], ...]
    call: str
    about: str = ""
    from_view: bool = True


@dataclass(frozen=True)
class OwnControl:
    """An input of a kind's own that no sidebar control gives: a picker of ``choices``."""

    label: str
    choices: tuple[int, ...]
    url_key: str
    default: int
    help: str = ""


@dataclass(frozen=True)
class Kind:
    """One kind of implementation the checker knows (``shaw``, ``skew``, ...)."""

    name: str
    convention: str  # the calling convention in words (--help, the docs, the page)
    cases: Callable[[], list[dict[str, object]]]
    inputs: Callable[[Case], dict[str, torch.Tensor]]
    arguments: Callable[[Case, Inputs], tuple]
    references: Callable[[Case, Inputs], dict[str, np.ndarray]]  # convention name -> output
    bugs: Mapping[str, Callable[[Case, Inputs], np.ndarray]]  # in words -> the wrong output
    compared: Callable[[Case], np.ndarray | None] = lambda case: None  # bool; None: every cell
    row_constant: bool = False  # a constant per softmax row is harmless (a bias before softmax)
    exact: bool = False  # integers: compared exactly
    axes: tuple[str, ...] = ()  # the output's axes in words ("head", "query", "key", ...)
    page: str = ""  # the explorer page that explains this step
    order: int = 100  # its place in every list of kinds, then by name
    example: Callable[[Example], PageCase] | None = None  # its inputs on a page
    control: OwnControl | None = None
    mask_taken: str = ""  # what its inputs take of a mask ({causal}, {bidirectional} filled)
    pair: str = "cell"  # one of PAIR_LAYOUTS
    first_position: int = 0  # the position of its inputs' row 0 (rows counted from there)


def seeded(case: Case, salt: int = 0) -> torch.Generator:
    """A generator seeded from the case, so each case's inputs are fixed and distinct."""
    text = repr(sorted((k, str(v)) for k, v in case.items()))
    return torch.Generator().manual_seed(zlib.crc32(text.encode()) + salt)


def describe(case: Case) -> str:
    """A case in words: ``n = 5, clip = 2, causal``."""
    parts = []
    for key, value in case.items():
        if isinstance(value, bool):
            parts.append(key if value else f"not {key}")
        else:
            parts.append(f"{key} = {value}")
    return ", ".join(parts)


def read(rel: np.ndarray, row: np.ndarray, column: np.ndarray) -> np.ndarray:
    """out[..., i, j] = rel[..., row[i, j], column[i, j]], and 0 where that is outside rel."""
    n, width = rel.shape[-2:]
    inside = (row >= 0) & (row < n) & (column >= 0) & (column < width)
    picked = rel[..., np.where(inside, row, 0), np.where(inside, column, 0)]
    return np.where(inside, picked, 0.0)


def distance_logits(q: np.ndarray, table_k: np.ndarray, width: int) -> np.ndarray:
    """(1, h, n, width): column c holds q_i · a^K at the distance key - query = c - (width - 1)
    (the table's row clip(c - (width - 1), k) + k)."""
    clip = (table_k.shape[0] - 1) // 2
    rows = np.clip(np.arange(width) - (width - 1), -clip, clip) + clip
    return np.einsum("bhid,rd->bhir", q, table_k[rows])
