"""The Long context page's words: notes that read the data drawn."""

from __future__ import annotations

import math

import numpy as np

from explorer.figures.numbers import count, percent, plural
from explorer.stories.long_context.views import (
    AtDistance,
    Decay,
    Measured,
    Scaled,
    Wavelengths,
)
from relpos_lab.family.registry import model_words


def _verb(value: int, one: str, many: str) -> str:
    """A verb agreeing with ``value`` things: "1 of 16 pairs completes", "3 ... complete"."""
    return one if value == 1 else many


def wavelength_note(w: Wavelengths) -> str:
    """Which pairs complete a turn within the training length and within n."""
    inside, within_n = w.turning(w.context), w.turning(w.n)
    pairs = len(w.wavelength)
    words = (
        f"With base {w.base:,.0f} and d = {w.head_dim}, {inside} of {plural(pairs, 'pair')} "
        f"{_verb(inside, 'completes', 'complete')} a turn within the training length of "
        f"{w.context} characters (the shortest wavelength is {w.wavelength[0]:.1f}, the longest "
        f"{w.wavelength[-1]:,.0f})"
    )
    if within_n != inside:
        words += f"; within n = {w.n}, {within_n or 'none'} {_verb(within_n, 'does', 'do')}"
    never = pairs - inside
    if never == 0:
        return words + ". Every pair turned fully in training."
    return (
        words + f". The other {plural(never, 'pair')} never turned fully in training: at longer "
        f"distances {_verb(never, 'its angle reaches', 'their angles reach')} values the model "
        "never saw."
    )


def decay_note(d: Decay, layer: int) -> str:
    """How far the bound falls by the training length, and how the heads' mean logit moves."""
    at = min(d.context, len(d.distance) - 1)
    fall = d.bound[at] / d.bound[0]
    curves = d.mean_logit[layer]
    near = curves[:, 1 : d.context].mean(1)
    far = curves[:, d.context :].mean(1)
    head = int(np.argmax(np.abs(near - far)))
    return (
        f"At base {d.base:,.0f} the bound at r = {at} is {fall:.0%} of its value at r = 0. "
        f"In layer {layer} of the trained model, head {head} changes most past the training "
        f"length: its mean logit is {near[head]:.2f} for 1 ≤ r < {d.context} and "
        f"{far[head]:.2f} for r ≥ {d.context}."
    )


def scaled_note(s: Scaled) -> str:
    """Which scaling keeps the fastest pair and how far each stretches the slowest."""
    plain = s.wavelength["none"]
    parts = []
    for name, length in s.wavelength.items():
        if name == "none":
            continue
        keep = int(np.isclose(length, plain, rtol=1e-9).sum())
        parts.append(
            f"{name} keeps {plural(keep, 'pair')} and stretches the slowest "
            f"{length[-1] / plain[-1]:.1f}x"
        )
    yarn = s.attention_factor.get("yarn", 1.0)
    return (
        f"At s = {s.factor}: " + "; ".join(parts) + f". YaRN also multiplies q and k by {yarn:.3f}."
    )


def zero_shot_note(m: Measured, rows: list[str]) -> str:
    """Each row's bits per character at the longest length against no scaling, and at 1x."""
    longest = int(m.lengths[-1])
    plain = m.zero_shot["none"]
    best = min(rows, key=lambda row: m.zero_shot[row][-1])
    parts = [f"{row} {m.zero_shot[row][-1]:.2f}" for row in rows if row != "none"]
    return (
        f"At {count(longest)} characters RoPE alone spends {plain[-1]:.2f} bits per character "
        f"({plain[0]:.2f} at {m.context}); " + ", ".join(parts) + f". Best: {best} "
        f"({m.zero_shot[best][-1]:.2f})."
    )


def listed(names: list[str]) -> str:
    """Models in words: "the T5 model, the RoPE model and the ALiBi model"."""
    words = [model_words(name) for name in names]
    if not words:
        return "no model"
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def sink_note(m: Measured, layer: int) -> str:
    """The model whose largest head leans most on the first characters at the longest n,
    against the uniform share, and what keeping them in a window does."""
    longest = int(m.lengths[-1])
    top = {name: float(share[layer].max(0)[-1]) for name, share in m.share.items()}
    name = max(top, key=top.get)
    helped = [n for n, w in m.window.items() if w["keep"] < w["drop"] - 0.01]
    hurt = [n for n, w in m.window.items() if w["keep"] > w["drop"] + 0.01]
    return (
        f"In texts of {count(longest)} characters, in layer {layer}, the largest head of "
        f"{model_words(name)} puts {top[name]:.1%} of its attention on the first 4 characters "
        f"(uniform: {m.uniform[-1]:.1%}). In a window of {plural(m.cache, 'key')}, keeping the "
        f"first 4 helps {listed(helped)} and hurts {listed(hurt)} by more than 0.01 bits."
    )


def window_table(m: Measured) -> str:
    """Bits per character with every key, and with a window that drops or keeps the first 4."""
    lines = [
        f"| model | every key ({m.text}) | window of {m.cache}, drop | keep first 4 |",
        "|---|---:|---:|---:|",
    ]
    for name, bpc in m.window.items():
        lines.append(
            f"| {m.described(name)} | {m.full[name]:.3f} | {bpc['drop']:.3f} | {bpc['keep']:.3f} |"
        )
    return "\n".join(lines)


