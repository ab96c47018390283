"""How a model stretches RoPE past its training length: the ``rope_type`` values of the
``rope_scaling`` dict its config carries, each with its paper and its rule (no torch)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RopeScaling:
    """One way to stretch RoPE past its training length: a ``rope_type`` of the ``rope_scaling``
    dict a model's config carries. Not a scheme of its own: it changes RoPE's frequencies (and
    maybe the logits' scale) on RoPE's own weights, so it is read beside RoPE's entry.

    ``keys`` are the dict's keys beside ``rope_type`` that the type reads, ``required`` those it
    cannot do without, ``defaults`` the published values of the others."""

    rope_type: str  # the config's value, the URL value
    label: str  # as prose names it: "YaRN"
    title: str  # label and paper year
    paper: str
    rule: str  # LaTeX: pair t's new frequency theta'_t from theta_t = base^(-2t/d)
    keys: tuple[str, ...]
    required: tuple[str, ...] = ("factor", "original_max_position_embeddings")
    defaults: tuple[tuple[str, float], ...] = ()


ROPE_SCALINGS: tuple[RopeScaling, ...] = (
    RopeScaling(
        "linear",
        "Position interpolation",
        "Position interpolation (Chen et al. 2023)",
        'Chen et al. 2023, "Extending Context Window of Large Language Models via Positional '
        'Interpolation"',
        r"\theta'_t = \theta_t / s",
        ("factor", "original_max_position_embeddings"),
        required=("factor",),
    ),
    RopeScaling(
        "dynamic",
        "Dynamic NTK",
        "Dynamic NTK-aware scaling (bloc97, emozilla 2023)",
        "the NTK-aware base change (bloc97 2023), made dynamic (emozilla 2023)",
        r"\theta'_t = \bigl(b\,\alpha^{d/(d-2)}\bigr)^{-2t/d},\ "
        r"\alpha = \max\bigl(1,\ s\,n / L_0 - (s - 1)\bigr)",
        ("factor", "original_max_position_embeddings"),
    ),
    RopeScaling(
        "yarn",
        "YaRN",
        "YaRN (Peng et al. 2023)",
        'Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language Models"',
        r"\theta'_t = (1 - \gamma_t)\,\theta_t / s + \gamma_t\,\theta_t,\ "
        r"q, k \times (0.1 \ln s + 1)",
        (
            "factor",
            "original_max_position_embeddings",
            "beta_fast",
            "beta_slow",
            "attention_factor",
        ),
        defaults=(("beta_fast", 32.0), ("beta_slow", 1.0)),
    ),
    RopeScaling(
        "llama3",
        "Llama 3",
        "Llama 3's rule (Meta 2024)",
        "Llama 3.1's published frequency rule (Meta 2024)",
        r"\theta'_t = \theta_t \text{ if } \lambda_t < L_0/h,\ \theta_t / s \text{ if } "
        r"\lambda_t > L_0/l, \text{ else a blend}",
        ("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"),
        defaults=(("low_freq_factor", 1.0), ("high_freq_factor", 4.0)),
    ),
)


def rope_scaling(rope_type: object) -> RopeScaling:
    """The declaration of ``rope_type``; a ValueError naming the known types otherwise."""
    for scaling in ROPE_SCALINGS:
        if scaling.rope_type == rope_type:
            return scaling
    known = ", ".join(s.rope_type for s in ROPE_SCALINGS)
    raise ValueError(f"rope_type must be one of {known}, got {rope_type!r}")
