"""The URL-bound settings of the six position schemes, shared by the Position schemes and the
Compare schemes pages. Each control reads and writes its own URL key; the result is one checked
:class:`explorer.stories.family.settings.FamilySettings`. Also the Position schemes page's chart
controls: what the profile chart and the learned-term charts draw."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice, int_number, int_slider, md_escape, toggle
from explorer.stories.family import settings
from explorer.weights.reading import SCHEME_LABELS
from relpos_core.schemes import SCHEME_NAMES

DEFAULTS = settings.FamilySettings()
#: The papers' names, which links of earlier versions hold (``scheme=ALiBi``): read as the scheme.
_SCHEMES_BY_LABEL = {label: name for name, label in SCHEME_LABELS.items()}


def scheme_picker(label: str, key: str, default: str) -> str:
    """A URL-bound picker of one scheme by its name in relpos_core.schemes (``alibi``), which
    is also its value in the URL; the help gives each name's paper."""
    return choice(
        label,
        list(SCHEME_NAMES),
        key,
        default=default,
        aliases=_SCHEMES_BY_LABEL,
        help="In the URL and in relpos_core.schemes: "
        + ", ".join(f"{name} ({SCHEME_LABELS[name]})" for name in SCHEME_NAMES),
    )


def scheme_controls(scheme: str, params: ViewParams) -> dict[str, object]:
    """The URL-bound settings of one scheme, drawn where this is called."""
    if scheme == "shaw":
        st.caption(f"Shaw's clip distance is the sidebar's k = {params.k}.")
        return {}
    if scheme == "music":
        left, right = st.columns(2)
        with left:
            length = int_number(
                "Music: L (table length, max_relative_position)",
                1,
                settings.MUSIC_LEN_MAX,
                "music_len",
                DEFAULTS.music_len,
                help="Distances |j - i| > L - 1 get the zero vector.",
            )
        with right:
            values = toggle("Music: value term E^V (values)", "music_values", False)
        return {"music_len": length, "music_values": values}
    if scheme == "xl":
        st.caption("Transformer-XL has no setting here: R is a fixed sinusoid of i - j.")
        return {}
    if scheme == "t5":
        left, right = st.columns(2)
        with left:
            buckets = choice(
                "T5: num_buckets",
                list(settings.T5_BUCKET_CHOICES),
                "t5_buckets",
                default=DEFAULTS.t5_buckets,
            )
        with right:
            largest = int_number(
                "T5: max_distance (last log-spaced bucket)",
                buckets // 2 + 1,
                settings.T5_MAX_MAX,
                "t5_max",
                DEFAULTS.t5_max,
                help="Every distance beyond it shares the last bucket. It must exceed "
                "num_buckets / 2, the exact buckets of one direction.",
            )
        return {"t5_buckets": buckets, "t5_max": largest}
    if scheme == "alibi":
        bias = choice(
            "ALiBi: max_bias (m_h = 2^(-max_bias·h/H))",
            list(settings.ALIBI_BIAS_CHOICES),
            "alibi_bias",
            default=DEFAULTS.alibi_bias,
        )
        return {"alibi_bias": bias}
    base = choice(
        "RoPE: base (θ_m = base^(-2m/d))",
        list(settings.ROPE_BASE_CHOICES),
        "rope_base",
        default=DEFAULTS.rope_base,
    )
    return {"rope_base": base}


def scheme_settings(
    params: ViewParams, picked: str | None = None, **chosen: object
) -> settings.FamilySettings:
    """Every scheme's settings: the ``picked`` one's drawn here, the others in an expander.

    ``chosen`` holds settings already read elsewhere on the page (the compared pair). With
    trained weights every scheme has the settings its model was trained with (the defaults,
    tests/explorer check they match), shown and not editable.
    """
    if params.trained:
        st.caption(
            md_escape(
                "Trained weights: each scheme is its family model's layer "
                f"{params.layer}, with the settings it was trained with: "
                + "; ".join(
                    f"{SCHEME_LABELS[name]}: {text}"
                    for name in SCHEME_NAMES
                    if (text := DEFAULTS.config(name, params).text)
                )
                + ". Switch the sidebar's weights to random to change them."
            )
        )
        return settings.FamilySettings(
            **({"scheme": picked} if picked is not None else {}), **chosen
        )
    values: dict[str, object] = {}
    if picked is not None:
        values.update(scheme_controls(picked, params))
    title = (
        "Settings of the other schemes (they change the table and the profiles)"
        if picked is not None
        else "Settings of the schemes"
    )
    with st.expander(title):
        for other in SCHEME_NAMES:
            if other != picked:
                values.update(scheme_controls(other, params))
    if picked is not None:
        values["scheme"] = picked
    return settings.FamilySettings(**values, **chosen)


@dataclass(frozen=True)
class ProfileChoice:
    """What the profile chart draws: one head (None: pooled), which part, scaled or not, and
    the trained length it marks."""

    head: int | None
    position_only: bool
    normalise: bool
    built_for: int


def profile_controls(heads: int, with_content: bool, n: int) -> ProfileChoice:
    """The profile chart's URL-bound controls: the curves (pooled or a head) on a row of their
    own (up to 9 buttons), then the term, the normalising toggle and the trained length."""
    which = choice(
        "curves",
        ["pooled", *(f"head {h}" for h in range(heads))],
        "profile_head",
        help="Pooled: every cell of every head at that distance.",
    )
    part_column, middle, right = st.columns([2, 1, 3])
    with part_column:
        part = choice(
            "term",
            ["with content", "position only"] if with_content else ["position only"],
            "profile_part",
            help="Position only: q and k replaced by their mean over positions, so the term is "
            "a function of j - i alone: what each scheme does at every distance.",
        )
    with middle:
        normalise = toggle("normalise", "profile_norm", True)
    with right:
        longest = max(1, n)
        built_for = (
            int_slider(
                "built for (trained length)",
                1,
                longest,
                "built_for",
                value=min(DEFAULTS.built_for, longest),
                help="Marks ±(length - 1): the distances a model trained on sequences this "
                "long has seen.",
            )
            if longest > 1
            else 1
        )
    return ProfileChoice(
        head=None if which == "pooled" else int(str(which).split()[-1]),
        position_only=part == "position only",
        normalise=normalise,
        built_for=built_for,
    )


def learned_part() -> str:
    """Which reading of the trained schemes' terms to draw (URL key ``learned_part``)."""
    return choice(
        "term",
        ["position only", "on the text"],
        "learned_part",
        help="Position only: q and k replaced by their mean over the text, so the term is a "
        "function of j - i alone. On the text: the mean of the term over every pair of the "
        "text at that distance, content included.",
    )
