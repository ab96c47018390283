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

import json
import re
from collections.abc import Callable

import numpy as np

from relpos_lab.extract.positions import FORMAT, Alibi, Positions, Rope, ShawLayer, T5Stack
from relpos_lab.extract.safetensors_file import FileProblem

LOOKED_FOR = (
    "T5's relative_attention_bias.weight (T5, mT5, LongT5, UMT5)",
    "Shaw's relative_position_k / relative_position_v.embeddings_table",
    "this library's scheme.table_k / scheme.table_v (or scheme.bias of its T5)",
    "ALiBi in the config (alibi, attn_config.alibi, a BLOOM model type)",
    "RoPE in the config (rope_theta, rotary_emb_base, rope_scaling, a Llama-family model type)",
)
T5_KEY = re.compile(
    r"(?:^|\.)(?P<stack>encoder|decoder)\.block\.(?P<layer>\d+)\."
    r"(?:.*\.)?(?P<glob>global_)?relative_attention_bias\.weight$"
)
ROTARY_TYPES = {  # model types that use RoPE with no key naming it in their config
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3",
    "gpt_neox", "olmo", "olmo2", "starcoder2", "cohere", "stablelm", "gptj", "deepseek_v3",
}  # fmt: skip
MAX_BUCKETS = 4096
MAX_TABLE_ROWS = 2 * 65536 + 1

Shapes = dict[str, tuple[int, ...]]
Getter = Callable[[str], np.ndarray]


def find_positions(source: str, shapes: Shapes, get: Getter, config: dict) -> Positions:
    """Every position parameter of one checkpoint: its tensors' ``shapes``, ``get(name)`` for
    their values, and its ``config`` ({} when none came with it)."""
    notes: list[str] = []
    t5 = tuple(find_t5(shapes, get, config, notes))
    shaw = tuple(find_shaw(shapes, get))
    return Positions(source, t5, shaw, find_alibi(config), find_rope(config), tuple(notes))


def layer_of(name: str, fallback: int) -> int:
    """The first integer among a dotted name's parts (blocks.3.attn... -> 3)."""
    for part in name.split("."):
        if part.isdigit():
            return int(part)
    return fallback


def family_params(config: dict, scheme: str) -> dict | None:
    """The scheme keywords of one of this library's family checkpoints for ``scheme``."""
    if config.get("position") == scheme:
        return dict(config.get("scheme_params") or {})
    return None


def find_t5(shapes: Shapes, get: Getter, config: dict, notes: list[str]) -> list[T5Stack]:
    family = family_params(config, "t5")
    found = []
    for name, shape in shapes.items():
        match = T5_KEY.search(name)
        if match:
            stack = match["stack"] + (" (global)" if match["glob"] else "")
            layer, bidirectional = int(match["layer"]), match["stack"] == "encoder"
        elif family is not None and name.endswith("scheme.bias"):
            stack, layer, bidirectional = "model", layer_of(name, len(found)), False  # causal
        elif name.endswith("relative_attention_bias.weight"):
            stack, layer = "model", layer_of(name, len(found))
            bidirectional = not config.get("is_decoder", False)
        else:
            continue
        if family is not None:
            buckets = family.get("num_buckets", 32)
            max_distance = family.get("max_distance", 128)
        else:
            buckets = config.get("relative_attention_num_buckets")
            max_distance = config.get("relative_attention_max_distance")
        if len(shape) != 2 or not 2 <= shape[0] <= MAX_BUCKETS or not 1 <= shape[1] <= 4096:
            raise FileProblem(
                f"{name[:100]} has shape {shape}; a T5 bias is (num_buckets, heads) with "
                f"num_buckets 2 to {MAX_BUCKETS}"
            )
        if buckets is not None and shape[0] != buckets:
            raise FileProblem(
                f"{name[:100]} has {shape[0]} rows but the config says "
                f"relative_attention_num_buckets = {buckets}"
            )
        if max_distance is None:
            max_distance = 128
            note = "no relative_attention_max_distance in a config: T5's 128 assumed"
            notes.extend([note] if note not in notes else [])
        found.append(T5Stack(stack, layer, float32(get(name)), bidirectional, int(max_distance)))
    order = {"encoder": 0, "encoder (global)": 1, "decoder": 2}
    return sorted(found, key=lambda s: (order.get(s.stack, 3), s.layer))


