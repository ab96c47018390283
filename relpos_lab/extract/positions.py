"""A model's position parameters, and the small .safetensors file that carries them.

What the extractor finds in a checkpoint: T5's bucketed bias tables (one per stack and layer that
has its own), Shaw et al.'s key and value tables, ALiBi's head count (its slopes follow from it)
and RoPE's configuration. The file it writes holds the tables as tensors and the rest as JSON in
the header's ``__metadata__``: kilobytes, and read back with the same checks as any upload.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

import relpos_core.schemes.shaw.checkpoints as shaw_layout
from relpos_lab.extract import projected as projected_file
from relpos_lab.extract.fields import described
from relpos_lab.extract.projected import ProjectedLayer
from relpos_lab.extract.safetensors_file import FileProblem

FORMAT = "relpos-positions/1"  # the __metadata__ value that marks an extracted file
MAX_SCALING = 32768  # rope_scaling as JSON text (LongRoPE's lists of factors are the longest)


def whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


@dataclass(frozen=True)
class T5Stack:
    """One T5 bias table b[bucket, head] and how its stack buckets distances."""

    stack: str  # "encoder", "decoder", "encoder (global)" or "model"
    layer: int
    bias: np.ndarray = field(repr=False)  # (num_buckets, heads) float32
    bidirectional: bool
    max_distance: int

    def __post_init__(self) -> None:
        import torch

        from relpos_core.schemes import t5_bucket

        if self.bias.ndim != 2 or not 0 <= self.layer < 10_000:
            raise FileProblem(
                f"T5 bias {self.label}: shape {self.bias.shape}, not (buckets, heads)"
            )
        try:  # the bucketing refuses what it cannot use (an odd count both ways, too few)
            t5_bucket(
                torch.zeros(1, dtype=torch.int64),
                self.bidirectional,
                *self.bias.shape[:1],
                self.max_distance,
            )
        except (TypeError, ValueError) as error:
            raise FileProblem(f"T5 bias {self.label}: {error}") from None

    @property
    def num_buckets(self) -> int:
        return self.bias.shape[0]

    @property
    def heads(self) -> int:
        return self.bias.shape[1]

    @property
    def label(self) -> str:
        return f"{self.stack}, layer {self.layer}"


@dataclass(frozen=True)
class ShawLayer:
    """One layer's tables w^K and w^V, (2k + 1, d) each, row k + r for distance r; a table the
    layer lacks is None."""

    layer: int
    key: np.ndarray | None = field(repr=False)
    value: np.ndarray | None = field(repr=False)

    @property
    def k(self) -> int:
        table = self.key if self.key is not None else self.value
        return table.shape[0] // 2

    @property
    def head_dim(self) -> int:
        table = self.key if self.key is not None else self.value
        return table.shape[1]


@dataclass(frozen=True)
class Alibi:
    heads: int
    max_bias: float = 8.0  # the slopes' exponent: m_h = 2^(-max_bias h / H)

    def __post_init__(self) -> None:
        if not (whole(self.heads, 1, 4096) and real(self.max_bias) and 0 < self.max_bias <= 64):
            raise FileProblem(
                f"ALiBi needs 1 to 4096 heads and a slope exponent in (0, 64], got "
                f"{self.heads} heads and {self.max_bias}"
            )


@dataclass(frozen=True)
class Rope:
    base: float
    head_dim: int  # the rotated width per head
    scaling: str | None = None  # the config's rope_scaling, as JSON text
    max_positions: int | None = None  # the config's max_position_embeddings

    def __post_init__(self) -> None:
        if not (real(self.base) and 1 < self.base <= 1e9 and whole(self.head_dim, 2, 4096)):
            raise FileProblem(
                f"RoPE needs a base in (1, 1e9] and an even head size 2 to 4096, got base "
                f"{described(self.base)} and {described(self.head_dim)}"
            )
        if self.head_dim % 2:
            raise FileProblem(
                f"RoPE rotates pairs: its head size must be even, got {self.head_dim}"
            )
        if self.max_positions is not None and not whole(self.max_positions, 1, 2**31):
            raise FileProblem(
                f"RoPE's max_position_embeddings must be in [1, 2**31], got "
                f"{described(self.max_positions)}"
            )
        if self.scaling is not None and not (
            isinstance(self.scaling, str) and len(self.scaling) <= MAX_SCALING
        ):
            raise FileProblem(
                f"RoPE's rope_scaling must be JSON text of at most {MAX_SCALING:,} characters, "
                f"got {described(self.scaling)}"
            )


@dataclass(frozen=True)
class Positions:
    source: str
    t5: tuple[T5Stack, ...] = ()
    shaw: tuple[ShawLayer, ...] = ()
    alibi: Alibi | None = None
    rope: Rope | None = None
    notes: tuple[str, ...] = ()  # what was assumed (a default in place of a missing config)
    projected: tuple[ProjectedLayer, ...] = ()  # relative embeddings projected per layer

    @property
    def empty(self) -> bool:
        return not (self.t5 or self.shaw or self.alibi or self.rope or self.projected)

    def summary(self) -> list[str]:
        """What was found, one line each."""
        lines = []
        for s in self.t5:
            lines.append(
                f"T5 bias: {s.label}: {s.num_buckets} buckets x {s.heads} heads, "
                f"{'bidirectional' if s.bidirectional else 'one direction (decoder)'}, "
                f"max_distance {s.max_distance}"
            )
        for s in self.shaw:
            have = [name for name, t in (("w^K", s.key), ("w^V", s.value)) if t is not None]
            lines.append(
                f"Shaw tables: layer {s.layer}: {' and '.join(have)}, k = {s.k}, d = {s.head_dim}"
            )
        if self.alibi:
            lines.append(f"ALiBi: {self.alibi.heads} heads (slopes from the head count)")
        if self.rope:
            r = self.rope
            lines.append(
                f"RoPE: base {r.base:g}, {r.head_dim} rotated dimensions per head"
                + (f", rope_scaling {r.scaling}" if r.scaling else "")
            )
        lines += [layer.summary() for layer in self.projected]
        return lines + list(self.notes)


def to_tensors(positions: Positions) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors and the string metadata of the extracted file."""
    tensors: dict[str, np.ndarray] = {}
    t5 = []
    for s in positions.t5:
        name = f"t5/{s.stack}/{s.layer}"
        tensors[name] = np.ascontiguousarray(s.bias, dtype=np.float32)
        t5.append(
            {
                "tensor": name,
                "stack": s.stack,
                "layer": s.layer,
                "bidirectional": s.bidirectional,
                "max_distance": s.max_distance,
            }
        )
    for s in positions.shaw:
        for part, table in (("key", s.key), ("value", s.value)):
            if table is not None:
                tensors[f"{shaw_layout.EXTRACTED}/{s.layer}/{part}"] = np.ascontiguousarray(
                    table, dtype=np.float32
                )
    metadata = {"format": FORMAT, "source": positions.source[:200], "t5": json.dumps(t5)}
    if positions.projected:
        projected_tensors, entries = projected_file.to_tensors(positions.projected)
        tensors.update(projected_tensors)
        metadata["projected"] = json.dumps(entries)
    if positions.alibi:
        metadata["alibi"] = json.dumps(vars(positions.alibi))
    if positions.rope:
        metadata["rope"] = json.dumps(vars(positions.rope))
    if positions.notes:
        metadata["notes"] = json.dumps(list(positions.notes))
    return tensors, metadata


def to_bytes(positions: Positions) -> bytes:
    from safetensors.numpy import save

    tensors, metadata = to_tensors(positions)
    return save(tensors, metadata=metadata)