def decay_caption(texts: int, length: int) -> str:
    """What the decay figure draws and on what text."""
    return (
        "Top: Su et al.'s bound (mean |S_j|) against r. Bottom: the trained RoPE model's logit "
        f"averaged over queries at each distance, on {plural(texts, 'held-out text')} of "
        f"{plural(length, 'character')}. Dashed: the training length."
    )


def sink_caption(m: Measured, first: int, rows: int) -> str:
    """What the sink figure measures: the stored run's lengths, not the sidebar's n."""
    lengths = [int(n) for n in m.lengths]
    return (
        f"Per model (a marker and dash each), the head of this layer that puts most attention "
        f"on the first {plural(first, 'character')}, from the last "
        f"{plural(rows, 'query', 'queries')} of held-out texts of n = {count(lengths[0])} to "
        f"{count(lengths[-1])} characters (the x axis: {', '.join(map(count, lengths))}; the "
        "stored run's lengths, whatever the sidebar's n); dashed grey, no markers: a query "
        "that spreads its weight evenly."
    )


def rule_values(rope_type: str, factor: int, context: int, defaults: dict[str, float]) -> str:
    """The numbers a rule's formula takes on this page: L0 is the trained model's length."""
    l0 = f"L0 = {context}, the trained model's length"
    if rope_type == "linear":
        return f"Here s = {factor}: every wavelength grows {factor}x."
    if rope_type == "dynamic":
        return f"Here {l0}, s = {factor}, and the figure reads n = s·L0 = {factor * context}."
    if rope_type == "yarn":
        return (
            f"Here {l0}, s = {factor}, β_fast = {defaults['beta_fast']:g} and β_slow = "
            f"{defaults['beta_slow']:g} (γ_t = 1 for a pair that turns at least β_fast times "
            "within L0, 0 for one that turns fewer than β_slow times)."
        )
    if rope_type == "llama3":
        low, high = defaults["low_freq_factor"], defaults["high_freq_factor"]
        return (
            f"Here {l0} (Llama 3.1's own is 8,192), s = {factor}, l = {low:g}, h = {high:g}: a "
            f"wavelength below L0/h = {context / high:g} characters keeps θ_t, one above "
            f"L0/l = {context / low:g} takes θ_t / s."
        )
    raise ValueError(f"rope_type must be linear, dynamic, yarn or llama3, got {rope_type!r}")


def _number(value: float) -> str:
    """Three significant digits, never in e-notation: -1,997, 37, 0.00658, 0.0000283."""
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{max(0, 2 - math.floor(math.log10(abs(value))))}f}"


def pair_note(at: AtDistance, i: int, j: int) -> str:
    """The picked pair read at its distance: each rotary pair's angle and the bound there (the
    black lines on the wavelength and decay figures)."""
    r = at.distance
    pairs = len(at.angle)
    words = f"The picked pair (i, j) = ({i}, {j}) is read at j - i = {r}. "
    if r == 0:
        return words + (
            "A key at its query's own position is not rotated at all (every angle is 0): the "
            f"logit is q · k, and the bound is at its largest, {at.bound:.3g}."
        )
    turns = np.abs(at.angle) / (2 * np.pi)
    return words + (
        f"At base {at.base:,.0f} RoPE rotates pair t by (j - i)·θ_t: pair 0 by "
        f"{_number(at.angle[0])} rad ({_number(turns[0])} turns), pair {pairs - 1} by "
        f"{_number(at.angle[-1])} rad ({_number(turns[-1])} turns); "
        + (
            f"{at.turned} of {plural(pairs, 'pair')} {_verb(at.turned, 'turns', 'turn')} fully "
            f"over it (the bars up to the black line at {abs(r)})"
            if at.turned
            else f"no pair turns fully over it (every bar is above the black line at {abs(r)})"
        )
        + f". Su et al.'s bound at |r| = {abs(r)} is "
        f"{at.bound:.3g}, {percent(at.bound, at.bound_at_zero)} of its value at r = 0."
    )


def pair_decay_note(at: AtDistance, layer: int) -> str:
    """The trained model's mean logit at the picked pair's i - j, in ``layer``."""
    r = -at.distance  # the decay figure's r = i - j
    if r < 0:
        return (
            f"The picked pair's key comes after its query (i - j = {r}): the trained model is "
            "causal and never reads such a key, so its mean logit has no value there; the "
            f"bound's size is the same at r = {-r}."
        )
    if at.mean_logit is None:
        return (
            f"The stored mean logit ends at r = {at.stored - 1}: the picked pair's i - j = {r} "
            "is past it."
        )
    logits = at.mean_logit[layer]
    top = int(np.argmax(logits))
    where = "" if r == 0 else " (solid black)"
    heads = (
        f"heads 0-{len(logits) - 1} (highest: head {top})" if len(logits) > 1 else "its one head"
    )
    return (
        f"At the picked pair's r = i - j = {r}{where}, layer {layer}'s mean logit is "
        + ", ".join(f"{v:.2f}" for v in logits)
        + f" for {heads}."
    )


def decay_marks(at: AtDistance | None) -> str:
    """What the decay figure's solid black lines are (none at r = 0: a log axis)."""
    if at is None or at.distance == 0:
        return ""
    r = -at.distance
    if r < 0:
        return f" Solid black, top only: |j - i| = {-r} (the bound's size is even in r)."
    return f" Solid black: the picked pair's r = i - j = {r}."
