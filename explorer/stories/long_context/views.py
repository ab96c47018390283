"""The Long context page's data: RoPE's wavelengths for a base, Su et al.'s decay bound beside
the trained RoPE model's mean logit by distance, each scaling type's frequencies, and the
stored zero-shot and sink measurements (``python -m relpos_lab.family long``).

t rotary pair · d head dim · r distance i - j · L0 the training length · s scaling factor.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.weights.trained import family_model
from relpos_core.schemes.catalogue import ROPE_SCALINGS
from relpos_core.schemes.rope import rope_decay_bound, rope_frequencies
from relpos_lab.family import results
from relpos_lab.family.long_context import (
    DECAY_LENGTH,
    DECAY_TEXTS,
    FIXED_FACTOR,
    LONG_FILE,
    ROPE_MODEL,
    SINK_ROWS,
    SINKS,
    scaling_config,
    uniform_share,
)
from relpos_lab.family.registry import describe

BASES = (100, 1_000, 10_000, 100_000, 1_000_000)  # the base slider's stops
DECAY = (DECAY_TEXTS, DECAY_LENGTH)  # held-out texts, and their length, of the mean logit
SINK = (SINKS, SINK_ROWS)  # the first characters a sink is looked for in; the queries read
FACTORS = (2, 4, 8, 16)  # the scaling factor's choices
FIXED = FIXED_FACTOR  # the zero-shot table's fixed factor


def trained_rope() -> tuple[int, float, int]:
    """(head_dim, base, training length) of the family's RoPE model."""
    model, _ = family_model(ROPE_MODEL)
    return model.config.head_dim, model.blocks[0].attention.scheme.base, model.config.context


@dataclass(frozen=True)
class Wavelengths:
    """Pair t's wavelength 2 pi base^(2t/d), in characters, for one base."""

    base: float
    head_dim: int
    context: int  # the training length
    n: int  # the page's sequence length
    wavelength: np.ndarray  # (d/2,)

    def turning(self, length: int) -> int:
        """How many pairs complete a turn within ``length`` characters."""
        return int((self.wavelength <= length).sum())


def wavelengths(base: float, n: int) -> Wavelengths:
    head_dim, _, context = trained_rope()
    theta, _ = rope_frequencies(head_dim, float(base))
    return Wavelengths(base, head_dim, context, n, (2 * math.pi / theta).numpy())


@dataclass(frozen=True)
class Decay:
    """Su et al.'s bound for one base and the trained model's mean logit, by distance r."""

    base: float
    distance: np.ndarray  # (D,) 0 .. D-1
    bound: np.ndarray  # (D,) (1/(d/2)) sum_j |S_j| at the page's base
    trained_bound: np.ndarray  # (D,) the same at the trained model's base
    mean_logit: np.ndarray  # (layers, heads, D): mean of e_ij over i at distance r = i - j
    context: int


@cached(1)
def _record() -> dict:
    """The stored long-context run (``python -m relpos_lab.family long``)."""
    return json.loads(LONG_FILE.read_text())


def mean_logit_by_distance() -> np.ndarray:
    """(layers, heads, D): the trained RoPE model's logit q_i^T R_(j-i) k_j / sqrt(d) averaged
    over every query i and text at each distance r = i - j, on held-out text, as stored."""
    return np.array(_record()["decay"]["mean_logit"], np.float32)


def decay(base: float) -> Decay:
    head_dim, trained_base, context = trained_rope()
    distance = torch.arange(DECAY_LENGTH)  # the stored run's lengths
    bound = rope_decay_bound(distance, rope_frequencies(head_dim, float(base))[0])
    trained = rope_decay_bound(distance, rope_frequencies(head_dim, trained_base)[0])
    return Decay(
        float(base),
        distance.numpy(),
        bound.numpy().astype(np.float32),
        trained.numpy().astype(np.float32),
        mean_logit_by_distance(),
        context,
    )


