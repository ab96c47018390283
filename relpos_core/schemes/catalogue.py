"""The catalogue of position schemes: everything said or decided about a scheme, in one place.

One :class:`SchemeEntry` per scheme: its name (the registry key and URL value), its label and
title, the paper, its formulas, its settings with their ranges and defaults, which terms it adds
(key, value, bias, rotation), the family model trained with it, and the class that computes it
(``"module:Class"``, imported only when a scheme is built; a class itself for one defined where
it is registered). Labels, formulas, the explorer's
controls and URL values, the lab's model registry and its tables all read this catalogue.

Imports no torch: the explorer's pages read it before any tensor is needed. A test (or a user)
adds a scheme for a while with :func:`registered`; :func:`scheme_entry` of a name the catalogue
does not hold is a ValueError that names every scheme it does.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

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
    model: str | None = None  # the family model trained with it (relpos_lab); None: never trained
    model_params: tuple[tuple[str, object], ...] = ()  # the keywords that model was built with
    note: str = ""  # a caption under its formula
    no_settings: str = ""  # why it has no control (shown in place of them)
    term_titles: Mapping[str, str] = field(default_factory=dict)  # several terms: each drawn
    terms_note: str = ""  # what to read in those terms, under their figure

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
        return getattr(importlib.import_module(module), name)


SHAW = SchemeEntry(
    name="shaw",
    label="Shaw",
    title="Shaw et al. 2018",
    paper='Shaw, Uszkoreit, Vaswani 2018, "Self-Attention with Relative Position Representations"',
    description="clipped learned tables w^K, w^V added to keys and values",
    logit_formula=r"e_{ij} = \frac{q_i \bigl(k_j + a^K_{ij}\bigr)^\top}{\sqrt{d}},\quad "
    r"a^K_{ij} = w^K_{\operatorname{clip}(j - i,\, k)}",
    position_formula=r"\frac{q_i\,(a^K_{ij})^\top}{\sqrt{d}}",
    terms=("key", "value"),
    scheme_class="relpos_core.schemes.shaw:ShawRelative",
    parameters_text="w^K, w^V: (2k+1, d) each, shared by heads",
    memory_text="Q (w^K)^T: b·h·n·(2k+1)",
    extrapolation="clips: every distance beyond ±k uses the edge vector w_±k",
    settings=(
        Setting(
            "max_relative_position",
            "clip distance k",
            8,
            view="k",
            words="clip distance k = {}",
            short="k = {}",
        ),
    ),
    learned=True,
    model="shaw",
    model_params=(("max_relative_position", 8),),
)
MUSIC = SchemeEntry(
    name="music",
    label="Music Transformer",
    title="Music Transformer (Huang et al. 2018)",
    paper='Huang et al. 2018, "Music Transformer"; tensor2tensor\'s relative attention v2',
    description="one learned vector per distance, per head; zero past the table",
    logit_formula=r"e_{ij} = \frac{q_i \bigl(k_j + E_{j-i}\bigr)^\top}{\sqrt{d}},\quad "
    r"E_{j-i} = 0 \ \text{ for } |j - i| > L - 1",
    position_formula=r"\frac{q_i\,E_{j-i}^\top}{\sqrt{d}}",
    terms=("key", "value"),
    scheme_class="relpos_core.schemes.music:MusicRelative",
    parameters_text="E (and E^V): (h, 2L-1, d), per head; L-1 past entries when causal",
    memory_text="Q E^T through the skew: b·h·n·(2n-1), or b·h·n·n causal",
    extrapolation="drops out: distances past L-1 get the zero vector, no position signal",
    settings=(
        Setting(
            "max_relative_position",
            "table length L",
            64,
            url_key="music_len",
            label="Music: L (table length, max_relative_position)",
            high=4096,  # the explorer's longest n
            help="Distances |j - i| > L - 1 get the zero vector.",
            words="table length L = {}",
            short="L = {}",
        ),
        Setting(
            "values",
            "value term",
            False,
            url_key="music_values",
            label="Music: value term E^V (values)",
            words=("on keys only", "on keys and values"),
        ),
    ),
    learned=True,
    model="music",
    model_params=(("max_relative_position", 64),),
)
XL = SchemeEntry(
    name="xl",
    label="Transformer-XL",
    title="Transformer-XL (Dai et al. 2019)",
    paper='Dai et al. 2019, "Transformer-XL: Attentive Language Models Beyond a Fixed-Length '
    'Context"',
    description="a fixed sinusoid of i - j, projected, with global biases u and v",
    logit_formula=(
        r"A_{ij} = \tfrac{1}{\sqrt{d}}\Bigl(\underbrace{q_i^\top k_j}_{(a)}"
        r" + \underbrace{q_i^\top W_{k,R} R_{i-j}}_{(b)}"
        r" + \allowbreak \underbrace{u^\top k_j}_{(c)}"  # a narrow screen: (a) + (b) over (c) + (d)
        r" + \underbrace{v^\top W_{k,R} R_{i-j}}_{(d)}\Bigr)"
    ),
    position_formula=r"\frac{(q_i + v)^\top W_{k,R} R_{i-j}}{\sqrt{d}} \quad \text{(b) + (d)}",
    terms=("key", "bias"),
    scheme_class="relpos_core.schemes.transformer_xl:TransformerXL",
    parameters_text="W_R: (d_model, h·d); u, v: (h, d); R fixed sinusoid",
    memory_text="R and W_R R: (n_q+n_k-1)·(d_model + h·d); (q+v) (W_R R)^T: b·h·n·(2n-1)",
    extrapolation="continues the sinusoid: unseen distances get new but smooth R_(i-j)",
    learned=True,
    model="xl",
    no_settings="R is a fixed sinusoid of i - j",
    term_titles={
        "content": "(a) content q·k",
        "position": "(b) q · W_R R",
        "global_content": "(c) u · k",
        "global_position": "(d) v · W_R R",
    },
    terms_note="(b) + (d) is the position term above; (c) depends on the key alone, so each "
    "column is constant.",
)
T5 = SchemeEntry(
    name="t5",
    label="T5",
    title="T5 (Raffel et al. 2020)",
    paper='Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified '
    'Text-to-Text Transformer"',
    description="one learned scalar per head per log-spaced bucket of j - i",
    logit_formula=r"e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} + b_h\bigl(\operatorname{bucket}"
    r"(j - i)\bigr)",
    position_formula=r"b_h\bigl(\operatorname{bucket}(j - i)\bigr)",
    terms=("bias",),
    scheme_class="relpos_core.schemes.t5:T5Bias",
    parameters_text="b: (B, h), one scalar per bucket per head",
    memory_text="bias: h·n·n (shared by the batch)",
    extrapolation="saturates: every distance past max_distance shares the last bucket",
    settings=(
        Setting(
            "num_buckets",
            "num_buckets",
            32,
            url_key="t5_buckets",
            label="T5: num_buckets",
            choices=(8, 16, 32, 64, 128),
            words="{} buckets",
        ),
        Setting(
            "max_distance",
            "max_distance",
            128,
            url_key="t5_max",
            label="T5: max_distance (last log-spaced bucket)",
            # causal T5 uses all buckets for the past: max_exact = num_buckets / 2 exact distances
            low=lambda others: int(others["num_buckets"]) // 2 + 1,  # type: ignore[call-overload]
            high=8192,  # twice the explorer's longest n
            help="Every distance beyond it shares the last bucket. It must exceed "
            "num_buckets / 2, the exact buckets of one direction.",
            words="max distance {}",
            short="",
        ),
    ),
    learned=True,
    scaled=False,  # T5 folds the factor into its initialisation
    model="t5",
    model_params=(("num_buckets", 32), ("max_distance", 128)),
)
ALIBI = SchemeEntry(
    name="alibi",
    label="ALiBi",
    title="ALiBi (Press et al. 2022)",
    paper='Press, Smith, Lewis 2022, "Train Short, Test Long: Attention with Linear Biases"',
    description="a fixed linear penalty -m_h |j - i|, one slope per head",
    # Two lines (gathered): on a 390 px phone one line of both would scroll out of its column.
    logit_formula=(
        r"\begin{gathered}e_{ij} = \frac{q_i \cdot k_j}{\sqrt{d}} - m_h\,|i - j|,\\"
        r"m_h = 2^{-8h/H}\ \ (h = 1, \dots, H)\end{gathered}"
    ),
    position_formula=r"-m_h\,|i - j|",
    terms=("bias",),
    scheme_class="relpos_core.schemes.alibi:ALiBi",
    parameters_text="none learned; slopes m_h = 2^(-8h/H), fixed",
    memory_text="bias: h·n·n (shared by the batch)",
    extrapolation="grows linearly: -m_h |j - i| keeps falling, so far keys fade for every n",
    settings=(
        Setting(
            "max_bias",
            "max_bias",
            8,
            url_key="alibi_bias",
            label="ALiBi: max_bias (m_h = 2^(-max_bias·h/H))",
            choices=(2, 4, 8, 16),
            words="max bias {}",
        ),
    ),
    scaled=False,  # its slopes are set for unscaled logits
    model="alibi",
    note="The paper's 8 in m_h is max_bias below; h counts heads from 1.",
)
ROPE = SchemeEntry(
    name="rope",
    label="RoPE",
    title="RoPE (Su et al. 2021)",
    paper='Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding"',
    description="queries and keys rotated by angles proportional to their positions",
    logit_formula=(
        r"\begin{gathered}e_{ij} = \frac{(R_{\Theta,i}\,q_i)^\top (R_{\Theta,j}\,k_j)}{\sqrt{d}}"
        r" = \frac{q_i^\top R_{\Theta,\,j-i}\,k_j}{\sqrt{d}},\\ \theta_m = \mathrm{base}^{-2m/d}"
        r"\end{gathered}"
    ),
    position_formula=r"\frac{q_i^\top \bigl(R_{\Theta,\,j-i} - I\bigr)\,k_j}{\sqrt{d}}",
    terms=("rotation",),
    scheme_class="relpos_core.schemes.rope:Rotary",
    parameters_text="none learned; base (10000) sets theta_m = base^(-2m/d)",
    memory_text="rotated q and k: b·h·(n_q + n_k)·d",
    extrapolation="rotates on: angles (j - i)·theta_m beyond the trained lengths are unseen",
    settings=(
        Setting(
            "base",
            "base",
            10_000,
            url_key="rope_base",
            label="RoPE: base (θ_m = base^(-2m/d))",
            choices=(100, 1_000, 10_000, 100_000, 1_000_000),
            words="base {:,}",
        ),
    ),
    model="rope",
)

_CATALOGUE: dict[str, SchemeEntry] = {e.name: e for e in (SHAW, MUSIC, XL, T5, ALIBI, ROPE)}


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


def scheme_names() -> tuple[str, ...]:
    """Every scheme's name, in catalogue order (the papers' order, then any added)."""
    return tuple(_CATALOGUE)


def scheme_entries() -> tuple[SchemeEntry, ...]:
    return tuple(_CATALOGUE.values())


def scheme_entry(name: object) -> SchemeEntry:
    """The entry of scheme ``name``; a ValueError that names the known ones otherwise."""
    entry = _CATALOGUE.get(name) if isinstance(name, str) else None
    if entry is None:
        known = ", ".join(_CATALOGUE)
        raise ValueError(f"scheme must be one of {known}; got {name!r}")
    return entry


def scheme_label(name: str) -> str:
    """The scheme as prose names it (``Music Transformer``)."""
    return scheme_entry(name).label


def check_entry(entry: SchemeEntry) -> SchemeEntry:
    """An entry fit to join the catalogue: a new name, known term kinds, a "module:Class"
    class and settings with distinct URL keys."""
    if not entry.name.isidentifier():
        raise ValueError(f"a scheme's name must be an identifier, got {entry.name!r}")
    unknown = set(entry.terms) - set(TERM_KINDS)
    if unknown or not entry.terms:
        raise ValueError(f"{entry.name}: terms must be some of {', '.join(TERM_KINDS)}")
    if not isinstance(entry.scheme_class, type) and ":" not in entry.scheme_class:
        raise ValueError(f"{entry.name}: scheme_class must be a class or read 'module:Class'")
    keys = [s.url_key for s in entry.controls]
    taken = {s.url_key for e in _CATALOGUE.values() for s in e.controls}
    if None in keys or len(set(keys)) < len(keys) or taken & set(keys):
        raise ValueError(f"{entry.name}: every control needs a URL key of its own, got {keys}")
    return entry


@contextmanager
def registered(entry: SchemeEntry) -> Iterator[SchemeEntry]:
    """The catalogue with ``entry`` added while the block runs (a test's own scheme)."""
    if entry.name in _CATALOGUE:
        raise ValueError(f"the catalogue holds a scheme {entry.name!r} already")
    _CATALOGUE[check_entry(entry).name] = entry
    try:
        yield entry
    finally:
        del _CATALOGUE[entry.name]


__all__ = [
    "ROPE_SCALINGS",
    "TERM_KINDS",
    "RopeScaling",
    "SchemeEntry",
    "Setting",
    "check_entry",
    "registered",
    "rope_scaling",
    "scheme_entries",
    "scheme_entry",
    "scheme_label",
    "scheme_names",
]
