"""The explorer's view parameters: limits, validation, and parsing of untrusted URL strings.

Pure (no streamlit): the app reads its query string, passes the raw strings here, and gets back
a valid :class:`ViewParams` plus human-readable warnings for everything it had to clamp or ignore.
A URL can never make the app raise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

N_MAX = 4096  # longest sequence the explorer computes (one named limit; raise it here)
N_DEFAULT = 8
DISPLAY_MAX = 512  # longest side of a matrix drawn whole; longer ones show a window this wide
WIN_MAX = N_MAX - DISPLAY_MAX  # last first position of a window
K_MAX = 64  # clip distance limit; k > n is allowed and clips nothing
K_DEFAULT = 2
D_MODEL_CHOICES = (8, 16, 32, 64, 128)
D_MODEL_DEFAULT = 16
HEADS_CHOICES = (1, 2, 4, 8)  # every choice divides every d_model choice
HEADS_DEFAULT = 2
SEED_MAX = 1_000_000
SEED_DEFAULT = 0
MASK_KINDS = ("none", "causal", "padding", "causal-padding")
MASK_DEFAULT = "none"
PAD_DEFAULT = 2
TEXT_MAX_CHARS = 4000
TEXT_DEFAULT = ""

assert all(d % h == 0 for d in D_MODEL_CHOICES for h in HEADS_CHOICES)


def tokenize(text: str) -> tuple[str, ...]:
    """Whitespace tokens of ``text``, at most N_MAX of them.

    >>> tokenize("  the cat  sat ")
    ('the', 'cat', 'sat')
    """
    return tuple(text.split()[:N_MAX])


@dataclass(frozen=True)
class ViewParams:
    """Everything that defines one view of the explorer. Hashable: the cache key of every page.

    ``n`` is the slider's sequence length; with a non-empty ``text`` the token count wins (see
    :attr:`length`). ``pad`` trailing keys are padding when the mask includes padding.
    """

    n: int = N_DEFAULT
    k: int = K_DEFAULT
    d_model: int = D_MODEL_DEFAULT
    heads: int = HEADS_DEFAULT
    seed: int = SEED_DEFAULT
    mask: str = MASK_DEFAULT
    pad: int = PAD_DEFAULT
    text: str = TEXT_DEFAULT
    win: int = 0

    def __post_init__(self) -> None:
        _check_range("n (sequence length)", self.n, 1, N_MAX)
        _check_range("k (clip distance)", self.k, 0, K_MAX)
        _check_choice("d_model", self.d_model, D_MODEL_CHOICES)
        _check_choice("heads", self.heads, HEADS_CHOICES)
        _check_range("seed", self.seed, 0, SEED_MAX)
        _check_choice("mask", self.mask, MASK_KINDS)
        _check_range("pad (padded positions)", self.pad, 0, N_MAX)
        if not isinstance(self.text, str) or len(self.text) > TEXT_MAX_CHARS:
            raise ValueError(f"text must be a string of at most {TEXT_MAX_CHARS} characters")
        _check_range("win (window start)", self.win, 0, WIN_MAX)

    @property
    def tokens(self) -> tuple[str, ...]:
        """The typed tokens; empty when no text was typed."""
        return tokenize(self.text)

    @property
    def length(self) -> int:
        """Sequence length actually shown: the token count if text was typed, else ``n``."""
        return len(self.tokens) or self.n

    @property
    def window(self) -> tuple[int, int]:
        """Positions [start, stop) drawn on both axes of an (n, n) heatmap.

        The whole sequence up to DISPLAY_MAX; beyond, DISPLAY_MAX positions from ``win``
        (clamped so the window ends at the last position).

        >>> ViewParams(n=8).window, ViewParams(n=4096, win=100).window
        ((0, 8), (100, 612))
        >>> ViewParams(n=1000, win=3000).window
        (488, 1000)
        """
        size = min(self.length, DISPLAY_MAX)
        start = min(self.win, self.length - size)
        return start, start + size

    @property
    def windowed(self) -> bool:
        """True when the heatmaps show a window, not the whole sequence."""
        return self.length > DISPLAY_MAX

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    @property
    def causal(self) -> bool:
        return "causal" in self.mask

    @property
    def n_pad(self) -> int:
        """Trailing padded keys: ``pad`` clipped to the length, 0 unless the mask is padding."""
        return min(self.pad, self.length) if "padding" in self.mask else 0


@dataclass(frozen=True)
class ParsedQuery:
    """Result of :func:`parse_query`: the view, what was wrong, and the values to force.

    ``corrections`` maps each URL key whose raw value was unusable to the value used instead, so
    the app can put the corrected value into its widget.
    """

    params: ViewParams
    warnings: tuple[str, ...] = ()
    corrections: dict[str, object] = field(default_factory=dict)


_INT_LIMITS = {
    "n": ("n (sequence length)", 1, N_MAX, N_DEFAULT),
    "k": ("k (clip distance)", 0, K_MAX, K_DEFAULT),
    "seed": ("seed", 0, SEED_MAX, SEED_DEFAULT),
    "pad": ("pad (padded positions)", 0, N_MAX, PAD_DEFAULT),
    "win": ("win (window start)", 0, WIN_MAX, 0),
}
_CHOICES: dict[str, tuple[tuple[object, ...], object]] = {
    "d_model": (D_MODEL_CHOICES, D_MODEL_DEFAULT),
    "heads": (HEADS_CHOICES, HEADS_DEFAULT),
    "mask": (MASK_KINDS, MASK_DEFAULT),
}
QUERY_KEYS = (*_INT_LIMITS, *_CHOICES, "text")


def _shown(raw: str, limit: int = 40) -> str:
    return repr(raw if len(raw) <= limit else raw[:limit] + "...")


def parse_query(raw: Mapping[str, str | Sequence[str]]) -> ParsedQuery:
    """Validate raw query-string values into a :class:`ViewParams`; never raises.

    Integers out of range are clamped, non-integers and unknown choices fall back to the
    default, over-long text is truncated; each such fix adds a warning naming the parameter,
    the allowed range and the value received. Unknown keys are left alone (the page path and
    other pages' parameters live there too).

    >>> parsed = parse_query({"n": "100000", "k": "abc"})
    >>> parsed.params.n, parsed.params.k
    (4096, 2)
    >>> parsed.warnings[0]
    "URL parameter n: n (sequence length) must be an integer in [1, 4096], got '100000'; using 4096"
    """
    values: dict[str, object] = {}
    warnings: list[str] = []
    corrections: dict[str, object] = {}
    for key, value in raw.items():
        if key not in QUERY_KEYS:
            continue
        text = value if isinstance(value, str) else (value[-1] if len(value) else "")
        if key in _INT_LIMITS:
            name, low, high, default = _INT_LIMITS[key]
            number = _to_int(text)
            if number is None:
                got, use = default, default
            else:
                got, use = number, min(high, max(low, number))
            if got != use or number is None or text.strip() != str(number):
                warnings.append(
                    f"URL parameter {key}: {name} must be an integer in [{low}, {high}], "
                    f"got {_shown(text)}; using {use}"
                )
                corrections[key] = use
            values[key] = use
        elif key in _CHOICES:
            choices, default = _CHOICES[key]
            match = next((c for c in choices if str(c) == text.strip()), None)
            if match is None:
                allowed = ", ".join(str(c) for c in choices)
                warnings.append(
                    f"URL parameter {key}: must be one of {allowed}, got {_shown(text)}; "
                    f"using {default}"
                )
                corrections[key] = default
                match = default
            values[key] = match
        else:
            if len(text) > TEXT_MAX_CHARS:
                warnings.append(
                    f"URL parameter text: at most {TEXT_MAX_CHARS} characters, "
                    f"got {len(text)}; truncated"
                )
                text = text[:TEXT_MAX_CHARS]
                corrections[key] = text
            if any(ch in text for ch in "<>&`[]*_\\"):
                warnings.append(
                    "The text contains markup characters; it is shown as plain text, never rendered"
                )
            if len(text.split()) > N_MAX:
                warnings.append(
                    f"The text has {len(text.split())} tokens; only the first {N_MAX} are used"
                )
            values[key] = text
    return ParsedQuery(ViewParams(**values), tuple(warnings), corrections)  # type: ignore[arg-type]


def _to_int(text: str) -> int | None:
    """An integer, or a finite decimal truncated toward zero as Streamlit does; else None."""
    try:
        return int(text.strip())
    except ValueError:
        pass
    try:
        return int(float(text))
    except (ValueError, OverflowError):
        return None


def _check_range(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")


def _check_choice(name: str, value: object, choices: tuple[object, ...]) -> None:
    if value not in choices or isinstance(value, bool):
        allowed = ", ".join(str(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
