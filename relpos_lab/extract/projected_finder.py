"""Finding projected relative embeddings (DeBERTa's) in a checkpoint, by each scheme folder's
layout data (``projected.layouts()``): the table, its layer norm where the config asks, and each
layer's projections, read and multiplied here into P^K and P^Q per head. Every config field is
checked for type and range where it is read; only these tensors' bytes are read.

    P^K = LN(P) W_K^T + b_K,  P^Q = LN(P) W_Q^T + b_Q   (2 span, h·d) -> (h, 2 span, d)
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import numpy as np

from relpos_lab.extract.configured import family_params
from relpos_lab.extract.fields import Fields
from relpos_lab.extract.projected import MAX_HEADS, ProjectedLayer, layouts
from relpos_lab.extract.safetensors_file import FileProblem

MAX_WIDTH = 2**16  # a hidden size
MAX_SETTING = 2**20  # position_buckets, max_relative_positions, max_position_embeddings
Getter = Callable[[str], np.ndarray]
OWN = "through their own projections"


def may_hold(name: str) -> bool:
    """Whether a tensor name may be one of these layouts' (a Hub shard worth opening)."""
    for layout in layouts().values():
        endings = (layout.TABLE, layout.FAMILY_TABLE, f"{layout.TABLE_NORM}.weight")
        projections = [f"{layout.ATTENTION}.{own}." for _, own, _, _ in layout.PROJECTIONS]
        projections += [f"{layout.ATTENTION}.{shared}." for _, _, shared, _ in layout.PROJECTIONS]
        if name.endswith(endings) or any(p in name for p in projections):
            return True
    return False


def find_projected(shapes: dict, get: Getter, config: Fields, notes: list[str]) -> list:
    found: list[ProjectedLayer] = []
    for scheme, layout in layouts().items():
        if family_params(config, scheme) is not None:
            found += find_family(scheme, layout, shapes, get, config)
        else:
            found += find_shared(scheme, layout, shapes, get, config, notes)
    return found


def terms_of(config: Fields, key: str) -> set[str]:
    """pos_att_type: a list of words, or words joined by "|" (older configs)."""
    value = config.raw(key)
    if value is None:
        return set()
    if isinstance(value, str) and len(value) <= 200:
        return {word.strip().lower() for word in value.split("|")}
    if (
        isinstance(value, list)
        and len(value) <= 8
        and all(isinstance(word, str) and len(word) <= 20 for word in value)
    ):
        return {word.strip().lower() for word in value}
    raise config.problem(key, value, 'a list of words such as ["c2p", "p2c"], or "c2p|p2c"')


def settings_of(layout: ModuleType, config: Fields) -> tuple[int, int]:
    """(position_buckets, max_relative_positions) as transformers reads them: buckets <= 0 are
    none; max_relative_positions < 1 (or absent) is max_position_embeddings."""
    buckets = config.integer(layout.CONFIG_BUCKETS, -(2**31), MAX_SETTING)
    top = config.integer(layout.CONFIG_MAX, -(2**31), MAX_SETTING)
    if top is None or top < 1:
        longest = config.integer(layout.CONFIG_LONGEST, 1, MAX_SETTING)
        top = layout.DEFAULT_LONGEST if longest is None else longest
    return max(buckets or 0, 0), top


def find_shared(scheme: str, layout: ModuleType, shapes: dict, get: Getter, config: Fields,
                notes: list[str]) -> list[ProjectedLayer]:  # fmt: skip
    """transformers' layout: one table under <prefix>encoder, each layer's projections."""
    tables = [n for n in shapes if n == layout.TABLE or n.endswith("." + layout.TABLE)]
    found = []
    for table_name in tables:
        prefix = table_name[: -len(layout.TABLE)]
        if not config.values:
            raise FileProblem(
                f"{table_name[:100]} is {scheme}'s relative table, but no config came with it: "
                f"upload its config.json ({layout.CONFIG_BUCKETS}, {layout.CONFIG_MAX}, "
                f"{layout.CONFIG_TERMS} and {layout.CONFIG_SHARE} decide how it is read)"
            )
        if not config.flag(layout.CONFIG_ON):
            notes.append(f"{config.where} says {layout.CONFIG_ON} is not true: the model adds "
                         f"no relative terms, so {table_name[:60]} is not read")  # fmt: skip
            continue
        heads = config.integer(layout.CONFIG_HEADS, 1, MAX_HEADS)
        width = config.integer(layout.CONFIG_WIDTH, 1, MAX_WIDTH)
        if heads is None or width is None:
            raise FileProblem(f"{config.where} lacks {layout.CONFIG_HEADS} or "
                              f"{layout.CONFIG_WIDTH}, which {scheme}'s heads need")  # fmt: skip
        settings = settings_of(layout, config)
        terms = terms_of(config, layout.CONFIG_TERMS)
        share = bool(config.flag(layout.CONFIG_SHARE))
        used = [(term, shared if share else own, part)
                for term, own, shared, part in layout.PROJECTIONS if term in terms]  # fmt: skip
        if not used:
            notes.append(f"{config.where}'s {layout.CONFIG_TERMS} names neither c2p nor p2c: "
                         "the model adds no position term")  # fmt: skip
            continue
        norm = {w.strip().lower() for w in (config.text(layout.CONFIG_NORM) or "").split("|")}
        eps = config.real(layout.CONFIG_EPS, 0, 1, low_open=True) or layout.DEFAULT_EPS
        table = read_table(get, shapes, table_name, width)
        if layout.NORM_WORD in norm:  # P itself layer-normed, before any projection
            norm_name = f"{prefix}{layout.TABLE_NORM}"
            weight, bias = (
                read_vector(get, shapes, f"{norm_name}.{p}", width) for p in ("weight", "bias")
            )
            table = layer_norm(table, weight, bias, eps)
        shared = " and ".join(name for _, name, _ in used)
        origin = f"through the content {shared} ({layout.CONFIG_SHARE})" if share else OWN
        layer_prefix = f"{prefix}{layout.LAYERS}."
        numbers = sorted({int(p) for n in shapes if n.startswith(layer_prefix)
                          for p in [n[len(layer_prefix):].split(".", 1)[0]]
                          if p.isascii() and p.isdigit() and len(p) <= 4})  # fmt: skip
        for layer in numbers:
            base = f"{layer_prefix}{layer}.{layout.ATTENTION}."
            if not any(f"{base}{name}.weight" in shapes for _, name, _ in used):
                continue
            vectors = {part: project(table, get, shapes, f"{base}{name}", heads)
                       for _, name, part in used}  # fmt: skip
            found.append(make_layer(scheme, layout, layer, vectors, settings, origin))
        if not found:
            notes.append(f"{table_name[:80]} was found, but no layer's projections beside it")
    return found


