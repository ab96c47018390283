"""The position-scheme pages' own settings: one checked, hashable :class:`FamilySettings` for
every control, which gives each scheme its :class:`explorer.weights.schemes.SchemeConfig`.

Pure (no streamlit): each error names the control, its range and the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.frame.params import N_MAX, ViewParams
from explorer.weights.schemes import SchemeConfig
from relpos_core.schemes import SCHEME_NAMES

MUSIC_LEN_MAX = N_MAX
T5_BUCKET_CHOICES = (8, 16, 32, 64, 128)
T5_MAX_MAX = 2 * N_MAX
ALIBI_BIAS_CHOICES = (2, 4, 8, 16)
ROPE_BASE_CHOICES = (100, 1_000, 10_000, 100_000, 1_000_000)


@dataclass(frozen=True)
class FamilySettings:
    """The page's own controls, checked: each error names the control, its range and value."""

    scheme: str = "shaw"
    music_len: int = 64
    music_values: bool = False
    t5_buckets: int = 32
    t5_max: int = 128
    alibi_bias: int = 8
    rope_base: int = 10_000
    built_for: int = 512
    compare_a: str = "shaw"
    compare_b: str = "rope"

    def __post_init__(self) -> None:
        for name in ("scheme", "compare_a", "compare_b"):
            _check_choice(name, getattr(self, name), SCHEME_NAMES)
        _check_int("music_len (table length L)", self.music_len, 1, MUSIC_LEN_MAX)
        if not isinstance(self.music_values, bool):
            raise ValueError(f"music_values must be true or false, got {self.music_values!r}")
        _check_choice("t5_buckets (num_buckets)", self.t5_buckets, T5_BUCKET_CHOICES)
        # causal T5 uses all buckets for the past: max_exact = num_buckets / 2 exact distances
        _check_int("t5_max (max_distance)", self.t5_max, self.t5_buckets // 2 + 1, T5_MAX_MAX)
        _check_choice("alibi_bias (max_bias)", self.alibi_bias, ALIBI_BIAS_CHOICES)
        _check_choice("rope_base (base)", self.rope_base, ROPE_BASE_CHOICES)
        _check_int("built_for (trained length)", self.built_for, 1, N_MAX)

    def config(self, name: str, params: ViewParams) -> SchemeConfig:
        """The settings of scheme ``name`` alone (Shaw's clip distance is the sidebar's k)."""
        options: dict[str, object] = {
            "shaw": {"max_relative_position": params.k},
            "music": {"max_relative_position": self.music_len, "values": self.music_values},
            "xl": {},
            "t5": {"num_buckets": self.t5_buckets, "max_distance": self.t5_max},
            "alibi": {"max_bias": self.alibi_bias},
            "rope": {"base": self.rope_base},
        }[_check_choice("scheme", name, SCHEME_NAMES)]
        return SchemeConfig(name, tuple(sorted(options.items())))


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    return value


def _check_choice(name: str, value: object, choices: tuple) -> object:
    if isinstance(value, bool) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value
