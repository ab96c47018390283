"""T5's bucketing and bias: against a per-integer transcription of T5's reference code (its
logarithm in float32, here numpy float32), against bucket numbers worked out by hand, and the
bias against the learned table indexed by bucket.

Reference bucketing of a distance r = j - i, with n = i - j:
    bidirectional: B //= 2; bucket = B if n < 0 else 0; n = |n|.  unidirectional: n = max(n, 0)
    exact = B // 2; n < exact -> bucket + n
    else bucket + min(exact + int(log(n / exact) / log(max_distance / exact) * (B - exact)), B - 1)
"""

import math

import numpy as np
import pytest
import torch

from relpos_core.schemes import T5Bias, t5_bucket
from tests.schemes.plain import (
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    content_loop,
    qkv,
)

DISTANCES = range(-300, 301)


def reference_bucket(r: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """One distance j - i, the reference code's steps, float32 where it computes in float32."""
    bucket = 0
    n = -r
    if bidirectional:
        num_buckets //= 2
        if n < 0:
            bucket += num_buckets
        n = abs(n)
    else:
        n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return bucket + n
    ratio = np.float32(n) / np.float32(max_exact)
    scaled = (
        np.log(ratio)
        / np.float32(math.log(max_distance / max_exact))
        * np.float32(num_buckets - max_exact)
    )
    return bucket + min(max_exact + int(scaled), num_buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (64, 256), (16, 32), (8, 20)])
def test_every_distance_equals_the_reference(bidirectional, num_buckets, max_distance):
    r = torch.tensor(list(DISTANCES))
    got = t5_bucket(r, bidirectional, num_buckets, max_distance).tolist()
    want = [reference_bucket(x, bidirectional, num_buckets, max_distance) for x in DISTANCES]
    assert got == want


# Worked by hand. Bidirectional 32/128: 16 buckets per direction, exact = 8, log-spaced from
# distance 8 to 128, log(n/8) / log(16) * 8 -> 8 + floor(...). Keys after the query add 16.
#   n = 20:  log(2.5)  / log(16) * 8 = 0.9163 / 2.7726 * 8 = 2.644  -> 10
#   n = 12:  log(1.5)  / log(16) * 8 = 0.4055 / 2.7726 * 8 = 1.170  -> 9
#   n = 30:  log(3.75) / log(16) * 8 = 1.3218 / 2.7726 * 8 = 3.814  -> 11
#   n = 100: log(12.5) / log(16) * 8 = 2.5257 / 2.7726 * 8 = 7.288  -> 15
#   n = 200: log(25)   / log(16) * 8 = 3.2189 / 2.7726 * 8 = 9.288  -> 17, capped at 15
# Unidirectional 32/128: exact = 16, log(n/16) / log(8) * 16; keys after the query -> 0.
#   n = 20:  log(1.25) / log(8) * 16 = 0.2231 / 2.0794 * 16 = 1.717 -> 17
#   n = 100: log(6.25) / log(8) * 16 = 1.8326 / 2.0794 * 16 = 14.10 -> 30
#   n = 127: log(7.9375) / log(8) * 16 = 2.0716 / 2.0794 * 16 = 15.94 -> 31
BIDIRECTIONAL_GOLDEN = {
    0: 0, -1: 1, -7: 7, -8: 8, -12: 9, -20: 10, -30: 11, -100: 15, -200: 15,
    1: 17, 7: 23, 8: 24, 20: 26, 100: 31, 200: 31,
}  # fmt: skip
UNIDIRECTIONAL_GOLDEN = {0: 0, 5: 0, -1: 1, -15: 15, -16: 16, -20: 17, -100: 30, -127: 31, -999: 31}


def test_golden_bidirectional():
    r = torch.tensor(list(BIDIRECTIONAL_GOLDEN))
    assert t5_bucket(r).tolist() == list(BIDIRECTIONAL_GOLDEN.values())


def test_golden_unidirectional():
    r = torch.tensor(list(UNIDIRECTIONAL_GOLDEN))
    assert t5_bucket(r, bidirectional=False).tolist() == list(UNIDIRECTIONAL_GOLDEN.values())


def make(num_buckets=8, max_distance=6, heads=3, d=4, seed=0) -> T5Bias:
    gen = torch.Generator().manual_seed(seed)
    return T5Bias(heads, d, num_buckets, max_distance, generator=gen).double()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
def test_bias_is_the_table_at_the_bucket(n_q, n_k, offset, causal):
    """e_ij = q_i · k_j / sqrt(d) + b[bucket(j - i), h]; bidirectional unless causal."""
    scheme = make()
    q, k, v = qkv(n_q, n_k)
    table = scheme.bias.detach()  # (B, h)

    def bias(b, h, i, j):
        return float(table[reference_bucket(j - (offset + i), not causal, 8, 6), h])

    want = {"content": content_loop(q, k), "bias": cell_loop((2, 3, n_q, n_k), bias)}
    assert_scheme_matches(scheme, q, k, v, want, causal=causal, offset=offset)


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(make(), 7, causal)


@pytest.mark.parametrize(("n_q", "n_k", "offset", "causal"), [(3, 3, 0, True), (2, 4, 1, False)])
def test_gradients(n_q, n_k, offset, causal):
    names = assert_gradients(make(heads=2, d=2), n_q, n_k, offset, causal)
    assert names == ["bias"]


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = True  # b_h(bucket(j - i)): a bias of j - i alone


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    return int(settings["num_buckets"]) * h  # one scalar per bucket per head