def find_family(scheme: str, layout: ModuleType, shapes: dict, get: Getter,
                config: Fields) -> list[ProjectedLayer]:  # fmt: skip
    """This library's family checkpoint: a table and both projections in every layer."""
    family = family_params(config, scheme)
    settings = tuple(family.integer(name, 0, MAX_SETTING) for name in layout.SETTINGS)
    heads = config.integer(layout.FAMILY_HEADS, 1, MAX_HEADS)
    width = config.integer(layout.FAMILY_WIDTH, 1, MAX_WIDTH)
    if None in settings or heads is None or width is None:
        raise FileProblem(f"{config.where} lacks {', '.join(layout.SETTINGS)}, "
                          f"{layout.FAMILY_HEADS} or {layout.FAMILY_WIDTH}")  # fmt: skip
    found = []
    for name in shapes:
        if not name.endswith(layout.FAMILY_TABLE):
            continue
        prefix = name[: -len(layout.FAMILY_TABLE)]
        table = read_table(get, shapes, name, width)
        parts = {part: family_name for (_, _, _, part), (_, family_name) in
                 zip(layout.PROJECTIONS, layout.FAMILY_PROJECTIONS, strict=True)}  # fmt: skip
        vectors = {
            part: project(table, get, shapes, prefix + p, heads) for part, p in parts.items()
        }
        layer = next((int(p) for p in prefix.split(".") if p.isascii() and p.isdigit()), len(found))
        found.append(make_layer(scheme, layout, layer, vectors, settings, OWN))
    return sorted(found, key=lambda layer: layer.layer)


def make_layer(scheme, layout, layer, vectors, settings, origin) -> ProjectedLayer:
    return ProjectedLayer(scheme, layer, vectors.get("key"), vectors.get("query"),
                          tuple(zip(layout.SETTINGS, settings, strict=True)),
                          1 + len(vectors), origin)  # fmt: skip


def read_table(get: Getter, shapes: dict, name: str, width: int) -> np.ndarray:
    shape = shapes[name]
    if len(shape) != 2 or shape[1] != width or not 2 <= shape[0] <= 2 * 4096:
        raise FileProblem(f"{name[:100]} has shape {shape}; a relative table is (2 span, "
                          f"{width}) with 2 span at most {2 * 4096}")  # fmt: skip
    return finite(get(name), name)


def read_vector(get: Getter, shapes: dict, name: str, width: int) -> np.ndarray:
    if name not in shapes or shapes[name] != (width,):
        raise FileProblem(f"{name[:100]} must be a ({width},) vector; the file has "
                          f"{shapes.get(name, 'no such tensor')}")  # fmt: skip
    return finite(get(name), name)


def project(table: np.ndarray, get: Getter, shapes: dict, name: str, heads: int) -> np.ndarray:
    """table (rows, width) through the Linear ``name``: (heads, rows, d) float32."""
    weight, bias = f"{name}.weight", f"{name}.bias"
    out = shapes.get(weight, (0,))[0]
    if shapes.get(weight) != (out, table.shape[1]) or shapes.get(bias) != (out,) or out % heads:
        raise FileProblem(
            f"{name[:100]}: a projection is a weight (heads·d, {table.shape[1]}) and a bias "
            f"(heads·d,) with heads·d a multiple of {heads}; the file has "
            f"{shapes.get(weight, 'no weight')} and {shapes.get(bias, 'no bias')}"
        )
    projected = table @ finite(get(weight), weight).T + finite(get(bias), bias)  # (rows, h·d)
    return projected.reshape(table.shape[0], heads, -1).transpose(1, 0, 2).astype(np.float32)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def finite(array: np.ndarray, name: str) -> np.ndarray:
    if array.dtype.kind not in "fiu":
        raise FileProblem(f"{name[:100]} holds {array.dtype} values, not numbers")
    out = np.asarray(array, dtype=np.float64)
    if not np.isfinite(out).all():
        raise FileProblem(f"{name[:100]} holds NaN or infinite values")
    return out
