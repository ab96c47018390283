"""What the page draws of each kind of position parameter, at the sidebar's n: every value from
relpos_core.by_distance, the plain readings of the tables at each distance r = j - i."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from relpos_core import by_distance as bd
from relpos_core.schemes import alibi_slopes, rope_frequencies
from relpos_lab.extract import Alibi, Rope, ShawLayer, T5Stack
from relpos_lab.family import results

MAX_TRAINING_LENGTH = bd.MAX_TRAINING_LENGTH  # a visitor's training length, at most

# h heads · m = 2n - 1 distances r = -(n - 1) .. n - 1


@dataclass(frozen=True)
class T5View:
    stack: T5Stack
    distance: np.ndarray  # (m,)
    bucket: np.ndarray  # (m,) bucket(r)
    bias: np.ndarray  # (h, m) b_h[bucket(r)]
    spans: tuple[tuple[int, int, int], ...]  # (bucket, first r, last r), along r
    shapes: tuple[str, ...]  # per head, relpos_core.by_distance.SHAPES
    weights: tuple[np.ndarray, np.ndarray]  # (r seen, (h, seen)) the bias alone's softmax
    training_length: int | None = None  # the lengths it was trained on, where known
    trained: np.ndarray | None = None  # (num_buckets,) bool: some training distance used it

    @property
    def n(self) -> int:
        return (len(self.distance) + 1) // 2

    @property
    def near(self) -> np.ndarray:
        """(h,) the weight the reading query puts within |r| <= LOCAL_REACH."""
        seen, weights = self.weights
        return weights[:, np.abs(seen) <= bd.LOCAL_REACH].sum(-1)

    @property
    def never_trained(self) -> list[int]:
        """The buckets some distance uses (at any length) that training never reached."""
        if self.trained is None:
            return []
        s = self.stack
        every = min(s.max_distance + 1, bd.MAX_TRAINING_LENGTH)  # beyond: the last buckets
        used = bd.trained_buckets(s.num_buckets, s.bidirectional, s.max_distance, every).numpy()
        return [int(b) for b in np.flatnonzero(used & ~self.trained)]

    @property
    def untrained_distance(self) -> np.ndarray | None:
        """(m,) bool: r's bucket was never trained (None where that is not known)."""
        return None if self.trained is None else ~self.trained[self.bucket]

    @property
    def untrained_weight(self) -> np.ndarray | None:
        """(h,) the weight the reading query puts on distances of untrained buckets."""
        if self.trained is None:
            return None
        seen, weights = self.weights
        return weights[:, ~self.trained[self.bucket[seen + self.n - 1]]].sum(-1)

    @property
    def order(self) -> list[int]:
        """Heads grouped by shape (in SHAPES' order), by head number within a group."""
        return sorted(range(len(self.shapes)), key=lambda h: (bd.SHAPES.index(self.shapes[h]), h))

    def groups(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for h in self.order:
            out.setdefault(self.shapes[h], []).append(h)
        return out

    def matrix(self, head: int, size: int) -> np.ndarray:
        """(size, size): what the logits of ``head`` receive, b_h[bucket(j - i)], its first
        ``size`` queries and keys (a function of j - i: every window of one size is alike)."""
        n = self.n
        middle = slice(n - size, n + size - 1)  # the distances -(size-1)..size-1
        return bd.matrix_from_distances(torch.tensor(self.bias[head, middle]), size).numpy()


def t5_view(stack: T5Stack, n: int, training_length: int | None = None) -> T5View:
    """``stack`` read at every distance of length n; with ``training_length``, which buckets
    that training ever reached."""
    bucket, bias = bd.t5_bias_by_distance(
        torch.tensor(stack.bias), n, stack.bidirectional, stack.max_distance
    )
    r = bd.distances(n)
    causal = not stack.bidirectional
    seen, weights = bd.bias_weights(bias, n, causal)
    trained = None
    if training_length:
        trained = bd.trained_buckets(
            stack.num_buckets, stack.bidirectional, stack.max_distance, training_length
        ).numpy()
    return T5View(
        stack,
        r.numpy(),
        bucket.numpy(),
        bias.numpy(),
        tuple(bd.bucket_spans(bucket, r)),
        tuple(bd.head_shapes(bias, n, causal)),
        (seen.numpy(), weights.numpy()),
        training_length or None,
        trained,
    )


def family_training_length() -> int:
    """The length every family model was trained on (results.json's training settings)."""
    return int(results()["training"]["context"])


@dataclass(frozen=True)
class ShawView:
    layer: ShawLayer
    distance: np.ndarray  # (m,)
    norms: dict[str, np.ndarray]  # "w^K" / "w^V" -> (m,) |w_clip(r, k)|
    tables: dict[str, np.ndarray]  # "w^K" / "w^V" -> (2k + 1, d)


def shaw_view(layer: ShawLayer, n: int) -> ShawView:
    tables = {
        name: table
        for name, table in (("w^K", layer.key), ("w^V", layer.value))
        if table is not None
    }
    norms = {
        name: bd.table_by_distance(torch.tensor(t, dtype=torch.float64), n).norm(dim=-1).numpy()
        for name, t in tables.items()
    }
    return ShawView(layer, bd.distances(n).numpy(), norms, tables)


def alibi_view(alibi: Alibi, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(r, slopes (h,), -m_h |r| (h, m))."""
    slopes = alibi_slopes(alibi.heads, alibi.max_bias)
    return bd.distances(n).numpy(), slopes.numpy(), bd.alibi_by_distance(slopes, n).numpy()


@dataclass(frozen=True)
class RopeView:
    rope: Rope
    wavelength: np.ndarray  # (d/2,) positions per full turn of each pair
    scaling: str  # how the config's rope_scaling was applied, in words ("" without one)


def rope_view(rope: Rope, n: int) -> RopeView:
    """Each pair's wavelength 2π/θ_t at length n, the config's rope_scaling applied by
    relpos_core's rope_frequencies (dynamic scaling reads n); a scaling it does not know is
    left out and said."""
    scaling = json.loads(rope.scaling) if rope.scaling else None
    if isinstance(scaling, dict) and "type" in scaling:  # older configs say "type"
        scaling = {"rope_type": scaling["type"], **scaling}
        del scaling["type"]
    if isinstance(scaling, dict) and scaling.get("rope_type") == "default":
        scaling = None
    words = f"after the config's rope_scaling ({scaling.get('rope_type')})" if scaling else ""
    try:
        inverse, _ = rope_frequencies(rope.head_dim, rope.base, scaling, seq_len=n)
    except (TypeError, ValueError) as error:
        inverse, _ = rope_frequencies(rope.head_dim, rope.base)
        words = f"without the config's rope_scaling, which this page cannot apply ({error})"
    return RopeView(rope, bd.rope_wavelengths(inverse).numpy(), words)
