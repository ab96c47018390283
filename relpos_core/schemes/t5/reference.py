"""The ``t5-bucket`` kind: T5's relative position buckets (Raffel et al. 2020, Sec. 2.1, and
``_relative_position_bucket`` of its reference code, mesh-tensorflow, as HF transformers).

    fn(relative_position, bidirectional, num_buckets, max_distance) -> buckets (same shape)
    relative_position = key position - query position (int64 tensor, any shape)

Bidirectional: half the buckets per direction, num_buckets/2 added for keys after the query;
otherwise the future shares bucket 0 and all buckets count the past. Of the buckets of a
direction, the first half (max_exact = num_buckets // 2 of them) are the exact distances
0 .. max_exact - 1; a distance n beyond gets

    max_exact + int(log(n / max_exact) / log(max_distance / max_exact) · (num_buckets - max_exact))

truncated (an int cast, not rounded), clamped to num_buckets - 1. Buckets are integers: they
are compared exactly.

The definition here is written out with numpy from the formula (float64), independently of the
library's ``t5_bucket``; at the distances of these cases it gives the same buckets as the
reference code's float32 logarithm. Each known bug is the same with one thing changed.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, PageCase

CONVENTION = (
    "fn(relative_position, bidirectional, num_buckets, max_distance) -> buckets: "
    "relative_position = key position - query position (int64 tensor, any shape), "
    "T5's _relative_position_bucket: bidirectional halves the buckets (num_buckets/2 added for "
    "keys after the query), exact buckets below max_exact = num_buckets // 2, log-spaced "
    "(truncated) up to max_distance, clamped to num_buckets - 1"
)
SIZES = ((32, 128), (8, 16), (64, 256))  # (num_buckets, max_distance)
REACH = 300  # the 1-D cases: distances -300 .. 300
GRID = 20  # the grid case: j - i for i, j < 20


def cases() -> list[dict[str, object]]:
    """A small grid of j - i first (its verdict names the distances), then every distance
    -300..300 at each size, both directions; every size reaches past max_distance."""
    grid = {"distances": f"j - i, i, j < {GRID}", "bidirectional": True}
    line = {"distances": f"-{REACH}..{REACH}"}
    return [{**grid, "num_buckets": 8, "max_distance": 16}] + [
        {**line, "bidirectional": bidirectional, "num_buckets": b, "max_distance": m}
        for b, m in SIZES
        for bidirectional in (True, False)
    ]


def inputs(case) -> dict[str, torch.Tensor]:
    if str(case["distances"]).startswith("j - i"):
        positions = torch.arange(GRID, dtype=torch.int64)
        return {"relative_position": positions[None, :] - positions[:, None]}  # (query, key)
    return {"relative_position": torch.arange(-REACH, REACH + 1, dtype=torch.int64)}


def arguments(case, x) -> tuple:
    return (
        x["relative_position"],
        bool(case["bidirectional"]),
        int(case["num_buckets"]),
        int(case["max_distance"]),
    )


def buckets(
    case,
    x,
    *,
    sign: int = 1,
    halved: bool = True,
    rounded: bool = False,
    clamped: bool = True,
    exact_share: int = 2,
) -> np.ndarray:
    """The bucketing in numpy; the keywords change one thing each (the known bugs).

    >>> line = {"bidirectional": True, "num_buckets": 32, "max_distance": 128}
    >>> r = torch.tensor([-200, -20, -8, -7, -1, 0, 1, 7, 8, 20, 200])
    >>> buckets(line, {"relative_position": r}).tolist()
    [15, 10, 8, 7, 1, 0, 17, 23, 24, 26, 31]
    """
    relative = sign * x["relative_position"].numpy().astype(np.int64)
    num_buckets, max_distance = int(case["num_buckets"]), int(case["max_distance"])
    bucket = np.zeros_like(relative)
    if case["bidirectional"]:
        if halved:
            num_buckets //= 2
        bucket += (relative > 0) * num_buckets  # keys after the query: the second half
        distance = np.abs(relative)
    else:
        distance = np.maximum(-relative, 0)  # keys after the query share bucket 0
    max_exact = num_buckets // exact_share
    scaled = (
        np.log(np.maximum(distance, 1) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    )
    large = max_exact + (np.round(scaled) if rounded else np.trunc(scaled)).astype(np.int64)
    if clamped:
        large = np.minimum(large, num_buckets - 1)
    return bucket + np.where(distance < max_exact, distance, large)


PAGE_BUCKETS, PAGE_MAX, PAGE_GRID_MIN = 16, 12, 16


def page_example(example: Example) -> PageCase:
    """The grid of j - i over max(n, 16) positions, both directions unless causal, 16 buckets
    and max distance 12: small, so that the grid reaches every branch of the bucketing and each
    known bug gives numbers of its own."""
    causal, side = example.causal, max(example.n, PAGE_GRID_MIN)
    grid = np.arange(side)[None, :] - np.arange(side)[:, None]  # (query i, key j): j - i
    case = {"distances": f"j - i, i, j < {side}", "bidirectional": not causal,
            "num_buckets": PAGE_BUCKETS, "max_distance": PAGE_MAX}  # fmt: skip
    call = (
        f"fn(relative_position, bidirectional={not causal}, num_buckets={PAGE_BUCKETS}, "
        f"max_distance={PAGE_MAX})"
    )
    about = (
        f"the distances j - i over {side} positions (at least {PAGE_GRID_MIN}), both "
        f"directions unless the sidebar's mask is causal; {PAGE_BUCKETS} buckets and max "
        f"distance {PAGE_MAX}, small, so that the grid reaches every branch of the bucketing"
    )
    arrays = (("relative_position", grid),)
    return PageCase(tuple(case.items()), arrays, call, about, False)


T5_BUCKET = Kind(
    name="t5-bucket",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": buckets(case, x)},
    bugs={
        "the direction of j - i is reversed (query - key)": lambda c, x: buckets(c, x, sign=-1),
        "the buckets are not halved between the two directions": lambda c, x: buckets(
            c, x, halved=False
        ),
        "log buckets rounded instead of truncated": lambda c, x: buckets(c, x, rounded=True),
        "distances past max_distance not clamped to the last bucket": lambda c, x: buckets(
            c, x, clamped=False
        ),
        "the exact range uses all num_buckets instead of half": lambda c, x: buckets(
            c, x, exact_share=1
        ),
    },
    exact=True,
    axes=("query", "key"),  # the grid case; a line of distances is named by index
    page="family.py",
    order=4,
    example=page_example,
    mask_taken="its causal part is the call's bidirectional={bidirectional}",
)

KIND = T5_BUCKET  # the checker's kind: relpos_core.check collects it
