"""The ``rope`` kind: rotary position embedding (Su et al. 2021, RoFormer, eqs. 14-16 and 34).

    fn(x, positions, base) -> x rotated (b, h, n, d)
    x (b, h, n, d) float64, positions (n,) int64

Each pair of channels of the vector at position p turns by the angle p·theta_m,
theta_m = base^(-2m/d), m = 0 .. d/2 - 1, as [cos -sin; sin cos]. Two layouts of the pairs are
right, and the verdict names the one an implementation follows:

    the two halves (GPT-NeoX / Llama)        pair m is channels (m, m + d/2)
    neighbouring pairs (GPT-J / RoFormer)    pair m is channels (2m, 2m + 1)

At d = 2 the two are the same: the first case (one position, one pair) gives one reference
and decides nothing, and catches the bugs that do not depend on the layout (a wrong-way turn,
positions ignored), named without one; from d = 4 the layouts part, the first case there
decides the layout, and the bugs that depend on it are named with the layout of their pairs.
The definition here is written out with numpy from the equations, independently of the
library's ``rotate``; each known bug is the same with one thing changed.
"""

from __future__ import annotations

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, PageCase, seeded

HALVES = "the two halves (GPT-NeoX / Llama)"
NEIGHBOURS = "neighbouring pairs (GPT-J / RoFormer)"
LAYOUTS = (HALVES, NEIGHBOURS)
CONVENTION = (
    "fn(x, positions, base) -> x rotated (b, h, n, d): x (b, h, n, d) float64, positions (n,) "
    "int64; pair m of the vector at position p turns by p·theta_m, theta_m = base^(-2m/d), "
    f"as [cos -sin; sin cos]; pairs (m, m + d/2), {HALVES}, or (2m, 2m + 1), {NEIGHBOURS}"
)


def cases() -> list[dict[str, object]]:
    """One position and one pair first (the layouts agree there), then d = 4 (where they part)
    and d = 8; the positions never start at 0. Only the first case has d = 2: a later one would
    name no layout after one was decided."""
    rows = [(1, 2, 10000.0), (3, 4, 10000.0), (3, 4, 100.0), (5, 8, 10000.0), (5, 8, 100.0)]
    return [{"n": n, "d": d, "base": base, "positions": f"7..{7 + n - 1}"} for n, d, base in rows]


def inputs(case) -> dict[str, torch.Tensor]:
    n, d = int(case["n"]), int(case["d"])
    first = int(str(case["positions"]).split("..")[0])
    return {
        "x": torch.randn(2, 2, n, d, generator=seeded(case), dtype=torch.float64),
        "positions": torch.arange(first, first + n, dtype=torch.int64),
    }


def arguments(case, x) -> tuple:
    return (x["x"], x["positions"], float(case["base"]))


def rotated(
    case,
    x,
    *,
    layout: str,
    frequencies: str | None = None,
    step: int = 2,
    sign: int = 1,
    from_zero: bool = False,
) -> np.ndarray:
    """Eqs. 14-16 in numpy, channel by channel: out_c = x_c cos(p θ_f(c)) ∓ x_partner(c)
    sin(p θ_f(c)), with the partner and the pair index f(c) of ``layout`` (and ``frequencies``:
    the pair index of that layout instead, one known bug); the other keywords change one thing
    each (the known bugs).

    >>> one = {"x": torch.tensor([[1.0, 0.0]]), "positions": torch.tensor([1])}  # θ_0 = 1
    >>> rotated({"base": 10000.0}, one, layout=HALVES).round(6).tolist()  # (cos 1, sin 1)
    [[0.540302, 0.841471]]
    """
    v = x["x"].numpy()
    d = v.shape[-1]
    half, c = d // 2, np.arange(d)
    p = (
        np.arange(v.shape[-2], dtype=np.float64)
        if from_zero
        else x["positions"].numpy().astype(np.float64)
    )
    if layout == HALVES:
        partner, first = (c + half) % d, c < half
    else:
        partner, first = c ^ 1, c % 2 == 0
    pair = c % half if (frequencies or layout) == HALVES else c // 2
    theta = float(case["base"]) ** (-step * pair / d)  # step 1: base^(-m/d), one known bug
    angle = sign * p[:, None] * theta[None, :]  # (n, d)
    turn = np.where(first, -1.0, 1.0)  # [cos -sin; sin cos]
    return v * np.cos(angle) + turn * v[..., partner] * np.sin(angle)


SAME_AT_D2 = "either layout (the same at d = 2)"


class SameAtD2(dict):
    """The one reference at d = 2, also found under either layout's name (a layout decided
    elsewhere, as for an uploaded output, still reads it)."""

    def __missing__(self, key: str) -> np.ndarray:
        if key in LAYOUTS:
            return self[SAME_AT_D2]
        raise KeyError(key)


def references(case, x) -> dict[str, np.ndarray]:
    """Both layouts, or one reference at d = 2 where they are the same (no layout decided)."""
    if int(case["d"]) == 2:
        return SameAtD2({SAME_AT_D2: rotated(case, x, layout=HALVES)})
    return {layout: rotated(case, x, layout=layout) for layout in LAYOUTS}


MIXED = "the two layouts mixed (pairs of one layout, frequencies of the other)"
EVERY_DIMENSION = "frequencies over every dimension instead of every pair (base^(-m/d))"


def bugs() -> dict[str, object]:
    """The bugs caught at d = 2, named alone; those that need d = 4, once per layout of the
    pairs, named ``<bug>, with <layout>``."""
    found = {
        "the rotation is the wrong way (angle -theta)": lambda c, x: rotated(
            c, x, layout=HALVES, sign=-1
        ),
        "positions ignored (counted from 0)": lambda c, x: rotated(
            c, x, layout=HALVES, from_zero=True
        ),
    }
    for layout, other in zip(LAYOUTS, LAYOUTS[::-1], strict=True):
        found[f"{EVERY_DIMENSION}, with {layout}"] = lambda c, x, layout=layout: rotated(
            c, x, layout=layout, step=1
        )
        found[f"{MIXED}, with {layout}"] = lambda c, x, layout=layout, other=other: rotated(
            c, x, layout=layout, frequencies=other
        )
    return found


PAGE_BASE = 10_000.0
PAGE_FIRST = 10  # the first position: an implementation that counts from 0 shows


def page_example(example: Example) -> PageCase:
    """The view's q as x at positions 10..n+9 (not from 0), base 10000."""
    q = example.tensors()[0]
    n, last = example.n, PAGE_FIRST + example.n - 1
    case = {"n": n, "d": q.shape[-1], "base": PAGE_BASE, "positions": f"{PAGE_FIRST}..{last}"}
    arrays = (("x", q), ("positions", np.arange(PAGE_FIRST, last + 1, dtype=np.int64)))
    about = f"x is the view's q; the positions start at {PAGE_FIRST}, not 0"
    return PageCase(tuple(case.items()), arrays, f"fn(x, positions, base={PAGE_BASE})", about)


ROPE = Kind(
    name="rope",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=references,
    bugs=bugs(),
    axes=("batch", "head", "position", "channel"),
    page="family.py",
    order=5,
    example=page_example,
    mask_taken="RoPE rotates each position alone: it takes no mask",
    pair="position rows",
    first_position=PAGE_FIRST,
)

KIND = ROPE  # the checker's kind: relpos_core.check collects it
