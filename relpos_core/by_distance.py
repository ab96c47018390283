"""What learned (or configured) position parameters give each distance r = j - i.

A model's position parameters are small tables; what attention receives is the table read at
every distance the sequence has, r = -(n - 1), ..., n - 1, and then laid out as the (n, n) matrix
that indexes it by r = j - i. Everything here is that reading, for T5's bucketed bias (one
scalar per head and bucket), Shaw et al.'s clipped tables (a vector per clipped distance, shared
by the heads), ALiBi's slopes and RoPE's frequencies; and a rule that sorts heads by the shape of
their bias. Plain definitions, small tensors: every function takes n up to ``MAX_N``.
"""

from __future__ import annotations

import math

import torch

from relpos_core.checks import check_bool, check_int, check_tensor
from relpos_core.schemes.t5 import t5_bucket

MAX_N = 2**16  # distances per call: (2n - 1) x heads values, never an (n, n) table per head
MAX_TRAINING_LENGTH = 2**20  # positions: 2 * 2**20 distances bucketed at most


def distances(n: int) -> torch.Tensor:
    """Every distance r = j - i of a length-n sequence, ascending: int64 (2n - 1,).

    >>> distances(3).tolist()
    [-2, -1, 0, 1, 2]
    """
    n = check_int("n (sequence length)", n, 1, MAX_N)
    return torch.arange(-(n - 1), n)


