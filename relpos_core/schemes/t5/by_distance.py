"""T5's bias read at every distance r = j - i: the bucket of each r, its bias per head, the runs
of equal buckets, and which buckets a training length ever reached."""

from __future__ import annotations

import torch

from relpos_core.by_distance import MAX_TRAINING_LENGTH, distances
from relpos_core.validation import check_bool, check_int, check_tensor

from .maths import t5_bucket


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
