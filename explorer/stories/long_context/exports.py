"""What the Long context page's download holds, and its controls (URL-bound)."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled
from explorer.frame.widgets import choice
from explorer.stories.long_context.views import (
    BASES,
    FACTORS,
    AtDistance,
    Decay,
    Measured,
    Scaled,
    Wavelengths,
)


def base_picker() -> int:
    return choice(
        "RoPE base (θ_t = base^(-2t/d))", BASES, "lc_base", kind="select_slider", default=10_000,
        format_func=lambda b: f"{b:,}",
    )  # fmt: skip


def factor_picker() -> int:
    return choice("Scaling factor s", FACTORS, "lc_factor", default=4)


def layer_picker(layers: int, key: str) -> int:
    return choice("Layer", tuple(range(layers)), key, default=0)


def rule_picker(fixed: int) -> str:
    """Which factor the zero-shot figure shows: the length ratio, or the fixed one."""
    return choice("Factor s", ("s = ratio", f"s = {fixed}"), "lc_rule")


def rows_of(m: Measured, rule: str) -> list[str]:
    return ["none", *(row for row in m.zero_shot if row.endswith(rule))]


def arrays(
    w: Wavelengths,
    d: Decay,
    s: Scaled,
    m: Measured,
    layer: int,
    sink_layer: int,
    at: AtDistance | None = None,
) -> dict:
    """The page's arrays as drawn: the decay's curves in ``layer`` (its section's picker), the
    sinks in ``sink_layer`` (theirs); with a picked pair, each rotary pair's angle at j - i."""
    layers, heads, _ = d.mean_logit.shape
    pairs = [str(t) for t in range(len(w.wavelength))]
    picked = {}
    if at is not None:
        picked["picked_rotation"] = Labelled(
            np.stack([at.angle, at.angle / (2 * np.pi)], 1),
            f"(j - i) theta_t at the picked pair's j - i = {at.distance}, base {at.base:,.0f}",
            rows=pairs, cols=["radians", "turns"], corner="pair t",
        )  # fmt: skip
    return {
        "wavelengths": Labelled(
            w.wavelength[:, None], f"2 pi base^(2t/d), base {w.base:,.0f}, d {w.head_dim}",
            rows=pairs, cols=["wavelength"], corner="pair t",
        ),
        "decay_bound": Labelled(
            d.bound[:, None], f"Su et al.'s mean |S_j|, base {d.base:,.0f}",
            rows=[str(r) for r in d.distance], cols=["bound"], corner="distance r",
        ),
        "mean_logit": Labelled(
            d.mean_logit[layer].T, f"trained RoPE model, layer {layer}: mean logit by distance",
            rows=[str(r) for r in d.distance], cols=[f"head {h}" for h in range(heads)],
            corner="distance r \\ head",
        ),
        "scaled_wavelengths": Labelled(
            np.stack(list(s.wavelength.values()), 1),
            f"wavelength per pair at s = {s.factor}", rows=pairs, cols=list(s.wavelength),
            corner="pair t \\ scaling",
        ),
        "zero_shot_bpc": Labelled(
            np.stack(list(m.zero_shot.values()), 1),
            "RoPE model, bits per character", rows=[str(n) for n in m.lengths],
            cols=list(m.zero_shot), corner="length \\ scaling",
        ),
        "sink_share": Labelled(
            np.stack([*(v[sink_layer].max(0) for v in m.share.values()), m.uniform], 1),
            f"largest head's share on the first 4 characters, layer {sink_layer}; last column: "
            "the share a uniform query gives",
            rows=[str(n) for n in m.lengths], cols=[*m.share, "uniform"],
            corner="text length \\ model",
        ),
        **picked,
    }  # fmt: skip
