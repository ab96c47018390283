"""One raw URL value of a shared parameter -> the value the app uses, and a warning when the
value had to change (clamped, not a choice, not an integer, text that cannot be shown).

Pure (no streamlit); :func:`explorer.frame.url_query.parse_query` calls it once per key.
"""

from __future__ import annotations

import unicodedata

from explorer.frame.params import (
    D_MODEL_CHOICES,
    D_MODEL_DEFAULT,
    HEADS_CHOICES,
    HEADS_DEFAULT,
    K_DEFAULT,
    K_MAX,
    MASK_DEFAULT,
    MASK_KINDS,
    N_DEFAULT,
    N_MAX,
    PAD_DEFAULT,
    SEED_DEFAULT,
    SEED_MAX,
    TEXT_MAX_CHARS,
    TRAINED_LAYERS,
    WEIGHTS_DEFAULT,
    WEIGHTS_KINDS,
    WIN_MAX,
)

INT_LIMITS = {
    "n": ("n (sequence length)", 1, N_MAX, N_DEFAULT),
    "k": ("k (clip distance)", 0, K_MAX, K_DEFAULT),
    "seed": ("seed", 0, SEED_MAX, SEED_DEFAULT),
    "pad": ("pad (padded positions)", 0, N_MAX, PAD_DEFAULT),
    "win": ("win (window start)", 0, WIN_MAX, 0),
    "layer": ("layer (of the trained model)", 0, TRAINED_LAYERS - 1, 0),
}
CHOICES: dict[str, tuple[tuple[object, ...], object]] = {
    "d_model": (D_MODEL_CHOICES, D_MODEL_DEFAULT),
    "heads": (HEADS_CHOICES, HEADS_DEFAULT),
    "mask": (MASK_KINDS, MASK_DEFAULT),
    "weights": (WEIGHTS_KINDS, WEIGHTS_DEFAULT),
}
# Characters a browser may draw out of order or not at all: removed, with a warning.
_BIDI_CONTROLS = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def quoted(raw: str, limit: int = 40) -> str:
    """A URL value as a warning quotes it: in quotes, cut after ``limit`` characters."""
    return repr(raw if len(raw) <= limit else raw[:limit] + "...")


def validate(key: str, text: str) -> tuple[object, str]:
    """(the value used, a warning or '') for one raw value of a shared key."""
    if key in INT_LIMITS:
        name, low, high, default = INT_LIMITS[key]
        number = to_int(text)
        use = default if number is None else min(high, max(low, number))
        if number is None or use != number or text.strip() != str(number):
            return use, (
                f"URL parameter {key}: {name} must be an integer in [{low}, {high}], "
                f"got {quoted(text)}; using {use}"
            )
        return use, ""
    if key in CHOICES:
        choices, default = CHOICES[key]
        match = next((c for c in choices if str(c) == text.strip()), None)
        if match is None:
            allowed = ", ".join(str(c) for c in choices)
            return default, (
                f"URL parameter {key}: must be one of {allowed}, got {quoted(text)}; "
                f"using {default}"
            )
        return match, ""
    return clean_text(text)


def clean_text(text: str, name: str = "URL parameter text") -> tuple[str, str]:
    """The text as the app uses it and a warning (about ``name``) when anything was changed;
    the one cleaning for text from the URL and text typed in the sidebar.

    Markup (``<b>``, ``[CLS]``, ``_``, ``*``) is never a problem: the app shows text literally.
    Only what is actually changed is reported: control characters that cannot be drawn,
    bidirectional controls that would reorder what is drawn, and text beyond the limit.
    """
    notes = []
    kept = "".join(
        ch
        for ch in text
        if ch.isspace() or (unicodedata.category(ch) != "Cc" and ch not in _BIDI_CONTROLS)
    )
    if len(kept) < len(text):
        notes.append(f"removed {len(text) - len(kept)} control character(s) that cannot be shown")
    if len(kept) > TEXT_MAX_CHARS:
        notes.append(f"at most {TEXT_MAX_CHARS} characters, got {len(kept)}; truncated")
        kept = kept[:TEXT_MAX_CHARS]
    count = len(kept.split())
    if count > N_MAX:
        notes.append(f"{count} tokens; only the first {N_MAX} are used")
    return kept, (f"{name}: " + "; ".join(notes) if notes else "")


def to_int(text: str) -> int | None:
    """An integer, or a finite decimal truncated toward zero as Streamlit does; else None."""
    try:
        return int(text.strip())
    except ValueError:
        pass
    try:
        return int(float(text))
    except (ValueError, OverflowError):
        return None
