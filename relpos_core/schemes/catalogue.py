"""The catalogue of position schemes: everything said or decided about a scheme, per scheme.

One :class:`SchemeEntry` per scheme, the ``ENTRY`` of its folder's ``entry`` module
(``relpos_core/schemes/<name>/entry.py``, found by walking the folders): its name (the registry
key and URL value), its label and title, the paper, its formulas, its settings with their ranges
and defaults, which terms it adds (key, value, bias, rotation), the family model trained with it,
and the class that computes it (``".maths:Class"`` in its folder, imported only when a scheme is
built; a class itself for one defined where it is registered). Labels, formulas, the explorer's
controls and URL values, the lab's model registry and its tables all read this catalogue.

Imports no torch: the explorer's pages read it before any tensor is needed. A test (or a user)
adds a scheme for a while with :func:`registered`; :func:`scheme_entry` of a name the catalogue
does not hold is a ValueError that names every scheme it does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache

from relpos_core.schemes.folders import folders, part
from relpos_core.schemes.rope.scalings import ROPE_SCALINGS, RopeScaling, rope_scaling

TERM_KINDS = ("key", "value", "bias", "rotation")  # what a scheme can add to attention


@dataclass(frozen=True)
class Setting:
    """One keyword argument of a scheme's class, as a control and as words.

    A setting is a picker of ``choices``, a switch (a bool ``default``) or an integer in
    [``low``, ``high``]; ``low`` may depend on the scheme's other settings (a function of them,
    by keyword, checked in catalogue order). With ``view`` the setting is no control of its
    own: the view's parameter of that name supplies it (Shaw's clip distance is the sidebar's k).
    """

    keyword: str  # the class's keyword argument
    what: str  # the setting in words: "table length L"
    default: int | bool
    url_key: str | None = None  # the control's key and URL name; None with ``view``
    label: str = ""  # the control's label
    choices: tuple[int, ...] = ()
    low: int | Callable[[Mapping[str, object]], int] = 1
    high: int = 1
    help: str | None = None
    words: str | tuple[str, str] = "{}"  # its value in the papers' words; a switch: (off, on)
    short: str | None = None  # in a table or a legend ("k = {}"; "" leaves it out); None: words
    view: str | None = None

    def bounds(self, others: Mapping[str, object]) -> tuple[int, int]:
        """[low, high] of an integer setting, given the scheme's other settings by keyword."""
        low = self.low(others) if callable(self.low) else self.low
        return low, self.high

    def text(self, value: object, short: bool = False) -> str:
        """The value in the papers' words (``32 buckets``, ``on keys only``), or ``short``ly,
        as a table or a legend names a model (``k = 8``)."""
        words = self.short if short and self.short is not None else self.words
        if isinstance(words, tuple):
            return words[bool(value)]
        return words.format(value)

    def check(self, value: object, others: Mapping[str, object]) -> object:
        """``value`` if this setting takes it; else a ValueError naming the control, the
        allowed values and the value."""
        name = f"{self.url_key} ({self.what})"
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise ValueError(f"{self.url_key} must be true or false, got {value!r}")
        elif self.choices:
            if isinstance(value, bool) or value not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        else:
            low, high = self.bounds(others)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")
        return value


@dataclass(frozen=True)
class SchemeEntry:
    """One position scheme, for people and for every table that lists schemes."""

    name: str  # the key: make_scheme's name, the URL value, the family model's position
    label: str  # as prose names it: "Music Transformer"
    title: str  # label and paper year: "Music Transformer (Huang et al. 2018)"
    paper: str  # the citation
    description: str  # one line: what position adds
    logit_formula: str  # LaTeX: the logit e_ij
    position_formula: str  # LaTeX: what position adds to it, the term the pages draw
    terms: tuple[str, ...]  # from TERM_KINDS
    scheme_class: str | type  # "module:Class" of a PositionScheme subclass, or the class
    parameters_text: str  # what is learned or fixed
    memory_text: str  # what its position terms build
    extrapolation: str  # what happens past the distances it was built for
    settings: tuple[Setting, ...] = ()
    learned: bool = False  # its constructor draws parameters (make_scheme gives it a generator)
    scaled: bool = True  # its position term is divided by sqrt(d) (False: a bias added as is)
    divisor: str = "√d"  # what its logit's terms are divided by (DeBERTa's three: √(3d))
    model: str | None = None  # the family model trained with it (relpos_lab); None: never trained
    model_params: tuple[tuple[str, object], ...] = ()  # the keywords that model was built with
    note: str = ""  # a caption under its formula
    no_settings: str = ""  # why it has no control (shown in place of them)
    term_titles: Mapping[str, str] = field(default_factory=dict)  # several terms: each drawn
    terms_note: str = ""  # what to read in those terms, under their figure
    order: int = 100  # its place in every list of schemes (the papers' order), then by name
    folder: str = ""  # its folder's package, where ".maths:Class" is looked up (set by the walk)

    def setting(self, keyword: str) -> Setting:
        for setting in self.settings:
            if setting.keyword == keyword:
                return setting
        raise ValueError(f"{self.name} has no setting {keyword!r}")

    @property
    def controls(self) -> tuple[Setting, ...]:
        """The settings with a control of their own (not supplied by the view)."""
        return tuple(s for s in self.settings if s.view is None)

    def from_view(self, parameter: str) -> bool:
        """Whether one of its settings is the view's ``parameter`` (Shaw's clip distance k)."""
        return any(setting.view == parameter for setting in self.settings)

    @property
    def reads_content(self) -> bool:
        """Its position term reads the query or key (not a function of j - i alone)."""
        return bool({"key", "rotation"} & set(self.terms))

    def settings_text(self, options: Mapping[str, object], short: bool = False) -> str:
        """The given keywords in the papers' words, in catalogue order (empty without).

        >>> scheme_entry("t5").settings_text({"max_distance": 128, "num_buckets": 32})
        '32 buckets, max distance 128'
        """
        texts = (s.text(options[s.keyword], short) for s in self.settings if s.keyword in options)
        return ", ".join(text for text in texts if text)

    def cls(self) -> type:
        """The class that computes the scheme (imports it, and torch with it)."""
        if isinstance(self.scheme_class, type):
            return self.scheme_class
        module, _, name = self.scheme_class.partition(":")
        return getattr(importlib.import_module(module, self.folder or None), name)