def t5_bias_by_distance(
    bias: torch.Tensor, n: int, bidirectional: bool, max_distance: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(bucket(r), b_h[bucket(r)]) for every r of ``distances(n)``: int64 (2n - 1,) and
    (heads, 2n - 1), from T5's table ``bias`` (num_buckets, heads) as checkpoints store it.

    A unidirectional (decoder) stack puts every r > 0 in bucket 0, as T5 does; a causal mask
    hides those keys anyway.

    >>> table = torch.arange(8.0)[:, None]  # 8 buckets, 1 head, bias = bucket number
    >>> t5_bias_by_distance(table, 3, True, 16)[1].tolist()
    [[2.0, 1.0, 0.0, 5.0, 6.0]]
    """
    check_tensor("bias", bias, 2)
    num_buckets = bias.shape[0]
    r = distances(n)
    bucket = t5_bucket(r, check_bool("bidirectional", bidirectional), num_buckets, max_distance)
    return bucket, bias.to(torch.float64)[bucket].T  # (h, 2n-1)


def bucket_spans(bucket: torch.Tensor, r: torch.Tensor) -> list[tuple[int, int, int]]:
    """(bucket, first r, last r) of each run of equal buckets along ascending ``r``.

    >>> bucket, _ = t5_bias_by_distance(torch.zeros(8, 1), 6, True, 16)
    >>> bucket_spans(bucket, distances(6))
    [(2, -5, -2), (1, -1, -1), (0, 0, 0), (5, 1, 1), (6, 2, 5)]
    """
    spans: list[tuple[int, int, int]] = []
    for b, d in zip(bucket.tolist(), r.tolist(), strict=True):
        if spans and spans[-1][0] == b:
            spans[-1] = (b, spans[-1][1], d)
        else:
            spans.append((b, d, d))
    return spans


def table_by_distance(table: torch.Tensor, n: int) -> torch.Tensor:
    """Shaw et al.'s w_clip(r, k) for every r of ``distances(n)``: (2n - 1, d), from a table
    (2k + 1, d) whose row k + r holds distance r.

    >>> table_by_distance(torch.tensor([[-1.0], [0.0], [1.0]]), 3).flatten().tolist()
    [-1.0, -1.0, 0.0, 1.0, 1.0]
    """
    check_tensor("table", table, 2)
    rows = table.shape[0]
    if rows % 2 == 0:
        raise ValueError(f"table must have 2k + 1 rows (an odd count), got {rows}")
    k = rows // 2
    return table[distances(n).clamp(-k, k) + k]


def alibi_by_distance(slopes: torch.Tensor, n: int) -> torch.Tensor:
    """ALiBi's -m_h |r| for every head and r of ``distances(n)``: (heads, 2n - 1) float64.

    >>> alibi_by_distance(torch.tensor([0.5]), 2).tolist()
    [[-0.5, -0.0, -0.5]]
    """
    check_tensor("slopes", slopes, 1)
    return -slopes.to(torch.float64)[:, None] * distances(n).abs()[None].to(torch.float64)


def matrix_from_distances(values: torch.Tensor, n: int) -> torch.Tensor:
    """The (..., n, n) matrix whose cell (i, j) holds ``values[..., r]`` at r = j - i, from
    values over ``distances(n)`` (..., 2n - 1): what the logits receive.

    >>> matrix_from_distances(torch.tensor([-2.0, -1.0, 0.0, 1.0, 2.0]), 3).tolist()
    [[0.0, 1.0, 2.0], [-1.0, 0.0, 1.0], [-2.0, -1.0, 0.0]]
    """
    n = check_int("n (sequence length)", n, 1, 4096)
    if values.shape[-1] != 2 * n - 1:
        raise ValueError(f"values must have 2n - 1 = {2 * n - 1} distances, got {values.shape}")
    r = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # (i, j) -> j - i
    return values[..., r + n - 1]


def rope_wavelengths(inverse_frequencies: torch.Tensor) -> torch.Tensor:
    """Each rotary pair's wavelength 2π / θ_t in positions: the distance of one full turn.

    >>> rope_wavelengths(torch.tensor([1.0, 0.5])).tolist()  # doctest: +ELLIPSIS
    [6.28..., 12.56...]
    """
    check_tensor("inverse_frequencies", inverse_frequencies, 1)
    return 2 * math.pi / inverse_frequencies.to(torch.float64)


def trained_buckets(
    num_buckets: int, bidirectional: bool, max_distance: int, length: int
) -> torch.Tensor:
    """Which of T5's buckets a model trained on sequences of ``length`` ever used: bool
    (num_buckets,), True where some distance |r| <= length - 1 maps to the bucket. A bucket no
    training distance reaches gets no gradient and keeps its initial value (a causal model's
    keys after the query, bucket 0, are masked, but bucket 0 is r = 0's too).

    >>> trained_buckets(32, False, 128, 64).nonzero().flatten().tolist()[-3:]  # r = -63: 26
    [24, 25, 26]
    >>> trained_buckets(32, True, 128, 512).logical_not().nonzero().flatten().tolist()
    [16]

    (Bucket 16 of a bidirectional 32 is used by no distance at all: r > 0 starts at 17.)
    """
    length = check_int("training length", length, 1, MAX_TRAINING_LENGTH)
    reach = min(length - 1, check_int("max_distance", max_distance, 1, 2**40))  # beyond: last
    r = torch.arange(-reach, reach + 1)
    bucket = t5_bucket(r, check_bool("bidirectional", bidirectional), num_buckets, max_distance)
    used = torch.zeros(num_buckets, dtype=torch.bool)
    used[bucket] = True
    return used


# ---- heads by shape -----------------------------------------------------------------------------
LOCAL_REACH = 2  # |r| <= this is near
LOCAL_SHARE = 0.5  # a local head puts at least half its weight near
NOTICE = 0.1  # "near and far": at least a tenth of the weight near
FAVOUR = 2.0  # near favoured: a near key gets on average at least twice a far key's weight
ONE_SIDE_SHARE = 0.9  # a one-direction head puts at least this share of the rest on one side
SHAPES = (
    "local", "near and far", "looks back", "looks ahead", "long-range", "few far keys",
    "every key near",
)  # fmt: skip


def bias_weights(values: torch.Tensor, n: int, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(r, softmax of the bias over the keys one query sees) per head: the weights a query
    gives when every content score is equal, so position alone decides. The query is the middle
    one, (n - 1) // 2 (the last one, n - 1, when ``causal``): it sees r from -i to n - 1 - i.

    >>> r, w = bias_weights(torch.tensor([[0.0, 0.0, 0.0]]), 2, causal=False)
    >>> r.tolist(), w.tolist()
    ([0, 1], [[0.5, 0.5]])
    """
    i = n - 1 if check_bool("causal", causal) else (n - 1) // 2
    r = distances(n)
    seen = (r >= -i) & (r <= (0 if causal else n - 1 - i))
    return r[seen], torch.softmax(values.to(torch.float64)[:, seen], dim=-1)


def near_share(r: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """(heads,) the weight on keys within |r| <= LOCAL_REACH, from ``bias_weights``."""
    return weights[:, r.abs() <= LOCAL_REACH].sum(-1)


def head_shapes(values: torch.Tensor, n: int, causal: bool) -> list[str]:
    """Each head's shape from ``bias_weights`` at length n, read from two numbers: s, the share
    of its weight within |r| <= LOCAL_REACH, and f, a near key's mean weight over a far key's.
    In order, the first that holds:

    every key near   no key lies beyond LOCAL_REACH (n too short to tell)
    local            s >= LOCAL_SHARE and f >= FAVOUR
    near and far     s >= NOTICE and f >= FAVOUR (near keys favoured, most weight farther)
    looks back/ahead (bidirectional) at least ONE_SIDE_SHARE of the weight off r = 0 one side
    long-range       s < LOCAL_SHARE (so s < NOTICE, or f < FAVOUR)
    few far keys     the rest: s >= LOCAL_SHARE but f < FAVOUR, most keys being near

    >>> r = distances(64).to(torch.float64)
    >>> bias = torch.stack([-r.abs(), 0 * r, -(r - 8).abs(), -9.0 * (r > 0), -0.1 * r.abs()])
    >>> head_shapes(bias, 64, causal=False)
    ['local', 'long-range', 'looks ahead', 'looks back', 'near and far']
    >>> head_shapes(torch.zeros(1, 7), 4, causal=True), head_shapes(torch.zeros(1, 3), 2, True)
    (['few far keys'], ['every key near'])
    """
    r, weights = bias_weights(values, n, causal)
    is_near = r.abs() <= LOCAL_REACH
    s = near_share(r, weights)
    far_keys = int((~is_near).sum())
    if far_keys == 0:
        return ["every key near"] * weights.shape[0]
    near_mean = s / int(is_near.sum())
    far_mean = (1 - s) / far_keys
    favour = near_mean / far_mean.clamp(min=1e-300)
    back, ahead = weights[:, r < 0].sum(-1), weights[:, r > 0].sum(-1)
    off = (back + ahead).clamp(min=1e-300)
    shapes = []
    for h in range(weights.shape[0]):
        if s[h] >= LOCAL_SHARE and favour[h] >= FAVOUR:
            shapes.append("local")
        elif s[h] >= NOTICE and favour[h] >= FAVOUR:
            shapes.append("near and far")
        elif not causal and back[h] / off[h] >= ONE_SIDE_SHARE:
            shapes.append("looks back")
        elif not causal and ahead[h] / off[h] >= ONE_SIDE_SHARE:
            shapes.append("looks ahead")
        elif s[h] < LOCAL_SHARE:
            shapes.append("long-range")
        else:
            shapes.append("few far keys")
    return shapes
