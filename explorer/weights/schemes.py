"""The position schemes a view draws: :class:`SchemeConfig`, one scheme and its settings (a
cache key), and :func:`scheme_for`, the scheme itself, trained or random.

With trained weights a scheme is the family's model of it at the view's layer; otherwise it is
drawn with ``relpos_core.schemes.make_scheme`` from a seed derived from the view's seed and the
scheme's name, so its parameters change only with the seed; Shaw's tables are the seeded random
tables of ``explorer.weights.example``, the ones every page with Shaw's terms draws.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import derived_seed, random_tables
from explorer.weights.trained import trained_scheme
from relpos_core.schemes import PositionScheme, ShawRelative, make_scheme
from relpos_core.schemes.catalogue import scheme_entry


@dataclass(frozen=True)
class SchemeConfig:
    """One scheme and its keyword arguments for ``make_scheme`` (hashable: a cache key)."""

    name: str
    options: tuple[tuple[str, object], ...] = ()

    def build(self, params: ViewParams) -> PositionScheme:
        """The scheme for this view, its parameters drawn from the view's seed."""
        seed = derived_seed(params.seed, "scheme:" + self.name)
        scheme = make_scheme(self.name, params.heads, params.head_dim, seed, **dict(self.options))
        if isinstance(scheme, ShawRelative):  # Shaw's tables: the ones every other page draws
            tables = random_tables(params.seed, scheme.max_relative_position, params.head_dim)
            with torch.no_grad():
                for parameter, table in zip((scheme.table_k, scheme.table_v), tables, strict=True):
                    parameter.copy_(table)
        return scheme

    @property
    def text(self) -> str:
        """The settings in the papers' words (``32 buckets, max distance 128``); empty without
        settings."""
        return scheme_entry(self.name).settings_text(dict(self.options))


def scheme_for(params: ViewParams, config: SchemeConfig) -> PositionScheme:
    """The scheme a view draws: with trained weights the family's model of that scheme at the
    view's layer (its settings are the ones it was trained with), else ``config``'s, drawn from
    the view's seed."""
    return trained_scheme(params, config.name) if params.trained else config.build(params)
