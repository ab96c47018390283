"""T5's relative position buckets as people write them: right, and wrong in each known way.
None calls the library. Each takes (relative_position, bidirectional, num_buckets,
max_distance), relative_position = key - query, and returns the buckets (same shape)."""

import math

import numpy as np
import torch


def right_hf(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """HF transformers' T5Attention._relative_position_bucket, float32 logarithm and all."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def right_numpy_scalar(relative_position, bidirectional, num_buckets, max_distance):
    """One distance at a time in plain Python, math.log in float64."""

    def bucket(r):
        b, nb = 0, num_buckets
        if bidirectional:
            nb //= 2
            b = nb if r > 0 else 0
            n = abs(r)
        else:
            n = max(-r, 0)
        exact = nb // 2
        if n < exact:
            return b + n
        large = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (nb - exact))
        return b + min(large, nb - 1)

    r = relative_position.numpy()
    return np.vectorize(bucket, otypes=[np.int64])(r)


def _buckets(rp, bidirectional, num_buckets, max_distance, *, halve=True, rnd=False,
             clamp=True, exact_all=False):  # fmt: skip
    out = torch.zeros_like(rp)
    if bidirectional:
        if halve:
            num_buckets //= 2
        out += (rp > 0).long() * num_buckets
        n = rp.abs()
    else:
        n = (-rp).clamp(min=0)
    max_exact = num_buckets if exact_all else num_buckets // 2
    scaled = (
        torch.log(n.double().clamp(min=1) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    )
    large = max_exact + (scaled.round() if rnd else scaled).long()
    if clamp:
        large = large.clamp(max=num_buckets - 1)
    return out + torch.where(n < max_exact, n, large)


def wrong_query_minus_key(relative_position, bidirectional, num_buckets, max_distance):
    # reads the distance as query - key: the two directions swap
    return _buckets(-relative_position, bidirectional, num_buckets, max_distance)


def wrong_not_halved(relative_position, bidirectional, num_buckets, max_distance):
    # each direction gets all num_buckets: buckets run past num_buckets - 1
    return _buckets(relative_position, bidirectional, num_buckets, max_distance, halve=False)


def wrong_rounded(relative_position, bidirectional, num_buckets, max_distance):
    # rounds the log bucket: the edges move half a bucket closer
    return _buckets(relative_position, bidirectional, num_buckets, max_distance, rnd=True)


def wrong_not_clamped(relative_position, bidirectional, num_buckets, max_distance):
    # no min(..., num_buckets - 1): far distances get buckets that do not exist
    return _buckets(relative_position, bidirectional, num_buckets, max_distance, clamp=False)


def wrong_exact_all(relative_position, bidirectional, num_buckets, max_distance):
    # max_exact = num_buckets: every bucket exact, no log range at all
    return _buckets(relative_position, bidirectional, num_buckets, max_distance, exact_all=True)
