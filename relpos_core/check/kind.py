"""What a kind of implementation is, for the checker: its cases, its definition, its known bugs.

A :class:`Kind` is a small object (one per file in this package): ``cases()`` lists the sizes
that expose each bug class, ``inputs(case)`` draws the float64 inputs of one (seeded),
``arguments(case, inputs)`` is what the user's function is called with, ``references`` gives the
definition's output (several when more than one convention is right, as RoPE's two layouts),
``compared`` the cells that count, and ``bugs`` the known wrong versions, each a function of
(case, inputs) in words: the checker names a bug when the user's output equals one of them.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch

Case = Mapping[str, object]  # one size: n, clip, heads, causal, ...
Inputs = Mapping[str, torch.Tensor]


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
