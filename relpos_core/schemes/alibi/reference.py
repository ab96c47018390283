"""The ``alibi`` kind: ALiBi's bias (Press, Smith, Lewis 2022, Sec. 3 and its code).

    fn(heads, n) -> bias (heads, n, n), bias[h, i, j] = -m_h (i - j) for key j <= query i

Head h = 1..H has slope m_h = 2^(-8h/H) when H is a power of two (1/2, 1/4, ..., 1/256 for
8 heads). Otherwise the paper's code takes the slopes of the closest smaller power of two,
then every other slope of twice that many heads (3 heads: 1/16, 1/256, then 1/4). Only the
causal cells j <= i are compared; a bias is added before the softmax, so BLOOM's form m_h · j
(the same bias plus m_h · i, one number per row) is right too.

The definition here is written out with numpy from the paper, independently of the library's
``alibi_slopes``; each known bug is the same with one thing changed.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, OwnControl, PageCase

CONVENTION = (
    "fn(heads, n) -> bias (heads, n, n): bias[h, i, j] = -m_h·(i - j) for key j ≤ query i "
    "(the cells compared); m_h = 2^(-8h/H), h = 1..H, for H a power of two, else the closest "
    "smaller power of two's slopes, then every other slope of twice that many"
)


def cases() -> list[dict[str, object]]:
    """Powers of two first (one head, two, eight), then head counts that are not; each at one
    position, four and seven."""
    return [{"heads": heads, "n": n} for heads in (1, 2, 8, 3, 6, 12) for n in (1, 4, 7)]


def inputs(case) -> dict[str, torch.Tensor]:
    return {}  # the arguments are the two sizes


def arguments(case, x) -> tuple:
    return (int(case["heads"]), int(case["n"]))


def slopes(
    heads: int, *, direct: bool = False, first: int = 1, reverse: bool = False
) -> np.ndarray:
    """m_1..m_H in float64; the keywords change one thing each (the known bugs).

    >>> slopes(8).tolist()
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    >>> slopes(3).tolist()
    [0.0625, 0.00390625, 0.25]
    """

    def geometric(count: int) -> list[float]:  # 2^(-8h/count), h = first .. first + count - 1
        return [2.0 ** (-8.0 * h / count) for h in range(first, first + count)]

    closest = 2 ** int(math.floor(math.log2(heads)))
    if direct or closest == heads:
        found = geometric(heads)
    else:
        found = geometric(closest) + geometric(2 * closest)[0::2][: heads - closest]
    return np.array(found[::-1] if reverse else found, dtype=np.float64)


def bias(case, x, *, sign: int = -1, **keywords) -> np.ndarray:
    """sign · m_h (i - j) for every head and pair: (heads, n, n)."""
    n = int(case["n"])
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    m = slopes(int(case["heads"]), **keywords)
    return sign * m[:, None, None] * (i - j)[None].astype(np.float64)


PAGE_HEADS = (1, 2, 3, 4, 6, 8, 12)  # a page's own choice: most are not powers of two
PAGE_HEADS_DEFAULT = 6


def page_example(example: Example) -> PageCase:
    """A head count of the page's own (not a power of two by default, as no sidebar choice is)
    and n: ALiBi's inputs are sizes, not tensors."""
    n, heads = example.n, example.own
    about = (
        f"two sizes: n = {n} and a head count of this page's own, {heads} (the sidebar's are "
        "powers of two, where the paper's slope rule for other counts never shows)"
    )
    return PageCase((("heads", heads), ("n", n)), (), f"fn(heads={heads}, n={n})", about, False)


ALIBI = Kind(
    name="alibi",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": bias(case, x)},
    bugs={
        "the slope sign is flipped (+m_h (i - j))": lambda c, x: bias(c, x, sign=1),
        "slopes wrong for a head count that is not a power of two (2^(-8h/H) used directly)": (
            lambda c, x: bias(c, x, direct=True)
        ),
        "heads counted from 0 (m_h = 2^(-8(h-1)/H), the first slope 1)": lambda c, x: bias(
            c, x, first=0
        ),
        "slopes in reverse head order": lambda c, x: bias(c, x, reverse=True),
    },
    compared=lambda case: np.tril(np.ones((int(case["n"]), int(case["n"])), bool)),
    row_constant=True,
    axes=("head", "query", "key"),
    page="family.py",
    order=3,
    example=page_example,
    control=OwnControl(
        "heads (H in m_h = 2^(-8h/H))",
        PAGE_HEADS,
        "check_alibi_heads",
        PAGE_HEADS_DEFAULT,
        help="Not a power of two by default: the paper's slopes then take the closest power "
        "of two's, then every other slope of twice that, which is where implementations differ.",
    ),
    mask_taken="ALiBi's bias takes no mask (cells j > i are not compared: the causal models it "
    "was made for never read them)",
)

KIND = ALIBI  # the checker's kind: relpos_core.check collects it
