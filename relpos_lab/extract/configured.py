"""ALiBi and RoPE, which hold no tensor: what a config states of them, every field checked.

- ALiBi: ``alibi`` (Falcon), ``attn_config.alibi`` with ``alibi_bias_max`` (MPT), a BLOOM model
  type, or this library's family checkpoint; the head count, from which the slopes follow.
- RoPE: ``rope_theta``, ``rotary_emb_base`` or ``rope_scaling``, a model type that always rotates,
  or this library's family checkpoint (``scheme_params.base``); the rotated width per head
  (``head_dim`` or hidden size / heads, times ``partial_rotary_factor``), ``rope_scaling`` and
  ``max_position_embeddings``.
"""

from __future__ import annotations

import json
import math

import relpos_core.schemes.alibi.checkpoints as alibi_layout
import relpos_core.schemes.rope.checkpoints as rope_layout
from relpos_lab.extract.fields import Fields
from relpos_lab.extract.positions import MAX_SCALING, Alibi, Rope

ROTARY_TYPES = rope_layout.MODEL_TYPES  # model types that use RoPE with no key naming it
HEAD_KEYS = ("n_head", "num_attention_heads", "n_heads", "heads", "num_heads")
MAX_HEADS = 4096
MAX_WIDTH = 2**20  # a model's hidden size (the largest published are near 2**15)
MAX_POSITIONS = 2**31
DEFAULT_BASE = 10000.0  # RoFormer's base, and transformers' default without rope_theta


def family_params(config: Fields, scheme: str) -> Fields | None:
    """The scheme keywords of one of this library's family checkpoints for ``scheme``."""
    if config.raw("position") != scheme:
        return None
    return config.table("scheme_params") or Fields({}, config.where, "scheme_params.")


def heads_of(config: Fields) -> int | None:
    return config.first(HEAD_KEYS, "integer", 1, MAX_HEADS)[1]


def find_alibi(config: Fields, notes: list[str]) -> Alibi | None:
    attn = config.table("attn_config") or Fields({}, config.where, "attn_config.")
    says = (
        config.flag(alibi_layout.FLAG)
        or attn.flag(alibi_layout.FLAG)
        or config.text("model_type") in alibi_layout.MODEL_TYPES
        or family_params(config, "alibi") is not None
    )
    if not says:
        return None
    heads = heads_of(config)
    if heads is None:
        notes.append(f"{config.where} says ALiBi but gives no head count ({', '.join(HEAD_KEYS)})")
        return None
    max_bias = attn.real(alibi_layout.MAX_BIAS, 0, 64, low_open=True)
    return Alibi(heads, 8.0 if max_bias is None else max_bias)


def find_rope(config: Fields, notes: list[str]) -> Rope | None:
    family = family_params(config, "rope")
    if family is None and not any(k in config for k in rope_layout.FIELDS):
        if config.text("model_type") not in ROTARY_TYPES:
            return None
    head_dim = rotated_width(config)
    if head_dim is None:
        notes.append(
            f"{config.where} says RoPE but gives no head size (head_dim, or hidden_size and "
            "num_attention_heads)"
        )
        return None
    _, base = (family or Fields({}, "")).first(("base",), "real", 1, 1e9, low_open=True)
    if base is None:
        _, base = config.first(rope_layout.BASE_FIELDS, "real", 1, 1e9, low_open=True)
    if base is None:
        base = DEFAULT_BASE
        if family is None:
            notes.append(f"no rope_theta in {config.where}: the usual {DEFAULT_BASE:g} assumed")
    _, longest = config.first(("max_position_embeddings", "context"), "integer", 1, MAX_POSITIONS)
    return Rope(base, head_dim, scaling_text(config), longest)


def rotated_width(config: Fields) -> int | None:
    """The rotated dimensions per head: head_dim (or hidden size / heads) times the rotary
    share, rounded down to whole pairs; None when the config gives no head size."""
    head_dim = config.integer("head_dim", 2, MAX_HEADS)
    if head_dim is None:
        width_key, width = config.first(("hidden_size", "d_model"), "integer", 1, MAX_WIDTH)
        heads = heads_of(config)
        if width is None or heads is None:
            return None
        head_dim = width // heads
        if not 2 <= head_dim <= MAX_HEADS:
            raise config.problem(
                width_key, width, f"a multiple of the {heads} heads giving 2 to {MAX_HEADS} "
                f"dimensions per head, not {head_dim}"
            )  # fmt: skip
    share_key, share = config.first(
        ("partial_rotary_factor", "rotary_pct"), "real", 0, 1, low_open=True
    )
    rotated = int(head_dim * (1.0 if share is None else share)) // 2 * 2
    if rotated < 2:
        raise config.problem(
            share_key, share, f"a share of {head_dim} dimensions that rotates a pair"
        )
    return rotated


def scaling_text(config: Fields) -> str | None:
    """The config's rope_scaling as JSON text, small and flat: names to numbers, text or short
    lists of numbers (LongRoPE's per-pair factors); the page applies the types it knows."""
    scaling = config.table("rope_scaling")
    if scaling is None:
        return None
    if len(scaling.values) > 32:
        raise config.problem("rope_scaling", scaling.values, "at most 32 fields")
    for key, value in scaling.values.items():
        if not isinstance(key, str) or len(key) > 64:
            raise config.problem(
                "rope_scaling", scaling.values, "field names of at most 64 characters"
            )
        numbers = value if isinstance(value, list) and len(value) <= 1024 else [value]
        for number in numbers:
            fits = (
                number is None
                or isinstance(number, bool)
                or (isinstance(number, str) and len(number) <= 64)
                or (isinstance(number, int) and number.bit_length() <= 64)
                or (isinstance(number, float) and math.isfinite(number))
            )
            if not fits:
                raise scaling.problem(
                    key, value, "a finite number, a short text or a list of numbers"
                )
    text = json.dumps(scaling.values, sort_keys=True)
    if len(text) > MAX_SCALING:
        raise config.problem("rope_scaling", scaling.values, f"at most {MAX_SCALING:,} characters")
    return text
