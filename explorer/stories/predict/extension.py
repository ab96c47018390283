"""Section 3's RoPE under a context extension: the family's RoPE model on the same passage with
its rotary frequencies changed by one ``rope_scaling`` type of the catalogue at factor
s = passage length / training length, zero-shot (no weight changes), as the length table of
``python -m relpos_lab.family long`` scores it: theta'_t from
``relpos_core.schemes.rope.rope_frequencies``, and YaRN's factor on q and k."""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from explorer.frame.memory import cached
from explorer.stories.predict.text import MODEL_NAMES, RUNNING_FORMULA, loss_note, model_label
from explorer.stories.predict.views import PASSAGE_LENGTHS, LossAlong, passage_bits
from explorer.weights.trained import family_model
from relpos_core.schemes.catalogue import ROPE_SCALINGS, rope_scaling
from relpos_lab.family.long_context import ROPE_MODEL, scaled, scaling_config
from relpos_lab.family.registry import describe

NONE = "none"
EXTENSIONS = (NONE,) + tuple(s.rope_type for s in ROPE_SCALINGS)  # the control's options
LABEL = "RoPE's context extension"
HELP = (
    "Adds the RoPE model with this rope_scaling, s = passage length / training length, to the "
    "curves below: zero-shot, the trained weights unchanged."
)


def key(rope_type: str) -> str:
    """The column of the extended model in the passage's bits (and the download)."""
    return f"{ROPE_MODEL}+{rope_type}"


def factor(length: int, context: int) -> float:
    """s = the passage's length over the training length (1 within it)."""
    return max(1.0, length / context)


def label(rope_type: str, length: int, context: int) -> str:
    """The curve's name: which model, which rule, which factor."""
    entry = rope_scaling(rope_type)
    return f"RoPE ({ROPE_MODEL}) + {entry.label}, s = {factor(length, context):g}"


def curve_names(rope_type: str, length: int, context: int) -> dict[str, str]:
    """Every family model's label, and the extended model's when one is picked."""
    names = {n: model_label(n) for n in MODEL_NAMES}
    if rope_type != NONE:
        names[key(rope_type)] = label(rope_type, length, context)
    return names


@cached(4)
def extended_bits(length: int, rope_type: str) -> np.ndarray:
    """(length,) bits the RoPE model spends on each character of the passage with
    ``rope_type`` scaling; a copy of the model is changed, never the one every visitor shares."""
    if length not in PASSAGE_LENGTHS:
        raise ValueError(f"length must be one of {PASSAGE_LENGTHS}, got {length}")
    rope_scaling(rope_type)  # names the allowed types when it is none of them
    shared, _ = family_model(ROPE_MODEL)
    model = copy.deepcopy(shared)
    context = model.config.context
    config = scaling_config(rope_type, factor(length, context), context)
    with scaled(model, config, seq_len=length):
        return passage_bits(model, length)


def with_extension(loss: LossAlong, rope_type: str) -> LossAlong:
    """``loss`` with the extended RoPE model's bits as one more column (none: unchanged)."""
    if rope_type == NONE:
        return loss
    bits = {**loss.bits, key(rope_type): extended_bits(loss.length, rope_type)}
    return replace(loss, bits=bits)


def running_formula(rope_type: str) -> str:
    """The running mean's formula, and the picked rule's new frequencies beside it."""
    if rope_type == NONE:
        return RUNNING_FORMULA
    return RUNNING_FORMULA + r",\qquad " + rope_scaling(rope_type).rule


def notes(loss: LossAlong, rope_type: str, context: int) -> list[str]:
    """The notes under the curves: which curve moves most and least past the training length,
    the extended model counted when one is picked; then the extension's own."""
    names = {n: describe(n) for n in MODEL_NAMES}
    if rope_type == NONE:
        return [loss_note(loss, context, names)]
    names[key(rope_type)] = label(rope_type, loss.length, context)
    return [loss_note(loss, context, names), extension_note(loss, rope_type, context)]


def extension_note(loss: LossAlong, rope_type: str, context: int) -> str:
    """The extended model's bits per character over the passage beside RoPE's own and the
    best of the others."""
    name = rope_scaling(rope_type).label
    plain = float(loss.running_mean(ROPE_MODEL)[-1])
    extended = float(loss.running_mean(key(rope_type))[-1])
    others = {n: float(loss.running_mean(n)[-1]) for n in MODEL_NAMES}
    best = min(others, key=others.get)
    if loss.length <= context:
        return (
            f"At {loss.length} characters, within the training length, s = 1 and {name} "
            f"changes nothing: {extended:.3f} against RoPE's own {plain:.3f} bits per character."
        )
    verb = "recovers part of the loss" if extended < plain else "does not help"
    return (
        f"Over {loss.length} characters ({loss.length // context} x the training length), RoPE "
        f"with {name} at s = {factor(loss.length, context):g} spends {extended:.3f} bits per "
        f"character against {plain:.3f} without it: it {verb}, zero-shot. The best model on "
        f"this passage, {describe(best)}, spends {others[best]:.3f}."
    )
