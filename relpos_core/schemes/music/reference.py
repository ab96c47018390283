"""The ``skew`` kind: the Music Transformer's masked skew (Huang et al. 2018, Section 3.4.1).

    fn(rel) -> (b, h, n, n)
    rel (b, h, n, n): rel[..., i, r] = q_i · E_r for the distance key - query = r - (n - 1),
    i.e. the columns run over distances -(n - 1)..0 (the paper's causal layout)
    out[..., i, j] = rel[..., i, n - 1 - i + j]   for j <= i; cells j > i are not compared

The definition here is that formula, read with an index (a gather), not a skew; the paper's pad,
reshape and slice is one way to compute it. Each known bug is the formula with one thing
changed; the pad-and-reshape ones are written as what the wrong pad, reshape or slice reads
(derived in ``wrong_side`` and ``wrong_row``), not by running them.

The cases start at n = 2 and keep n = 1 for last: at n = 1 both pad mistakes return the pad's
zero, so a verdict decided there could not tell them apart; every bug below shows at n = 2.

>>> rel = torch.arange(1.0, 10.0, dtype=torch.float64).reshape(1, 1, 3, 3)
>>> definition({"n": 3}, {"rel": rel})[0, 0]  # row i: column 2 - i + j; 0 above the diagonal
array([[3., 0., 0.],
       [5., 6., 0.],
       [7., 8., 9.]])
"""

from __future__ import annotations

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, PageCase, distance_logits, read, seeded

CONVENTION = (
    "fn(rel) -> (b, h, n, n): rel (b, h, n, n), rel[..., i, r] = q_i·E_r for the distance "
    "key - query = r - (n - 1) (distances -(n - 1)..0); "
    "out[..., i, j] = rel[..., i, n - 1 - i + j] for j <= i; cells j > i are not compared"
)


def cases() -> list[dict[str, object]]:
    """Two positions first (every bug shows there), then three, six, and one position last."""
    return [
        {"n": 2, "heads": 1},
        {"n": 3, "heads": 2},
        {"n": 6, "heads": 3},
        {"n": 1, "heads": 1},
    ]


def inputs(case) -> dict[str, torch.Tensor]:
    n, heads = int(case["n"]), int(case["heads"])
    return {"rel": torch.randn(2, heads, n, n, generator=seeded(case), dtype=torch.float64)}


def arguments(case, x) -> tuple:
    return (x["rel"],)


def compared(case) -> np.ndarray:
    """The causal cells j <= i: above the diagonal the skew's output is not a logit."""
    n = int(case["n"])
    return np.tril(np.ones((n, n), bool))


def definition(case, x) -> np.ndarray:
    """out[i, j] = rel[i, n - 1 - i + j]: key j is at distance j - i, column j - i + n - 1."""
    rel = x["rel"].numpy()
    n = rel.shape[-1]
    i, j = np.indices((n, n))
    return read(rel, i, n - 1 - i + j)


def wrong_side(case, x) -> np.ndarray:
    """Pad on the right, reshape to (n + 1, n), drop the first row. Padded row i holds rel[i, c]
    at c and the pad at n; output cell (i, j) is flat element (i + 1)·n + j = i·(n + 1) +
    (n - i + j), so for j <= i it reads rel[i, n - i + j] (one column right) and the pad (0) on
    the diagonal."""
    rel = x["rel"].numpy()
    n = rel.shape[-1]
    i, j = np.indices((n, n))
    return read(rel, i, n - i + j)  # column n on the diagonal: outside, so 0


def wrong_row(case, x) -> np.ndarray:
    """Pad on the left, reshape to (n + 1, n), keep the first n rows. Padded row i holds the pad
    at 0 and rel[i, c - 1] at c; output cell (i, j) is flat element i·n + j = i·(n + 1) + (j - i):
    the pad (0) on the diagonal, and for j < i the previous row's padded column n + 1 + j - i,
    rel[i - 1, n + j - i]."""
    rel = x["rel"].numpy()
    n = rel.shape[-1]
    i, j = np.indices((n, n))
    below = j < i
    return read(rel, np.where(below, i - 1, i), np.where(below, n + j - i, j - i - 1))


def other_way(case, x) -> np.ndarray:
    """Row i moved right by n - 1 - i instead of left: rel[i, j - (n - 1 - i)], 0 where that
    column is before the first."""
    rel = x["rel"].numpy()
    n = rel.shape[-1]
    i, j = np.indices((n, n))
    return read(rel, i, j - (n - 1 - i))


def reversed_table(case, x) -> np.ndarray:
    """The columns read as distances 0, -1, ..., -(n - 1) (the table built from distance 0
    outward, the reverse of the paper's order): column i - j, rel[i, i - j]."""
    rel = x["rel"].numpy()
    n = rel.shape[-1]
    i, j = np.indices((n, n))
    return read(rel, i, i - j)


def page_example(example: Example) -> PageCase:
    """rel[i, r] = q_i · a^K at the distance r - (n - 1): the view's q and table."""
    q, _, _, table_k, _ = example.tensors()
    rel = distance_logits(q, table_k, example.n)
    about = "rel[i, r] = q_i · a^K at the distance r - (n - 1), from the view's q and w^K"
    case = (("n", example.n), ("heads", example.heads))
    return PageCase(case, (("rel", rel),), "fn(rel)", about)


SKEW = Kind(
    name="skew",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": definition(case, x)},
    bugs={
        "the pad is on the wrong side (right instead of left)": wrong_side,
        "the wrong row is dropped (the last instead of the first)": wrong_row,
        "rows shifted the other way (rel[i, j - (n - 1 - i)])": other_way,
        "the table is read in reverse order (column c as distance -c: rel[i, i - j])": (
            reversed_table
        ),
    },
    compared=compared,
    axes=("batch", "head", "query", "key"),
    page="skew.py",
    order=1,
    example=page_example,
    mask_taken="the skew's layout is causal whatever the mask (cells j > i are not compared)",
)

KIND = SKEW  # the checker's kind: relpos_core.check collects it
