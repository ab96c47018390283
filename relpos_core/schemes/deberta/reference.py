"""The ``deberta`` kind: DeBERTa's position terms (He et al. 2021, Sec. 3.1, eq. 4, with
DeBERTa-v2's log buckets, as transformers' ``DisentangledSelfAttention``).

    fn(q, k, pos_key, pos_query, buckets, max_position) -> (b, h, n, n)
    q, k (b, h, n, d): the content query and key per head
    pos_key, pos_query (h, 2 span, d): the relative embeddings projected per head (P^K, P^Q),
        span = buckets when buckets > 0, else max_position
    out[..., i, j] = ( q_i · P^K[c(i, j)]  +  k_j · P^Q[c(i, j)] ) / sqrt(3 d)
                       content-to-position    position-to-content

The row read for the pair (i, j) is c(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1): the
relative position is query minus key, the reverse of Shaw's j - i. transformers writes the p2c
row as clamp(-bucket(j - i) + span, ...), the same row because the bucket is odd. Without
buckets, bucket(r) = r; with them (mid = buckets // 2)

    bucket(r) = r                                                        for |r| <= mid
              = sign(r) (mid + ceil(log(|r| / mid) / log((max_position - 1) / mid) (mid - 1)))

so the rows run to bucket(max_position - 1) = span - 1 and farther distances are clamped to the
table's ends. The divisor is sqrt(3 d): the content term q_i · k_j, added beside these two, has
it too (three terms of the same spread).

The definition here is written out with numpy from the formula, in float64, independently of
the scheme's ``log_bucket`` and ``relative_rows``; transformers computes the bucket's logarithm
in float32, and at the distances of these cases and of the page both give the same buckets
(tests/check/test_deberta_kind.py checks it through transformers). Each known bug is the same
with one thing changed.

>>> rows(5, 0, 2).tolist()  # no buckets, span 2: i - j + 2, clamped to the rows 0..3
[[2, 1, 0, 0, 0], [3, 2, 1, 0, 0], [3, 3, 2, 1, 0], [3, 3, 3, 2, 1], [3, 3, 3, 3, 2]]
>>> log_bucket(np.array([-20, -9, -4, -1, 0, 3, 4, 5, 9, 15, 16, 40]), 8, 16).tolist()
[-8, -6, -4, -1, 0, 3, 4, 5, 6, 7, 8, 10]
"""

from __future__ import annotations

import numpy as np
import torch

from relpos_core.check.kind import Example, Kind, OwnControl, PageCase, seeded

CONVENTION = (
    "fn(q, k, pos_key, pos_query, buckets, max_position) -> (b, h, n, n): q, k (b, h, n, d); "
    "pos_key, pos_query (h, 2·span, d), the relative embeddings projected per head, span = "
    "buckets if buckets > 0 else max_position; out[i, j] = (q_i·pos_key[c(i, j)] + "
    "k_j·pos_query[c(i, j)]) / √(3d), the two position terms before the softmax; c(i, j) = "
    "clamp(bucket(i - j) + span, 0, 2·span - 1), i - j query minus key; bucket(r) = r for "
    "|r| ≤ mid = buckets // 2 (every r without buckets), else sign(r)·(mid + "
    "ceil(log(|r|/mid) / log((max_position - 1)/mid)·(mid - 1))), DeBERTa-v2's log buckets"
)


def cases() -> list[dict[str, object]]:
    """One position first, then no buckets within the span and past it (the clamp), then log
    buckets past max_position (the clamp again), within it, and past it with more buckets;
    several heads, d from 2 to 4, the sequence length never max_position."""
    rows = [
        (1, 1, 2, 0, 2),
        (3, 2, 3, 0, 4),
        (7, 2, 4, 0, 3),
        (9, 3, 2, 4, 6),
        (24, 2, 4, 8, 32),
        (40, 2, 3, 16, 24),
    ]
    keys = ("n", "heads", "d", "buckets", "max_position")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def span_of(case) -> int:
    return int(case["buckets"]) or int(case["max_position"])


