"""Where each published layout keeps its position parameters, and how to recognise them.

A checkpoint is a set of named tensors (read lazily: ``shapes`` first, ``get`` only for what is
found) and, usually, a config. Looked for:

- T5, mT5, LongT5, UMT5: ``<encoder|decoder>.block.<L>....relative_attention_bias.weight``
  (num_buckets, heads), with ``relative_attention_num_buckets`` and
  ``relative_attention_max_distance`` from the config (T5's 32 and 128 without one); LongT5's
  ``global_relative_attention_bias`` as a stack of its own. The encoder buckets both directions,
  the decoder one.
- Shaw et al.'s layer as widely copied (and as ``relpos_core.layer`` writes it):
  ``relative_position_k.embeddings_table`` and ``relative_position_v.embeddings_table``, and this
  library's scheme: ``scheme.table_k`` and ``scheme.table_v``; (2k + 1, d) each.
- ALiBi: no tensor; a config that says so (``alibi``, ``attn_config.alibi``, BLOOM) and its head
  count.
- RoPE: no tensor; a config with ``rope_theta``, ``rotary_emb_base`` or ``rope_scaling``, or a
  model type that always rotates (Llama and its relatives), and its head size.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import relpos_core.schemes.shaw.checkpoints as shaw_layout
import relpos_core.schemes.t5.checkpoints as t5_layout
from relpos_core.schemes.folders import parts as folder_parts
from relpos_lab.extract.configured import MAX_HEADS, family_params, find_alibi, find_rope
from relpos_lab.extract.fields import Fields, load_json
from relpos_lab.extract.positions import FORMAT, Alibi, Positions, Rope, ShawLayer, T5Stack
from relpos_lab.extract.projected import from_entries
from relpos_lab.extract.projected_finder import find_projected
from relpos_lab.extract.safetensors_file import FileProblem


def looked_for() -> tuple[str, ...]:
    """What each scheme folder says checkpoints store it as (its checkpoints module), in its
    order: one line each, for a learner told that nothing was found."""
    layouts = sorted(folder_parts("checkpoints"), key=lambda found: found[1].ORDER)
    return tuple(line for _, layout in layouts for line in layout.LOOKED_FOR)


LOOKED_FOR = looked_for()  # the folders' lines when the extractor was imported
T5_BIAS = t5_layout.BIAS_NAMES
MAX_BUCKETS = 4096
MAX_TABLE_ROWS = 2 * 65536 + 1
MAX_TABLE_WIDTH = 65536
MAX_VALUES = 2**24  # every position tensor read, together (a published model's: thousands)
MAX_LAYER = 9999

Shapes = dict[str, tuple[int, ...]]
Getter = Callable[[str], np.ndarray]


def find_positions(
    source: str, shapes: Shapes, get: Getter, config: dict, config_name: str = "config.json"
) -> Positions:
    """Every position parameter of one checkpoint: its tensors' ``shapes``, ``get(name)`` for
    their values, and its ``config`` ({} when none came with it), named ``config_name`` in
    messages."""
    notes: list[str] = []
    fields = Fields(config, config_name)
    get = counted(get, shapes)
    t5 = tuple(find_t5(shapes, get, fields, notes))
    shaw = tuple(find_shaw(shapes, get))
    alibi, rope = find_alibi(fields, notes), find_rope(fields, notes)
    projected = tuple(find_projected(shapes, get, fields, notes))
    return Positions(source, t5, shaw, alibi, rope, tuple(notes), projected)


def counted(get: Getter, shapes: Shapes) -> Getter:
    """``get`` that refuses once the tensors read would hold over MAX_VALUES values: a state
    dict's tensor may be a view whose shape claims far more than its file holds."""
    left = [MAX_VALUES]

    def read(name: str) -> np.ndarray:
        left[0] -= math.prod(shapes[name])
        if left[0] < 0:
            raise FileProblem(
                f"the position tensors would hold over {MAX_VALUES:,} values (at "
                f"{name[:80]!r}); a model's position parameters are far fewer"
            )
        return get(name)

    return read


def number_part(part: str) -> int | None:
    """A dotted name's part as a layer number: at most 6 ASCII digits ('²' and '٣' are not)."""
    if len(part) <= 6 and part.isascii() and part.isdigit():  # T5Stack refuses > MAX_LAYER
        return int(part)
    return None


