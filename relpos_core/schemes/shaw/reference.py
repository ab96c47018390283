"""The ``shaw`` kind: relative attention with both terms (Shaw et al. 2018, eqs. 3-5).

    fn(q, k, v, table_k, table_v, clip, causal) -> z (b, h, n, d)
    q, k, v (b, h, n, d); tables (2 clip + 1, d), row clip(j - i, clip) + clip
    e_ij = q_i · (k_j + a^K_ij) / sqrt(d),  z_i = sum_j alpha_ij (v_j + a^V_ij)

The definition here is written out with numpy from the equations, independently of the
library's methods; each known bug is the same equations with one thing changed.
"""

from __future__ import annotations

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, PageCase, seeded

CONVENTION = (
    "fn(q, k, v, table_k, table_v, clip, causal) -> z (b, h, n, d): q, k, v (b, h, n, d); "
    "table_k, table_v (2·clip + 1, d), row clip(j - i, clip) + clip; "
    "e_ij = q_i·(k_j + a^K_ij)/√d, z_i = Σ_j α_ij (v_j + a^V_ij)"
)


def cases() -> list[dict[str, object]]:
    """The edges first: one position, two, the clip at and past n, three heads, both masks."""
    return [
        {"n": 1, "clip": 0, "heads": 1, "causal": False},
        {"n": 2, "clip": 1, "heads": 1, "causal": False},
        {"n": 5, "clip": 2, "heads": 3, "causal": False},
        {"n": 5, "clip": 2, "heads": 3, "causal": True},
        {"n": 4, "clip": 4, "heads": 2, "causal": False},
        {"n": 3, "clip": 7, "heads": 2, "causal": True},
    ]


def inputs(case) -> dict[str, torch.Tensor]:
    gen = seeded(case)
    n, clip, heads, d = int(case["n"]), int(case["clip"]), int(case["heads"]), 4
    draw = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)  # noqa: E731
    return {
        "q": draw(2, heads, n, d),
        "k": draw(2, heads, n, d),
        "v": draw(2, heads, n, d),
        "table_k": draw(2 * clip + 1, d),
        "table_v": draw(2 * clip + 1, d),
    }


def arguments(case, x) -> tuple:
    return (
        x["q"],
        x["k"],
        x["v"],
        x["table_k"],
        x["table_v"],
        int(case["clip"]),
        bool(case["causal"]),
    )


def attention(
    case,
    x,
    *,
    sign: int = 1,
    reach: int = 0,
    values: bool = True,
    scale_content: bool = True,
    scale_relative: bool = True,
    masked: bool = True,
) -> np.ndarray:
    """Eqs. 3-5 in numpy; the keywords change one thing each (the known bugs)."""
    q, k, v, tk, tv = (x[name].numpy() for name in ("q", "k", "v", "table_k", "table_v"))
    n, clip, d = q.shape[2], int(case["clip"]), q.shape[3]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    limit = clip - reach  # reach = 1: clipped one short
    row = np.clip(sign * (j - i), -limit, limit) + clip  # (i, j) -> table row
    a_k, a_v = tk[row], tv[row]  # (i, j, d)
    scale = 1 / np.sqrt(d)
    content = np.einsum("bhid,bhjd->bhij", q, k) * (scale if scale_content else 1)
    relative = np.einsum("bhid,ijd->bhij", q, a_k) * (scale if scale_relative else 1)
    logits = content + relative
    if masked and case["causal"]:
        logits = np.where(j <= i, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    z = np.einsum("bhij,bhjd->bhid", weights, v)
    return z + np.einsum("bhij,ijd->bhid", weights, a_v) if values else z


def page_example(example: Example) -> PageCase:
    """The view's q, k, v, w^K, w^V; clip = the view's k, causal as the mask."""
    q, k, v, table_k, table_v = example.tensors()
    clip = (table_k.shape[0] - 1) // 2
    case = {"n": example.n, "clip": clip, "heads": example.heads, "causal": example.causal}
    arrays = (("q", q), ("k", k), ("v", v), ("table_k", table_k), ("table_v", table_v))
    call = f"fn(q, k, v, table_k, table_v, clip={clip}, causal={example.causal})"
    return PageCase(tuple(case.items()), arrays, call)


SHAW = Kind(
    name="shaw",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": attention(case, x)},
    bugs={
        "the tables are read at i - j instead of j - i": lambda c, x: attention(c, x, sign=-1),
        "the distance is clipped one short (to ±(clip - 1))": lambda c, x: attention(c, x, reach=1),
        "the value term sum_j alpha_ij a^V_ij is missing": lambda c, x: attention(
            c, x, values=False
        ),
        "only the content term q·k is divided by √d": lambda c, x: attention(
            c, x, scale_relative=False
        ),
        "only the relative term q·a^K is divided by √d": lambda c, x: attention(
            c, x, scale_content=False
        ),
        "causal is ignored: queries see keys ahead": lambda c, x: attention(c, x, masked=False),
    },
    axes=("batch", "head", "query", "channel"),
    page="attention.py",
    order=0,
    example=page_example,
    mask_taken="its causal part is the call's causal={causal}",
    pair="query row",
)

KIND = SHAW  # the checker's kind: relpos_core.check collects it