def find_shaw(shapes: Shapes, get: Getter) -> list[ShawLayer]:
    tables: dict[str, dict[str, str]] = {}  # prefix -> {"key": name, "value": name}
    for name in shapes:
        for suffix, part in (
            ("relative_position_k.embeddings_table", "key"),
            ("relative_position_v.embeddings_table", "value"),
            ("scheme.table_k", "key"),
            ("scheme.table_v", "value"),
        ):
            if name == suffix or name.endswith("." + suffix):
                tables.setdefault(name[: -len(suffix)], {})[part] = name
    layers = []
    for index, (prefix, names) in enumerate(tables.items()):
        read = {part: float32(get(name)) for part, name in names.items()}
        for part, table in read.items():
            if table.ndim != 2 or table.shape[0] % 2 == 0 or table.shape[0] > MAX_TABLE_ROWS:
                raise FileProblem(
                    f"{names[part][:100]} has shape {table.shape}; a Shaw table is (2k + 1, d)"
                )
        if len({t.shape for t in read.values()}) > 1:
            raise FileProblem(f"the key and value tables of {prefix[:80] or 'the layer'} differ")
        layers.append(ShawLayer(layer_of(prefix, index), read.get("key"), read.get("value")))
    return sorted(layers, key=lambda s: s.layer)


def heads_of(config: dict) -> int | None:
    for key in ("n_head", "num_attention_heads", "n_heads", "heads", "num_heads"):
        value = config.get(key)
        if isinstance(value, int) and 1 <= value <= 4096:
            return value
    return None


def find_alibi(config: dict) -> Alibi | None:
    attn = config.get("attn_config") if isinstance(config.get("attn_config"), dict) else {}
    says = (
        config.get("alibi") is True
        or attn.get("alibi") is True
        or config.get("model_type") == "bloom"
        or config.get("position") == "alibi"
    )
    heads = heads_of(config)
    if not says or heads is None:
        return None
    return Alibi(heads, float(attn.get("alibi_bias_max", 8.0)))


def find_rope(config: dict) -> Rope | None:
    family = family_params(config, "rope")
    keys = ("rope_theta", "rotary_emb_base", "rope_scaling")
    if family is None and not any(k in config for k in keys):
        if config.get("model_type") not in ROTARY_TYPES:
            return None
    heads = heads_of(config)
    width = config.get("hidden_size", config.get("d_model"))
    head_dim = config.get("head_dim") or (width // heads if width and heads else None)
    if not isinstance(head_dim, int) or head_dim < 2:
        return None
    share = config.get("partial_rotary_factor", config.get("rotary_pct", 1.0))
    rotated = int(head_dim * share) // 2 * 2
    base = (family or {}).get("base") or config.get("rope_theta") or config.get("rotary_emb_base")
    scaling = config.get("rope_scaling")
    return Rope(
        float(base or 10000.0),
        rotated,
        json.dumps(scaling, sort_keys=True) if isinstance(scaling, dict) else None,
        config.get("max_position_embeddings") or config.get("context"),
    )


def float32(array: np.ndarray) -> np.ndarray:
    """A table as finite float32 values, or a FileProblem."""
    if array.dtype.kind not in "fiu":
        raise FileProblem(f"a position table holds {array.dtype} values, not numbers")
    out = np.asarray(array, dtype=np.float32)
    if not np.isfinite(out).all():
        raise FileProblem("a position table holds NaN or infinite values")
    return out


def read_extracted(source: str, shapes: Shapes, get: Getter, metadata: dict) -> Positions:
    """A file the extractor wrote (``metadata["format"] == FORMAT``), checked as any upload."""
    if metadata.get("format") != FORMAT:
        raise FileProblem(f"not an extracted file (format {metadata.get('format')!r})")
    try:
        t5_items = json.loads(metadata.get("t5", "[]"))
        alibi = metadata.get("alibi")
        rope = metadata.get("rope")
        notes = tuple(str(n)[:200] for n in json.loads(metadata.get("notes", "[]")))
        t5 = []
        for item in t5_items:
            name = item["tensor"]
            if name not in shapes:
                raise FileProblem(f"the metadata names a tensor {name[:60]!r} the file lacks")
            t5.append(
                T5Stack(
                    str(item["stack"])[:40],
                    int(item["layer"]),
                    float32(get(name)),
                    bool(item["bidirectional"]),
                    int(item["max_distance"]),
                )
            )
        alibi = Alibi(**json.loads(alibi)) if alibi else None
        rope = Rope(**json.loads(rope)) if rope else None
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, FileProblem):
            raise
        raise FileProblem(f"the extracted file's metadata is malformed ({error})") from None
    # shaw/<layer>/key -> <layer>.scheme.table_k: the names find_shaw reads
    parts = {"key": "scheme.table_k", "value": "scheme.table_v"}
    renamed = {}
    for name in shapes:
        pieces = name.split("/")
        if len(pieces) == 3 and pieces[0] == "shaw" and pieces[1].isdigit() and pieces[2] in parts:
            renamed[f"{pieces[1]}.{parts[pieces[2]]}"] = name
    shaw = find_shaw({new: shapes[old] for new, old in renamed.items()}, lambda n: get(renamed[n]))
    original = str(metadata.get("source", ""))[:200]
    notes = (f"extracted from {original}", *notes) if original else notes
    return Positions(source, tuple(t5), tuple(shaw), alibi, rope, notes)