def t5_name(name: str) -> tuple[str, int, bool] | None:
    """(stack, layer, global) of a name in T5's layout,
    ``<encoder|decoder>.block.<L>.[...].[global_]relative_attention_bias.weight``; read part by
    part, in time linear in the name's length."""
    parts = name.split(".")
    if len(parts) < 5 or parts[-1] != "weight" or parts[-2] not in T5_BIAS:
        return None
    for i in range(len(parts) - 4):  # stack, block, L, then the bias's own two parts
        if parts[i] in t5_layout.STACKS and parts[i + 1] == "block":
            layer = number_part(parts[i + 2])
            if layer is not None:
                return parts[i], layer, parts[-2] == T5_BIAS[1]
    return None


def layer_of(name: str, fallback: int) -> int:
    """The first layer number among a dotted name's parts (blocks.3.attn... -> 3)."""
    for part in name.split("."):
        if (number := number_part(part)) is not None:
            return number
    return fallback


def t5_config(config: Fields) -> tuple[int | None, int | None]:
    """(num_buckets, max_distance) the config states, each checked."""
    family = family_params(config, "t5")
    if family is not None:
        buckets = family.integer("num_buckets", 2, MAX_BUCKETS)
        max_distance = family.integer("max_distance", 1, 2**40)
        buckets = t5_layout.DEFAULT_BUCKETS if buckets is None else buckets
        return buckets, t5_layout.DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
    return (
        config.integer(t5_layout.CONFIG_BUCKETS, 2, MAX_BUCKETS),
        config.integer(t5_layout.CONFIG_MAX_DISTANCE, 1, 2**40),
    )


def find_t5(shapes: Shapes, get: Getter, config: Fields, notes: list[str]) -> list[T5Stack]:
    family = family_params(config, "t5") is not None
    found = []
    for name, shape in shapes.items():
        parsed = t5_name(name)
        if parsed:
            stack, layer, glob = parsed
            stack, bidirectional = stack + (" (global)" if glob else ""), stack == "encoder"
        elif family and name.endswith(t5_layout.FAMILY_BIAS):
            stack, layer, bidirectional = "model", layer_of(name, len(found)), False  # causal
        elif name.endswith("relative_attention_bias.weight"):
            stack, layer = "model", layer_of(name, len(found))
            bidirectional = not config.flag("is_decoder")
        else:
            continue
        buckets, max_distance = t5_config(config)
        if len(shape) != 2 or not 2 <= shape[0] <= MAX_BUCKETS or not 1 <= shape[1] <= MAX_HEADS:
            raise FileProblem(
                f"{name[:100]} has shape {shape}; a T5 bias is (num_buckets, heads) with "
                f"num_buckets 2 to {MAX_BUCKETS} and 1 to {MAX_HEADS} heads"
            )
        if buckets is not None and shape[0] != buckets:
            raise FileProblem(
                f"{name[:100]} has {shape[0]} rows but {config.where} says "
                f"relative_attention_num_buckets = {buckets}"
            )
        if max_distance is None:
            max_distance = t5_layout.DEFAULT_MAX_DISTANCE
            note = f"no relative_attention_max_distance in {config.where}: T5's 128 assumed"
            notes.extend([note] if note not in notes else [])
        found.append(T5Stack(stack, layer, float32(get(name)), bidirectional, max_distance))
    order = {"encoder": 0, "encoder (global)": 1, "decoder": 2}
    return sorted(found, key=lambda s: (order.get(s.stack, 3), s.layer))