@dataclass(frozen=True)
class Scaled:
    """Each scaling type's wavelengths at factor s on the trained model (d, base, L0)."""

    factor: int
    context: int
    wavelength: dict[str, np.ndarray]  # "none" and every rope_type -> (d/2,)
    attention_factor: dict[str, float]


def scaled(factor: int) -> Scaled:
    head_dim, base, context = trained_rope()
    lengths, factors = {}, {}
    for name, config in [("none", None)] + [
        (s.rope_type, scaling_config(s.rope_type, factor, context)) for s in ROPE_SCALINGS
    ]:
        theta, attention = rope_frequencies(head_dim, base, config, seq_len=factor * context)
        lengths[name] = (2 * math.pi / theta).numpy()
        factors[name] = attention
    return Scaled(factor, context, lengths, factors)


@dataclass(frozen=True)
class Measured:
    """The stored long-context run: zero-shot bits per character and the sinks."""

    context: int
    lengths: np.ndarray  # (m,)
    zero_shot: dict[str, np.ndarray]  # row -> (m,) bits per character
    share: dict[str, np.ndarray]  # model -> (layers, heads, m) share on the first characters
    window: dict[str, dict[str, float]]  # model -> {"keep", "drop"} bits per character
    full: dict[str, float]  # model -> bits per character with every key, at the window text
    uniform: np.ndarray  # (m,) the share a uniform query would give
    cache: int
    text: int

    @staticmethod
    def described(name: str) -> str:
        return describe(name)


def measured() -> Measured:
    record = _record()
    lengths = np.array(record["lengths"], np.int64)
    text = int(record["window"]["text"])
    shipped = results()["models"]
    return Measured(
        context=int(record["context"]),
        lengths=lengths,
        zero_shot={
            row: np.array([bpc[str(n)] for n in lengths], np.float32)
            for row, bpc in record["zero_shot"].items()
        },
        share={k: np.array(v, np.float32) for k, v in record["sinks"]["share"].items()},
        window=record["window"]["bpc"],
        full={name: float(shipped[name]["bpc"][str(text)]) for name in record["window"]["bpc"]},
        uniform=np.array([uniform_share(int(n)) for n in lengths], np.float32),
        cache=int(record["window"]["cache"]),
        text=text,
    )


@dataclass(frozen=True)
class AtDistance:
    """The picked pair's distance read on the figures. RoPE's logit for query i and key j
    rotates pair t by (j - i) theta_t, so a pair is read at its distance r = j - i alone."""

    distance: int  # j - i
    base: float  # the page's base (the wavelength figure's)
    angle: np.ndarray  # (d/2,) (j - i) theta_t in radians, at the page's base
    bound: float  # Su et al.'s mean |S_j| at |j - i| (its size is even in r), the page's base
    bound_at_zero: float
    mean_logit: np.ndarray | None  # (layers, heads) the trained mean logit at i - j; None when
    # the key comes after the query (a causal model never reads it) or past the stored run
    stored: int  # distances 0 .. stored - 1 of the stored mean logit

    @property
    def turned(self) -> int:
        """How many pairs complete at least one turn over the pair's distance."""
        return int((np.abs(self.angle) >= 2 * math.pi).sum())


def at_distance(w: Wavelengths, d: Decay, distance: int) -> AtDistance:
    """The rotation, the bound and the trained mean logit at the picked pair's j - i."""
    theta, _ = rope_frequencies(w.head_dim, float(w.base))
    bound = rope_decay_bound(torch.tensor([abs(distance), 0]), theta).tolist()
    back = -distance  # i - j: the decay figure's r, >= 0 for a key at or before its query
    stored = len(d.distance)
    logit = d.mean_logit[:, :, back] if 0 <= back < stored else None
    return AtDistance(
        distance=distance,
        base=float(w.base),
        angle=(distance * theta.double()).numpy(),
        bound=float(bound[0]),
        bound_at_zero=float(bound[1]),
        mean_logit=logit,
        stored=stored,
    )