_ADDED: dict[str, SchemeEntry] = {}  # entries registered for a while (``registered``)


@cache
def walked(packages: tuple[str, ...]) -> tuple[SchemeEntry, ...]:
    """The ``ENTRY`` of each folder among ``packages`` that has one, checked, in list order."""
    entries: list[SchemeEntry] = []
    for package in packages:
        module = part(package, "entry")
        if module is None:
            continue
        entry = replace(module.ENTRY, folder=package)
        entries.append(check_entry(entry, {e.name: e for e in entries}))
    return tuple(sorted(entries, key=lambda e: (e.order, e.name)))


def catalogue() -> dict[str, SchemeEntry]:
    """Every scheme's entry by name: the folders' (walked once), then those registered."""
    return {e.name: e for e in walked(folders())} | _ADDED


def scheme_names() -> tuple[str, ...]:
    """Every scheme's name, in catalogue order (the papers' order, then any added)."""
    return tuple(catalogue())


def scheme_entries() -> tuple[SchemeEntry, ...]:
    return tuple(catalogue().values())


def scheme_entry(name: object) -> SchemeEntry:
    """The entry of scheme ``name``; a ValueError that names the known ones otherwise."""
    known_entries = catalogue()
    entry = known_entries.get(name) if isinstance(name, str) else None
    if entry is None:
        known = ", ".join(known_entries)
        raise ValueError(f"scheme must be one of {known}; got {name!r}")
    return entry


def scheme_label(name: str) -> str:
    """The scheme as prose names it (``Music Transformer``)."""
    return scheme_entry(name).label


def check_entry(entry: SchemeEntry, others: Mapping[str, SchemeEntry]) -> SchemeEntry:
    """An entry fit to join the catalogue of ``others``: a new name, known term kinds, a
    "module:Class" class and settings with distinct URL keys."""
    if not entry.name.isidentifier():
        raise ValueError(f"a scheme's name must be an identifier, got {entry.name!r}")
    unknown = set(entry.terms) - set(TERM_KINDS)
    if unknown or not entry.terms:
        raise ValueError(f"{entry.name}: terms must be some of {', '.join(TERM_KINDS)}")
    if not isinstance(entry.scheme_class, type) and ":" not in entry.scheme_class:
        raise ValueError(f"{entry.name}: scheme_class must be a class or read 'module:Class'")
    keys = [s.url_key for s in entry.controls]
    if entry.name in others:
        raise ValueError(f"the catalogue holds a scheme {entry.name!r} already")
    taken = {s.url_key for e in others.values() for s in e.controls}
    if None in keys or len(set(keys)) < len(keys) or taken & set(keys):
        raise ValueError(f"{entry.name}: every control needs a URL key of its own, got {keys}")
    return entry


@contextmanager
def registered(entry: SchemeEntry) -> Iterator[SchemeEntry]:
    """The catalogue with ``entry`` added while the block runs (a test's own scheme)."""
    _ADDED[check_entry(entry, catalogue()).name] = entry
    try:
        yield entry
    finally:
        del _ADDED[entry.name]


__all__ = [
    "ROPE_SCALINGS",
    "TERM_KINDS",
    "RopeScaling",
    "SchemeEntry",
    "Setting",
    "catalogue",
    "check_entry",
    "registered",
    "rope_scaling",
    "scheme_entries",
    "scheme_entry",
    "scheme_label",
    "scheme_names",
]