def tables(case, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """pos_key and pos_query, (h, 2 span, d) each: unit normal, as projected rows spread."""
    shape = (int(case["heads"]), 2 * span_of(case), int(case["d"]))
    return {
        name: torch.randn(*shape, generator=gen, dtype=torch.float64)
        for name in ("pos_key", "pos_query")
    }


def inputs(case) -> dict[str, torch.Tensor]:
    gen = seeded(case)
    n, heads, d = int(case["n"]), int(case["heads"]), int(case["d"])
    q = torch.randn(2, heads, n, d, generator=gen, dtype=torch.float64)
    k = torch.randn(2, heads, n, d, generator=gen, dtype=torch.float64)
    return {"q": q, "k": k, **tables(case, gen)}


def arguments(case, x) -> tuple:
    return (
        x["q"],
        x["k"],
        x["pos_key"],
        x["pos_query"],
        int(case["buckets"]),
        int(case["max_position"]),
    )


def log_bucket(relative: np.ndarray, buckets: int, top: int) -> np.ndarray:
    """DeBERTa-v2's bucket of each relative position r (int64): r where |r| <= mid, else
    sign(r)·(mid + ceil(log(|r|/mid) / log((top - 1)/mid)·(mid - 1))), in float64."""
    mid = buckets // 2
    size = np.abs(relative)
    with np.errstate(divide="ignore", invalid="ignore"):  # the log branch where |r| <= mid
        log = mid + np.ceil(np.log(size / mid) / np.log((top - 1) / mid) * (mid - 1))
        bucket = np.where(size <= mid, relative, np.sign(relative) * log)
    return bucket.astype(np.int64)


def rows(
    n: int, buckets: int, max_position: int, *, sign: int = 1, log_top: int | None = None,
    clamped: bool = True,
) -> np.ndarray:  # fmt: skip
    """c(i, j), (n, n) int64: the row of the tables the pair (i, j) reads; the keywords change
    one thing each (the known bugs): ``sign`` -1 reads j - i, ``log_top`` replaces
    max_position in the logarithm, ``clamped=False`` wraps a row past either end around."""
    span = buckets or max_position
    i, j = np.indices((n, n))
    relative = sign * (i - j)
    if buckets:
        relative = log_bucket(relative, buckets, log_top or max_position)
    row = relative + span
    return np.clip(row, 0, 2 * span - 1) if clamped else row % (2 * span)


def terms(
    case, x, *, c2p_sign: int = 1, p2c_sign: int = 1, share: int = 3, log_top: int | None = None,
    clamped: bool = True,
) -> np.ndarray:  # fmt: skip
    """(q_i · P^K[c(i, j)] + k_j · P^Q[c(i, j)]) / sqrt(share · d), (b, h, n, n); each keyword
    changes one thing (the known bugs)."""
    q, k, pos_key, pos_query = (x[name].numpy() for name in ("q", "k", "pos_key", "pos_query"))
    n, d = q.shape[2], q.shape[3]
    buckets, top = int(case["buckets"]), int(case["max_position"])

    def row(sign: int) -> np.ndarray:
        return rows(n, buckets, top, sign=sign, log_top=log_top, clamped=clamped)

    c2p = np.einsum("bhid,hijd->bhij", q, pos_key[:, row(c2p_sign)])  # q_i · P^K[c(i, j)]
    p2c = np.einsum("bhjd,hijd->bhij", k, pos_query[:, row(p2c_sign)])  # k_j · P^Q[c(i, j)]
    return (c2p + p2c) / np.sqrt(share * d)


PAGE_MAX = 16  # the page's max_position: the log buckets and the table's ends show at its n
PAGE_BUCKETS = (0, 4, 8, 16)
PAGE_BUCKETS_DEFAULT = 8


def page_rows_words(n: int, buckets: int) -> str:
    """What the rows c(i, j) do at the page's n, in words: log buckets reached or not, the
    table's ends passed or not."""
    mid = buckets // 2
    if not buckets:
        parts = ["each distance i - j reads its own row"]
    elif n - 1 > mid:
        parts = [
            f"distances |i - j| past {mid} (half the buckets) read log-spaced rows, the log buckets"
        ]
    else:
        parts = [f"no |i - j| here passes {mid} (half the buckets): each reads its own row"]
    i, j = np.indices((n, n))
    past = rows(n, buckets, PAGE_MAX) != rows(n, buckets, PAGE_MAX, clamped=False)
    ends = []
    if (past & (i > j)).any():
        ends.append(f"i - j ≥ {int((i - j)[past & (i > j)].min())}")
    if (past & (i < j)).any():
        ends.append(f"i - j ≤ {int((i - j)[past & (i < j)].max())}")
    if ends:
        parts.append(f"the rows of {' and '.join(ends)} fall outside the table and are clamped to "
                     "its end rows")  # fmt: skip
    else:
        parts.append("no distance here lies past the table's ends (a larger n reaches them)")
    return ", and ".join(parts)


def page_example(example: Example) -> PageCase:
    """The view's q and k; pos_key and pos_query seeded random draws (the view holds no
    DeBERTa tables), the same at every n; buckets of the page's own, max_position 16."""
    q, k, *_ = example.tensors()
    buckets = PAGE_BUCKETS_DEFAULT if example.own is None else int(example.own)
    heads, d = q.shape[1], q.shape[3]
    case = {"n": example.n, "heads": heads, "d": d, "buckets": buckets, "max_position": PAGE_MAX}
    fixed = {key: case[key] for key in ("heads", "d", "buckets", "max_position")}
    drawn = tables(case, seeded(fixed, salt=1))
    arrays = (
        ("q", q), ("k", k), ("pos_key", drawn["pos_key"].numpy()),
        ("pos_query", drawn["pos_query"].numpy()),
    )  # fmt: skip
    span = buckets or PAGE_MAX
    about = (
        f"pos_key and pos_query ({heads}, {2 * span}, {d}) are seeded random draws (the view "
        f"holds no DeBERTa tables); {buckets} buckets, this page's own choice, and max_position "
        f"{PAGE_MAX}; {page_rows_words(example.n, buckets)}"
    )
    call = f"fn(q, k, pos_key, pos_query, buckets={buckets}, max_position={PAGE_MAX})"
    return PageCase(tuple(case.items()), arrays, call, about)


DEBERTA = Kind(
    name="deberta",
    convention=CONVENTION,
    cases=cases,
    inputs=inputs,
    arguments=arguments,
    references=lambda case, x: {"the definition": terms(case, x)},
    bugs={
        "the relative position's sign is flipped (Shaw's j - i read instead of i - j)": (
            lambda c, x: terms(c, x, c2p_sign=-1, p2c_sign=-1)
        ),
        "the position-to-content row alone is flipped (p2c reads bucket(j - i) + span)": (
            lambda c, x: terms(c, x, p2c_sign=-1)
        ),
        "divided by √d instead of √(3d)": lambda c, x: terms(c, x, share=1),
        "divided by √(2d) instead of √(3d)": lambda c, x: terms(c, x, share=2),
        "the log buckets are built from the sequence length instead of max_position "
        "(log((n - 1)/mid))": lambda c, x: terms(c, x, log_top=int(c["n"])),
        "the rows are not clamped to the table's ends (a row past either end wraps around)": (
            lambda c, x: terms(c, x, clamped=False)
        ),
    },
    axes=("batch", "head", "query", "key"),
    page="family.py",
    order=6,
    example=page_example,
    control=OwnControl(
        f"position_buckets (0: none; max_position = {PAGE_MAX})",
        PAGE_BUCKETS,
        "check_deberta_buckets",
        PAGE_BUCKETS_DEFAULT,
        help="0: the table has 2·max_position rows, one per distance i - j from -max_position "
        "to max_position - 1. With buckets it has 2·buckets rows: distances past half the "
        "buckets read log-spaced rows up to max_position. Either way, farther distances read "
        "the table's first or last row (the clamp).",
    ),
    mask_taken="its position terms take no mask (DeBERTa's mask applies to the sum of the "
    "three terms, after them), so every pair (i, j) is compared",
)

KIND = DEBERTA  # the checker's kind: relpos_core.check collects it
