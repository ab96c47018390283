"""T5's relative attention bias: Raffel et al. 2020, "Exploring the Limits of Transfer Learning
with a Unified Text-to-Text Transformer", Sec. 2.1, and its reference code's bucketing.

    e_ij = q_i · k_j / sqrt(d) + b_h[bucket(j - i)]

One learned scalar per head per bucket. Of B buckets (half of them per direction when
bidirectional), the first half are exact distances 0, 1, ..., the rest are log-spaced up to
``max_distance``; every distance beyond falls in the last bucket. Causal attention uses the
unidirectional bucketing (all B buckets for the past). T5 itself does not divide q · k by
sqrt(d) (it folds the factor into its initialisation); the content term here is the one every
scheme shares, so schemes differ only in what position adds.
"""

from __future__ import annotations

import math

import torch

from relpos_core.lookup import relative_distances_unguarded
from relpos_core.schemes.base import PositionScheme, init_normal
from relpos_core.validation import check_bool, check_int, check_tensor


def t5_bucket(
    relative_position: torch.Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> torch.Tensor:
    """Bucket of each distance j - i (int64 tensor in, int64 out), as T5's reference code.

    The logarithm runs in float32, as in the reference code, so bucket edges match it exactly.

    >>> t5_bucket(torch.tensor([-200, -20, -8, -7, -1, 0, 1, 7, 8, 20, 200]))
    tensor([15, 10,  8,  7,  1,  0, 17, 23, 24, 26, 31])
    >>> t5_bucket(torch.tensor([-200, -20, -1, 0, 1]), bidirectional=False)
    tensor([31, 17,  1,  0,  0])
    """
    check_tensor("relative_position", relative_position, tuple(range(9)), floating=False)
    dtype = relative_position.dtype
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
        raise TypeError(  # a fractional distance would get a fractional bucket
            f"relative_position must be an integer tensor of distances j - i, got {dtype}"
        )
    bidirectional = check_bool("bidirectional", bidirectional)
    num_buckets = check_int("num_buckets", num_buckets, 2, 4096)
    max_distance = check_int("max_distance", max_distance, 1, 2**40)
    if bidirectional and num_buckets % 2:
        raise ValueError(f"num_buckets must be even when bidirectional, got {num_buckets}")
    bucket = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        bucket += (relative_position > 0).long() * num_buckets  # keys after the query
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)  # the future shares bucket 0
    max_exact = num_buckets // 2  # distances 0 .. max_exact-1 get a bucket each
    if max_exact < 1 or max_distance <= max_exact:
        per = "direction" if bidirectional else "bucket set"
        raise ValueError(
            f"T5 bucketing needs at least 2 buckets per {per} and max_distance > "
            f"{max_exact} (the exact buckets), got num_buckets = "
            f"{num_buckets * (2 if bidirectional else 1)}, max_distance = {max_distance}"
        )
    is_small = distance < max_exact
    large = (
        max_exact
        + (
            torch.log(distance.float().clamp(min=1) / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).long()
    )
    large = large.clamp(max=num_buckets - 1)
    return bucket + torch.where(is_small, distance, large)


class T5Bias(PositionScheme):
    name = "t5"
    TERMS = ("content", "bias")
    POSITION_TERMS = ("bias",)

    def __init__(
        self,
        heads: int,
        head_dim: int,
        num_buckets: int = 32,
        max_distance: int = 128,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(heads, head_dim)
        self.num_buckets = check_int("num_buckets", num_buckets, 2, 4096)
        if num_buckets % 2:
            raise ValueError(f"num_buckets must be even (half per direction), got {num_buckets}")
        self.max_distance = check_int("max_distance", max_distance, 1, 2**40)
        for bidirectional in (True, False):  # refuse a bucketing either direction cannot use
            t5_bucket(torch.zeros(1, dtype=torch.int64), bidirectional, num_buckets, max_distance)
        # T5 initialises its bias table as N(0, d_model^-1/2) (d_model = heads * head_dim)
        self.bias = init_normal((num_buckets, heads), (heads * head_dim) ** -0.5, generator)

    def buckets(
        self, n_q: int, n_k: int, causal: bool, query_offset: int = 0, device=None
    ) -> torch.Tensor:
        """bucket(j - i) for every pair: int64 (n_q, n_k)."""
        r = relative_distances_unguarded(n_q, n_k, query_offset, device)
        return t5_bucket(r, not causal, self.num_buckets, self.max_distance)

    def position_terms(self, q, k, causal, query_offset):
        index = self.buckets(q.shape[2], k.shape[2], causal, query_offset, q.device)
        per_head = self.bias.to(q.dtype)[index]  # (i,j) -> (i,j,h)
        return {"bias": per_head.permute(2, 0, 1)[None]}  # (1,h,i,j)

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        return n_q * n_k * (8 * 3 + 4)  # distances, buckets, the float log, the is-small mask

    def extra_repr(self) -> str:
        return (
            super().extra_repr()
            + f", num_buckets={self.num_buckets}, max_distance={self.max_distance}"
        )
