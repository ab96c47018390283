"""The position-scheme pages' own settings: one checked, hashable :class:`FamilySettings` for
every control, which gives each scheme its :class:`explorer.weights.schemes.SchemeConfig`.

Each scheme's controls are its catalogue entry's settings (``relpos_core.schemes.catalogue``),
held by their URL keys; a scheme added to the catalogue brings its own. Pure (no streamlit):
each error names the control, its range and the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from explorer.frame.params import N_MAX, ViewParams
from explorer.weights.schemes import SchemeConfig
from relpos_core.schemes.catalogue import SchemeEntry, scheme_entries, scheme_entry, scheme_names

PICKS = {"scheme": "shaw", "compare_a": "shaw", "compare_b": "rope"}  # the pickers' defaults
BUILT_FOR = 512  # the trained length the profile chart marks


class FamilySettings:
    """The page's own controls, checked: the three scheme pickers, the marked trained length,
    and every scheme's settings by URL key (``t5_buckets=16``). Frozen and hashable."""

    __slots__ = ("_values",)

    def __init__(self, **values: object) -> None:
        checked: dict[str, object] = {}
        for key, default in PICKS.items():
            value = values.pop(key, default)
            if isinstance(value, bool) or value not in scheme_names():
                known = ", ".join(scheme_names())
                raise ValueError(f"{key} must be one of {known}, got {value!r}")
            checked[key] = value
        checked["built_for"] = _check_built_for(values.pop("built_for", BUILT_FOR))
        for entry in scheme_entries():
            for keyword, value in _entry_values(entry, values).items():
                checked[entry.setting(keyword).url_key] = value  # type: ignore[index]
        if values:
            known = ", ".join(k for k in checked)
            raise ValueError(f"no setting {', '.join(values)}; the settings are {known}")
        object.__setattr__(self, "_values", tuple(checked.items()))

    def __getattr__(self, key: str) -> object:
        for name, value in object.__getattribute__(self, "_values"):
            if name == key:
                return value
        raise AttributeError(key)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("FamilySettings is frozen")

    def items(self) -> Iterator[tuple[str, object]]:
        return iter(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FamilySettings) and self._values == other._values

    def __hash__(self) -> int:
        return hash(self._values)

    def __repr__(self) -> str:
        return "FamilySettings(" + ", ".join(f"{k}={v!r}" for k, v in self._values) + ")"

    def config(self, name: str, params: ViewParams) -> SchemeConfig:
        """The settings of scheme ``name`` alone, by keyword (a setting with ``view`` reads the
        view's parameter: Shaw's clip distance is the sidebar's k)."""
        entry = scheme_entry(name)
        options = {
            s.keyword: getattr(params, s.view) if s.view else getattr(self, s.url_key)  # type: ignore[arg-type]
            for s in entry.settings
        }
        return SchemeConfig(name, tuple(options.items()))


def _entry_values(entry: SchemeEntry, values: dict[str, object]) -> dict[str, object]:
    """One scheme's controls, checked in catalogue order, by keyword (each taken out of
    ``values``, its default where absent)."""
    chosen: dict[str, object] = {}
    for setting in entry.controls:
        value = values.pop(setting.url_key, setting.default)  # type: ignore[arg-type]
        chosen[setting.keyword] = setting.check(value, chosen)
    return chosen


def _check_built_for(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= N_MAX:
        raise ValueError(
            f"built_for (trained length) must be an integer in [1, {N_MAX}], got {value!r}"
        )
    return value
