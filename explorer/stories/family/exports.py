"""What the Position schemes and Compare schemes pages' downloads hold: their arrays, labelled
for ``explorer.frame.downloads``, and the settings and models their params.json records."""

from __future__ import annotations

import numpy as np

from explorer.frame.downloads import Labelled, position_labels
from explorer.frame.params import ViewParams
from explorer.stories.family.controls import ProfileChoice
from explorer.stories.family.learned_terms import learned_terms
from explorer.stories.family.length_curves import LengthCurves, curves_table
from explorer.stories.family.profiles import ProfileView
from explorer.stories.family.settings import FamilySettings
from explorer.stories.family.views import CompareView, PositionView
from explorer.weights.source import TensorSource
from relpos_core.schemes.catalogue import scheme_entry


def family_extra(name: str, settings: FamilySettings, source, models) -> dict[str, object]:
    """What Position schemes' download says beside its arrays: the scheme drawn, the settings
    changed from their defaults (not Compare's pickers), and where trained weights came from."""
    return {
        "scheme": name,
        **changed_settings(settings, "scheme", "compare_a", "compare_b"),
        **source.provenance(*dict(models)),
    }


def changed_settings(settings: FamilySettings, *left_out: str) -> dict[str, object]:
    """The settings that differ from their defaults, but for ``left_out`` (another page's)."""
    defaults = dict(FamilySettings().items())  # built now: the catalogue may have grown
    return {
        key: value
        for key, value in settings.items()
        if key not in left_out and value != defaults[key]
    }


def learned_arrays(source: TensorSource, heads: int) -> dict[str, Labelled]:
    """Each trained scheme's learned term by j - i, both readings; none for random weights."""
    if not source.trained:
        return {}
    layer = source.params.layer
    learned = learned_terms(source.scheme_models())
    tables = {}
    for part in ("position only", "on the text"):
        curves = learned.curves(part, layer)
        tables["learned_" + part.replace(" ", "_")] = Labelled(
            np.stack([c.T for c in curves.values()]),  # (schemes, m, h)
            f"layer {layer}: each scheme's trained position term by j - i, {part}; "
            f"schemes in order {', '.join(learned.models)}",
            rows=[str(int(r)) for r in learned.distance],
            cols=[f"head {h}" for h in range(heads)],
            corner="j - i \\ head",
            split="scheme",
        )
    return tables


def family_arrays(
    source: TensorSource,
    name: str,
    view: PositionView | None,
    profiles: dict[str, ProfileView],
    first: ProfileView,
    measured: LengthCurves,
) -> dict[str, Labelled]:
    """The Position schemes page's arrays: the picked scheme's term on the window (when it
    runs), what the trained schemes learned (trained weights), every scheme's profile and the
    measured bits per character by length."""
    params = source.params
    labels = position_labels(params, *params.window)
    tables = {}
    if view is not None:
        tables["position_term"] = Labelled(
            view.term,
            f"{name} position term per head on the window, logit units, masked cells empty",
            rows=labels,
            cols=labels,
            corner="query i \\ key j",
            split="head",
        )
    return {
        **tables,
        **learned_arrays(source, params.heads),
        "profiles": _profile_table(
            profiles,
            "every scheme's position term by distance, pooled over heads: mean and std"
            + ("" if first.with_content else " (position-only part)"),
        ),
        "bits_per_character": curves_table(measured),
    }


def profile_arrays(profiles: dict[str, ProfileView], pick: ProfileChoice) -> dict[str, Labelled]:
    """The profile chart's curves as it draws them for ``pick`` (a fragment's own controls:
    one head or pooled, which part, normalised or not)."""
    which = "pooled over heads" if pick.head is None else f"head {pick.head}"
    part = "position-only part" if pick.position_only else "with content"
    unit = "in logit units"
    if pick.normalise:
        unit = "each scheme's mean and std divided by its largest |mean|"
    return {
        "profile_drawn": _profile_table(
            profiles,
            f"the profile chart's curves: every scheme's position term by distance, {which}, "
            f"{part}, {unit}; mean (the line) and std (the band's half width)",
            head=pick.head,
            normalise=pick.normalise,
            position_only=pick.position_only,
        )
    }


def _profile_table(
    profiles: dict[str, ProfileView], about: str, **curve: int | bool | None
) -> Labelled:
    """Every scheme's curve (:meth:`ProfileView.curve` with ``curve``: head, normalise,
    position_only) as two columns, mean and std."""
    columns, values = [], []
    for s, profile in profiles.items():
        mean, std = profile.curve(**curve)
        columns += [f"{s} mean", f"{s} std"]
        values += [mean, std]
    distance = next(iter(profiles.values())).distance
    return Labelled(
        np.stack(values, axis=1),
        about,
        rows=[str(int(r)) for r in distance],
        cols=columns,
        corner="j - i \\ value",
    )


def compare_arrays(params: ViewParams, a: str, b: str, both: CompareView) -> dict[str, Labelled]:
    """The Compare schemes page's arrays: both schemes' weights and their difference."""
    labels = position_labels(params, *params.window)
    pairs = {"rows": labels, "cols": labels, "corner": "query i \\ key j"}
    return {
        "weights_a": Labelled(
            both.weights_a, f"{a}: alpha per head, window", **pairs, split="head"
        ),
        "weights_b": Labelled(
            both.weights_b, f"{b}: alpha per head, window", **pairs, split="head"
        ),
        "difference": Labelled(
            both.difference, "alpha_B - alpha_A per head", **pairs, split="head"
        ),
    }


def one_scheme_arrays(
    params: ViewParams, letter: str, name: str, weights: np.ndarray
) -> dict[str, Labelled]:
    """The Compare schemes page's arrays when only scheme ``letter`` runs: its weights."""
    labels = position_labels(params, *params.window)
    return {
        f"weights_{letter.lower()}": Labelled(
            weights, f"{name}: alpha per head, window", rows=labels, cols=labels,
            corner="query i \\ key j", split="head",
        )
    }  # fmt: skip


def compare_models(source: TensorSource, a: str, b: str) -> dict[str, object]:
    """The two trained models compared, in the order A, B, for params.json (nothing for random
    weights; None for a scheme the family never trained, drawn for the other alone). A list, as
    earlier downloads recorded it, even when A and B are one scheme."""
    if not source.trained:
        return {}
    return {"_model": [source.model(s) if scheme_entry(s).model else None for s in (a, b)]}
