"""The ``rel-shift`` kind: Transformer-XL's shift of the position term (Dai et al. 2019, App. B).

    fn(x) -> (b, h, n, m), the same shape; m >= n, the first m - n keys are the memory
    x (b, h, n, m): column c holds the distance query - key = m - 1 - c (R in the paper's order,
    distances m - 1..0), for query i at position m - n + i and key j at position j
    out[..., i, j] = x[..., i, j + n - 1 - i]   for j <= i + m - n; later keys are not compared

The definition here is that formula, read with an index (a gather), not a shift; the paper's
pad, reshape and slice is one way to compute it. Each known bug is the formula with one thing
changed; the pad-and-reshape ones are written as what the wrong pad, reshape or slice reads
(derived in ``wrong_side`` and ``wrong_row``), not by running them. One position off the other
way, x[i, j + n - i] with 0 where that is past the last column, is the wrong-side pad's output
on every compared cell, so the verdict names it so.

The cases start at two positions and keep one for last: at n = m = 1 every pad mistake returns
the pad's zero, so a verdict decided there could not tell them apart; every bug below shows at
n = m = 2 except the memory ignored, which needs m > n and shows at (4, 6).

>>> x = torch.arange(1.0, 7.0, dtype=torch.float64).reshape(1, 1, 2, 3)  # distances 2, 1, 0
>>> definition({"n": 2, "m": 3}, {"x": x})[0, 0]  # query 0 is at position 1, query 1 at 2
array([[2., 3., 0.],
       [4., 5., 6.]])
"""

from __future__ import annotations

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, PageCase, distance_logits, read, seeded

CONVENTION = (
    "fn(x) -> (b, h, n, m), the same shape, m >= n (m - n memory positions): x (b, h, n, m), "
    "column c holds the distance query - key = m - 1 - c; "
    "out[..., i, j] = x[..., i, j + n - 1 - i] for j <= i + m - n; later keys are not compared"
)


def cases() -> list[dict[str, object]]:
    """Two positions first (every bug but the memory's shows there), three, memory of two and
    three, and one position last."""
    return [
        {"n": 2, "m": 2, "heads": 1},
        {"n": 3, "m": 3, "heads": 2},
        {"n": 4, "m": 6, "heads": 1},
        {"n": 5, "m": 8, "heads": 2},
        {"n": 1, "m": 1, "heads": 1},
    ]


def inputs(case) -> dict[str, torch.Tensor]:
    n, m, heads = int(case["n"]), int(case["m"]), int(case["heads"])
    return {"x": torch.randn(2, heads, n, m, generator=seeded(case), dtype=torch.float64)}


def arguments(case, x) -> tuple:
    return (x["x"],)


def compared(case) -> np.ndarray:
    """The keys at or before each query, j <= i + m - n: after it the shift reads no logit."""
    n, m = int(case["n"]), int(case["m"])
    i, j = np.indices((n, m))
    return j <= i + m - n


def definition(case, x) -> np.ndarray:
    """out[i, j] = x[i, j + n - 1 - i]: the distance (m - n + i) - j is column j + n - 1 - i."""
    x = x["x"].numpy()
    n, m = x.shape[-2:]
    i, j = np.indices((n, m))
    return read(x, i, j + n - 1 - i)


def wrong_side(case, x) -> np.ndarray:
    """Pad on the right, reshape to (m + 1, n), drop the first row, reshape to (n, m). Padded
    row i holds x[i, c] at c and the pad at m; output cell (i, j) is flat element n + i·m + j =
    i·(m + 1) + (n - i + j), so on the compared cells it reads x[i, j + n - i] (one column
    right) and the pad (0) at distance 0."""
    x = x["x"].numpy()
    n, m = x.shape[-2:]
    i, j = np.indices((n, m))
    return read(x, i, j + n - i)  # column m at distance 0: outside, so 0


def wrong_row(case, x) -> np.ndarray:
    """Pad on the left, reshape to (m + 1, n), keep the first m rows (drop the last), reshape to
    (n, m). Padded row i holds the pad at 0 and x[i, c - 1] at c; output cell (i, j) is flat
    element i·m + j = i·(m + 1) + (j - i): for j >= i the pad (0) at j = i and x[i, j - i - 1]
    after it, for j < i the previous row's padded column m + 1 + j - i, x[i - 1, m + j - i]."""
    x = x["x"].numpy()
    n, m = x.shape[-2:]
    i, j = np.indices((n, m))
    before = j < i
    return read(x, np.where(before, i - 1, i), np.where(before, m + j - i, j - i - 1))


def shifted(case, x, *, offset: int = 0, memory: bool = True, sign: int = 1) -> np.ndarray:
    """x[i, j + sign·(n - 1 - i) + offset], 0 outside x; ``memory=False`` takes query i at
    position i (the distance i - j, column j + m - 1 - i)."""
    x = x["x"].numpy()
    n, m = x.shape[-2:]
    i, j = np.indices((n, m))
    start = n if memory else m
    return read(x, i, j + sign * (start - 1 - i) + offset)


def increasing(case, x) -> np.ndarray:
    """R in increasing order: column c read as the distance c, so distance (m - n + i) - j is
    looked up at column m - n + i - j."""
    x = x["x"].numpy()
    n, m = x.shape[-2:]
    i, j = np.indices((n, m))
    return read(x, i, m - n + i - j)


def page_example(example: Example) -> PageCase:
    """The skew's numbers after n // 2 memory positions (at least one), as Transformer-XL
    orders them: m = n + memory columns, column c the distance query - key = m - 1 - c."""
    q, _, _, table_k, _ = example.tensors()
    n = example.n
    m = n + max(1, n // 2)  # keys: the memory, then the segment
    about = (
        f"after {m - n} memory positions, x[i, c] = q_i · a^K at the distance query - key "
        f"= {m} - 1 - c, from the view's q and w^K"
    )
    arrays = (("x", distance_logits(q, table_k, m)),)
    return PageCase((("n", n), ("m", m), ("heads", example.heads)), arrays, "fn(x)", about)


REL_SHIFT = Kind(
    name="rel-shift",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": definition(case, x)},
    bugs={
        "shifted the other way (x[i, j - (n - 1 - i)])": lambda c, x: shifted(c, x, sign=-1),
        "the pad on the wrong side (right instead of left)": wrong_side,
        "the wrong row dropped (the last instead of the first)": wrong_row,
        "the memory ignored (m taken as n: query i at position i, x[i, j + m - 1 - i])": (
            lambda c, x: shifted(c, x, memory=False)
        ),
        "one position off (x[i, j + n - 2 - i]: each key read one distance further)": (
            lambda c, x: shifted(c, x, offset=-1)
        ),
        "R taken in increasing order (column c as the distance c, not m - 1 - c)": increasing,
    },
    compared=compared,
    axes=("batch", "head", "query", "key"),
    page="rel_shift.py",
    order=2,
    example=page_example,
    mask_taken="Transformer-XL's shift takes no mask (cells past each query's last key are not "
    "compared)",
    pair="memory cell",
)

KIND = REL_SHIFT  # the checker's kind: relpos_core.check collects it
