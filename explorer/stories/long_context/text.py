"""The Long context page's words: notes that read the data drawn."""

from __future__ import annotations

import numpy as np

from explorer.stories.long_context.views import Decay, Measured, Scaled, Wavelengths


def wavelength_note(w: Wavelengths) -> str:
    """Which pairs complete a turn within the training length and within n."""
    inside, within_n = w.turning(w.context), w.turning(w.n)
    pairs = len(w.wavelength)
    words = (
        f"With base {w.base:,.0f} and d = {w.head_dim}, {inside} of {pairs} pairs complete a "
        f"turn within the training length of {w.context} characters (the shortest wavelength "
        f"is {w.wavelength[0]:.1f}, the longest {w.wavelength[-1]:,.0f})"
    )
    if within_n != inside:
        words += f"; within n = {w.n}, {within_n} do"
    never = pairs - inside
    return (
        words + f". The other {never} never turned fully in training: at longer distances "
        "their angles reach values the model never saw."
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
            f"{name} keeps {keep} pairs and stretches the slowest {length[-1] / plain[-1]:.1f}x"
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
        f"At {longest} characters RoPE alone spends {plain[-1]:.2f} bits per character "
        f"({plain[0]:.2f} at {m.context}); " + ", ".join(parts) + f". Best: {best} "
        f"({m.zero_shot[best][-1]:.2f})."
    )


def sink_note(m: Measured, layer: int) -> str:
    """The model whose largest head leans most on the first characters at the longest n,
    against the uniform share, and what keeping them in a window does."""
    longest = int(m.lengths[-1])
    top = {name: float(share[layer].max(0)[-1]) for name, share in m.share.items()}
    name = max(top, key=top.get)
    helped = [n for n, w in m.window.items() if w["keep"] < w["drop"] - 0.01]
    hurt = [n for n, w in m.window.items() if w["keep"] > w["drop"] + 0.01]
    return (
        f"At n = {longest}, in layer {layer}, {name}'s largest head puts {top[name]:.1%} of "
        f"its attention on the first 4 characters (uniform: {m.uniform[-1]:.1%}). In a window "
        f"of {m.cache} keys, keeping the first 4 helps {', '.join(helped) or 'no model'} and "
        f"hurts {', '.join(hurt) or 'no model'} by more than 0.01 bits."
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
