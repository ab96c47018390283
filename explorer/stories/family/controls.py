"""The URL-bound settings of the position schemes (each scheme's from its catalogue entry),
shared by the Position schemes and the Compare schemes pages. Each control reads and writes
its own URL key; the result is one checked
:class:`explorer.stories.family.settings.FamilySettings`. Also the Position schemes page's
chart controls: what the profile chart and the learned-term charts draw."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer.frame.params import ViewParams
from explorer.frame.widgets import choice, int_number, int_slider, md_escape, toggle
from explorer.stories.family import settings
from relpos_core.schemes.catalogue import Setting, scheme_entries, scheme_entry, scheme_names


def scheme_picker(label: str, key: str) -> str:
    """A URL-bound picker of one scheme by its name in the catalogue (``alibi``), which is
    also its value in the URL; the help gives each name's paper. The papers' names, which
    links of earlier versions hold (``scheme=ALiBi``), are read as the scheme."""
    entries = scheme_entries()
    return choice(
        label,
        [e.name for e in entries],
        key,
        default=settings.PICKS[key],
        aliases={e.label: e.name for e in entries},
        help="In the URL and in relpos_core.schemes: "
        + ", ".join(f"{e.name} ({e.label})" for e in entries),
    )


def _control(setting: Setting, low: int) -> object:
    """One setting's URL-bound widget: a picker of its choices, a switch, or a number."""
    key = str(setting.url_key)
    if setting.choices:
        return choice(setting.label, list(setting.choices), key, default=setting.default)
    if isinstance(setting.default, bool):
        return toggle(setting.label, key, setting.default)
    return int_number(setting.label, low, setting.high, key, setting.default, help=setting.help)


def scheme_controls(scheme: str, params: ViewParams) -> dict[str, object]:
    """The URL-bound settings of one scheme (its catalogue entry's), drawn where this is
    called, side by side; a setting the view supplies is said in a caption."""
    entry = scheme_entry(scheme)
    for setting in entry.settings:
        if setting.view is not None:
            st.caption(
                f"{entry.label}'s {setting.what} is the sidebar's {setting.view} = "
                f"{getattr(params, setting.view)}."
            )
    if not entry.settings:
        st.caption(md_escape(f"{entry.label} has no setting here: {entry.no_settings}."))
    controls = entry.controls
    values: dict[str, object] = {}
    chosen: dict[str, object] = {}
    columns = st.columns(len(controls)) if controls else []
    for column, setting in zip(columns, controls, strict=True):
        with column:
            low, _ = setting.bounds(chosen) if not setting.choices else (0, 0)
            chosen[setting.keyword] = values[str(setting.url_key)] = _control(setting, low)
    return values


def scheme_settings(
    params: ViewParams, picked: str | None = None, **chosen: object
) -> settings.FamilySettings:
    """Every scheme's settings: the ``picked`` one's drawn here, the others in an expander.

    ``chosen`` holds settings already read elsewhere on the page (the compared pair). With
    trained weights every scheme has the settings its model was trained with (the defaults,
    tests/explorer check they match), shown and not editable.
    """
    names = scheme_names()
    if params.trained:
        defaults = settings.FamilySettings()  # the catalogue as it is now: each at its default
        trained = "; ".join(
            f"{e.label}: {text}"
            for e in scheme_entries()
            if e.model and (text := defaults.config(e.name, params).text)
        )
        never = [e.label for e in scheme_entries() if not e.model]
        st.caption(
            md_escape(
                "Trained weights: each scheme is its family model's layer "
                f"{params.layer}, with the settings it was trained with: {trained}. "
                + (f"Never trained, so not drawn here: {', '.join(never)}. " if never else "")
                + "Switch the sidebar's weights to random to change them."
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
        for other in names:
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
                value=min(settings.BUILT_FOR, longest),
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
