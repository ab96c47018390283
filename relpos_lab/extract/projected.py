"""Relative embeddings projected per head: one table P of relative embeddings turned, in each
layer, into position keys P^K (read by each query, the c2p term) and position queries P^Q (read
by each key, p2c), as DeBERTa does. Which scheme's folder reads it, and with which settings, is
data: the folder's checkpoints module names its reading (``READING``, a function of
``relpos_core.by_distance``) and the settings it takes (``SETTINGS``).

In the extracted file each layer's P^K and P^Q are tensors ``<EXTRACTED>/<layer>/<key|query>``
and the rest is the metadata entry ``projected``, a JSON list read back field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from relpos_core.schemes.folders import parts
from relpos_lab.extract.fields import Fields, described
from relpos_lab.extract.safetensors_file import FileProblem

MAX_HEADS, MAX_ROWS, MAX_HEAD_DIM = 4096, 2 * 4096, 65536
PARTS = ("key", "query")  # P^K, P^Q
TERM_WORDS = {"key": "P^K (c2p)", "query": "P^Q (p2c)"}


def layouts() -> dict[str, ModuleType]:
    """Each scheme folder whose checkpoints store projected relative embeddings, by its name."""
    return {
        package.rsplit(".", 1)[-1]: layout
        for package, layout in parts("checkpoints")
        if hasattr(layout, "PROJECTIONS") and hasattr(layout, "READING")
    }


@dataclass(frozen=True)
class ProjectedLayer:
    """One layer's P^K and P^Q, (heads, rows, d) float32 each (None: the model adds no such
    term), the settings its folder's reading takes, and the logits' divisor sqrt(f · d) with
    f = ``divisor_terms``."""

    scheme: str  # the scheme folder's name
    layer: int
    key: np.ndarray | None = field(repr=False)
    query: np.ndarray | None = field(repr=False)
    settings: tuple[tuple[str, int], ...]
    divisor_terms: int
    origin: str = ""  # how P became P^K and P^Q, in words

    def __post_init__(self) -> None:
        layout = layouts().get(self.scheme) if isinstance(self.scheme, str) else None
        if layout is None:
            raise FileProblem(
                f"projected relative embeddings of {described(self.scheme)}: no scheme folder "
                f"reads that layout (known: {', '.join(layouts())})"
            )
        names = tuple(name for name, _ in self.settings)
        if names != layout.SETTINGS or not all(whole(v, 0, 2**31) for _, v in self.settings):
            raise FileProblem(
                f"{self.label}: settings must be {', '.join(layout.SETTINGS)}, whole numbers "
                f"in [0, 2**31], got {dict(self.settings)}"
            )
        tables = [t for t in (self.key, self.query) if t is not None]
        if not tables or any(not isinstance(t, np.ndarray) for t in tables):
            raise FileProblem(f"{self.label}: neither P^K nor P^Q is held")
        shape = tables[0].shape
        fits = (
            len(shape) == 3
            and 1 <= shape[0] <= MAX_HEADS
            and 2 <= shape[1] <= MAX_ROWS
            and 1 <= shape[2] <= MAX_HEAD_DIM
        )
        if not fits or any(t.shape != shape for t in tables):
            raise FileProblem(
                f"{self.label}: P^K and P^Q must be one shape (heads, rows, d) with 1 to "
                f"{MAX_HEADS} heads, 2 to {MAX_ROWS} rows; got "
                + " and ".join(str(t.shape) for t in tables)
            )
        if any(t.dtype != np.float32 or not np.isfinite(t).all() for t in tables):
            raise FileProblem(f"{self.label}: P^K and P^Q must hold finite float32 values")
        if not whole(self.divisor_terms, 1 + len(tables), 3):
            raise FileProblem(
                f"{self.label}: the divisor's term count must be 1 + the {len(tables)} position "
                f"term(s) held, at most 3; got {described(self.divisor_terms)}"
            )
        try:  # the folder's reading refuses settings it cannot read, or a table of other rows
            self.rows(1)
        except (TypeError, ValueError) as error:
            raise FileProblem(f"{self.label}: {error}") from None

    @property
    def label(self) -> str:
        return f"{scheme_label(self.scheme)}, layer {self.layer}"

    @property
    def heads(self) -> int:
        return next(t for t in (self.key, self.query) if t is not None).shape[0]

    @property
    def head_dim(self) -> int:
        return next(t for t in (self.key, self.query) if t is not None).shape[2]

    @property
    def table_rows(self) -> int:
        return next(t for t in (self.key, self.query) if t is not None).shape[1]

    def vectors(self) -> dict[str, np.ndarray]:
        """{"key": P^K, "query": P^Q}, those held."""
        pairs = zip(PARTS, (self.key, self.query), strict=True)
        return {name: t for name, t in pairs if t is not None}

    def rows(self, n: int):
        """The row of the table each distance r = j - i of length n reads: int64 (2n - 1,)."""
        from relpos_core import by_distance

        reading = getattr(by_distance, layouts()[self.scheme].READING)
        return reading(n, **dict(self.settings), table_rows=self.table_rows)

    def summary(self) -> str:
        held = " and ".join(TERM_WORDS[name] for name in self.vectors())
        settings = ", ".join(f"{name} {value}" for name, value in self.settings)
        return (
            f"{scheme_label(self.scheme)} position vectors: layer {self.layer}: {held}, "
            f"{self.heads} heads x {self.table_rows} rows x d = {self.head_dim}, {settings}"
            + (f", {self.origin}" if self.origin else "")
        )


def scheme_label(scheme: str) -> str:
    """The scheme's name in words, from its catalogue entry."""
    entry = dict(parts("entry")).get(f"relpos_core.schemes.{scheme}")
    return entry.ENTRY.label if entry is not None else scheme


def whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def to_tensors(layers: tuple[ProjectedLayer, ...]) -> tuple[dict[str, np.ndarray], list[dict]]:
    """The extracted file's tensors and its ``projected`` metadata entries."""
    tensors, entries = {}, []
    for layer in layers:
        names = {}
        for part, table in layer.vectors().items():
            name = f"{layouts()[layer.scheme].EXTRACTED}/{layer.layer}/{part}"
            tensors[name] = np.ascontiguousarray(table, dtype=np.float32)
            names[part] = name
        entries.append(
            {
                "scheme": layer.scheme, "layer": layer.layer, **dict.fromkeys(PARTS), **names,
                "settings": dict(layer.settings), "divisor_terms": layer.divisor_terms,
                "origin": layer.origin,
            }
        )  # fmt: skip
    return tensors, entries


def from_entries(items: object, shapes: dict, get) -> list[ProjectedLayer]:
    """The ``projected`` metadata entries read back, each field checked."""
    if not isinstance(items, list):
        raise FileProblem("the extracted file's metadata 'projected' must be a list")
    found = []
    for item in items:
        if not isinstance(item, dict):
            raise FileProblem("the extracted file's metadata 'projected' must list objects")
        fields = Fields(item, "the extracted file's metadata", "projected[].")
        scheme, layer = fields.text("scheme", 40), fields.integer("layer", 0, 9999)
        divisor, origin = fields.integer("divisor_terms", 1, 3), fields.text("origin") or ""
        settings = fields.table("settings")
        if None in (scheme, layer, divisor, settings) or scheme not in layouts():
            raise FileProblem(
                "the extracted file's metadata 'projected' lacks scheme, layer, settings or "
                "divisor_terms, or names a scheme no folder reads"
            )
        values = tuple(
            (name, settings.integer(name, 0, 2**31)) for name in layouts()[scheme].SETTINGS
        )
        tables = {}
        for part in PARTS:
            name = fields.text(part)
            if name is not None and name not in shapes:
                raise FileProblem(f"the metadata names a tensor {name[:60]!r} the file lacks")
            tables[part] = None if name is None else np.asarray(get(name), dtype=np.float32)
        found.append(ProjectedLayer(scheme, layer, tables["key"], tables["query"], values,
                                    divisor, origin))  # fmt: skip
    return found