def find_shaw(shapes: Shapes, get: Getter) -> list[ShawLayer]:
    tables: dict[str, dict[str, str]] = {}  # prefix -> {"key": name, "value": name}
    for name in shapes:
        for suffix, part in shaw_layout.TABLES:
            if name == suffix or name.endswith("." + suffix):
                tables.setdefault(name[: -len(suffix)], {})[part] = name
    layers = []
    for index, (prefix, names) in enumerate(tables.items()):
        for name in names.values():  # the shape first: nothing is read that is not a table
            shape = shapes[name]
            if (
                len(shape) != 2
                or shape[0] % 2 == 0
                or shape[0] > MAX_TABLE_ROWS
                or not 1 <= shape[1] <= MAX_TABLE_WIDTH
            ):
                raise FileProblem(
                    f"{name[:100]} has shape {shape}; a Shaw table is (2k + 1, d) with 2k + 1 "
                    f"at most {MAX_TABLE_ROWS} and d 1 to {MAX_TABLE_WIDTH}"
                )
        if len({shapes[name] for name in names.values()}) > 1:
            raise FileProblem(f"the key and value tables of {prefix[:80] or 'the layer'} differ")
        read = {part: float32(get(name)) for part, name in names.items()}
        layers.append(ShawLayer(layer_of(prefix, index), read.get("key"), read.get("value")))
    return sorted(layers, key=lambda s: s.layer)


def float32(array: np.ndarray) -> np.ndarray:
    """A table as finite float32 values, or a FileProblem."""
    if array.dtype.kind not in "fiu":
        raise FileProblem(f"a position table holds {array.dtype} values, not numbers")
    out = np.asarray(array, dtype=np.float32)
    if not np.isfinite(out).all():
        raise FileProblem("a position table holds NaN or infinite values")
    return out


def read_extracted(source: str, shapes: Shapes, get: Getter, metadata: dict) -> Positions:
    """A file the extractor wrote (``metadata["format"] == FORMAT``), checked as any upload:
    each metadata entry is JSON text, parsed and read field by field."""
    if metadata.get("format") != FORMAT:
        raise FileProblem(f"not an extracted file (format {str(metadata.get('format'))[:40]!r})")

    def entry(key: str, default: str) -> object:
        return load_json(metadata.get(key, default), f"the extracted file's metadata {key!r}")

    t5_items, notes = entry("t5", "[]"), entry("notes", "[]")
    if not isinstance(t5_items, list) or not isinstance(notes, list):
        raise FileProblem("the extracted file's metadata 't5' and 'notes' must be lists")
    t5 = []
    for item in t5_items:
        if not isinstance(item, dict):
            raise FileProblem("the extracted file's metadata 't5' must list objects")
        fields = Fields(item, "the extracted file's metadata", "t5[].")
        name = fields.text("tensor")
        if name not in shapes:
            raise FileProblem(f"the metadata names a tensor {str(name)[:60]!r} the file lacks")
        bidirectional = fields.flag("bidirectional")
        layer, max_distance = (
            fields.integer("layer", 0, MAX_LAYER),
            fields.integer("max_distance", 1, 2**40),
        )
        stack = fields.text("stack", 40)
        if None in (bidirectional, layer, max_distance, stack):
            raise FileProblem("the extracted file's metadata 't5' lacks stack, layer, "
                              "bidirectional or max_distance")  # fmt: skip
        t5.append(T5Stack(stack, layer, float32(get(name)), bidirectional, max_distance))
    alibi, rope = entry("alibi", "null"), entry("rope", "null")
    try:
        alibi = Alibi(**alibi) if isinstance(alibi, dict) else None
        rope = Rope(**rope) if isinstance(rope, dict) else None
    except TypeError:  # a field Alibi or Rope does not have, or one missing
        raise FileProblem("the extracted file's metadata 'alibi' or 'rope' is malformed") from None
    # shaw/<layer>/key -> <layer>.scheme.table_k: the names find_shaw reads
    parts = {"key": "scheme.table_k", "value": "scheme.table_v"}
    renamed = {}
    for name in shapes:
        pieces = name.split("/")
        if (
            len(pieces) == 3
            and pieces[0] == shaw_layout.EXTRACTED
            and number_part(pieces[1]) is not None
            and pieces[2] in parts
        ):
            renamed[f"{pieces[1]}.{parts[pieces[2]]}"] = name
    shaw = find_shaw({new: shapes[old] for new, old in renamed.items()}, lambda n: get(renamed[n]))
    original = str(metadata.get("source", ""))[:200]
    notes = tuple(str(n)[:200] for n in notes)
    notes = (f"extracted from {original}", *notes) if original else notes
    projected = tuple(from_entries(entry("projected", "[]"), shapes, get))
    return Positions(source, tuple(t5), tuple(shaw), alibi, rope, notes, projected)
