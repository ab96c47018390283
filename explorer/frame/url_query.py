"""Untrusted query strings -> a valid :class:`ViewParams`, what was wrong, and how to fix the URL.

Pure (no streamlit). The app passes every value of every key (``?n=1&n=2`` gives ``["1", "2"]``)
and gets back the view, one warning per problem naming the key, the values its widgets must take
(``corrections``) and the keys to delete from the address, so that the address bar ends up
holding exactly the view shown and a copied link reopens it.

Aliases (``d`` for ``d_model``, ``h`` for ``heads``, ...) are used, with a warning that names the
real key: what the user meant is unambiguous, and the rewritten link teaches the real name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from explorer.frame.params import (
    DISPLAY_MAX,
    K_DEFAULT,
    N_DEFAULT,
    N_MAX,
    TEXT_DEFAULT,
    TRAINED_CLIPS,
    TRAINED_D_MODEL,
    TRAINED_HEADS,
    TRAINED_MASK,
    ViewParams,
    nearest_trained_clip,
    tokenize,
)
from explorer.frame.query_values import CHOICES, INT_LIMITS, quoted, to_int, validate

QUERY_KEYS = (*INT_LIMITS, *CHOICES, "text")
#: What each shared key means when the URL leaves it out (a bound widget drops its default).
DEFAULTS: dict[str, object] = {
    **{key: limits[3] for key, limits in INT_LIMITS.items()},
    **{key: choice[1] for key, choice in CHOICES.items()},
    "text": TEXT_DEFAULT,
}
#: Names users type for the shared parameters (matched case-insensitively, as are the real keys).
ALIASES = {
    "d": "d_model", "dmodel": "d_model", "d-model": "d_model", "dim": "d_model",
    "h": "heads", "num_heads": "heads", "n_heads": "heads", "nheads": "heads",
    "len": "n", "length": "n", "seq_len": "n", "l": "n",
    "clip": "k", "max_relative_position": "k", "max_rel_pos": "k",
    "window": "win", "start": "win",
    "padding": "pad",
    "sentence": "text", "tokens": "text",
}  # fmt: skip


@dataclass(frozen=True)
class ParsedQuery:
    """The view, what was wrong, and how to fix the address.

    ``corrections``: shared key -> the value its widget must take because the URL's own form
    is not that value (clamped, invalid, repeated, given under an alias). ``remove``: keys to
    delete from the address (aliases, a window start that has no window). ``other_keys``: keys
    that are not shared parameters; the app checks them against the page's own controls.
    """

    params: ViewParams
    warnings: tuple[str, ...] = ()
    corrections: dict[str, object] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    other_keys: tuple[str, ...] = ()


def _values(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def canonical_key(key: str) -> str | None:
    """The shared parameter a URL key names, directly or as an alias; None for other keys.

    >>> canonical_key("d"), canonical_key("N"), canonical_key("attention_head")
    ('d_model', 'n', None)
    """
    lower = key.strip().lower()
    if lower in QUERY_KEYS:
        return lower
    return ALIASES.get(lower)


def parse_query(
    raw: Mapping[str, str | Sequence[str]],
    kept: Mapping[str, object] | None = None,
    k_before: int | None = None,
) -> ParsedQuery:
    """Validate raw query-string values into a :class:`ViewParams`; never raises.

    ``kept`` holds the values the shared widgets already show in this session: they are used
    as they are and the URL's values of those keys, which only mirror them, are not checked
    (so the URL is never blamed for a value the user set with a widget). With trained
    weights, ``k_before`` (the k of the view before) lets k step to the next trained clip
    distance in the direction it moved.

    Integers out of range are clamped (the window start to the last start this n allows),
    non-integers and unknown choices fall back to the default, over-long text is truncated,
    characters that cannot be shown are removed; a repeated key uses its last value; an alias
    is used for its key. Each fix adds a warning naming the key, the allowed values and the
    value received.

    >>> parsed = parse_query({"n": "100000", "k": "abc"})
    >>> parsed.params.n, parsed.params.k
    (4096, 2)
    >>> parsed.warnings[0]
    "URL parameter n: n (sequence length) must be an integer in [1, 4096], got '100000'; using 4096"
    """
    kept = kept or {}
    given: dict[str, list[tuple[str, str]]] = {}  # shared key -> (URL key, value) in URL order
    other: list[str] = []
    for url_key, value in raw.items():
        key = canonical_key(url_key)
        if key is None:
            other.append(url_key)
        else:
            given.setdefault(key, []).extend((url_key, v) for v in _values(value))
    values: dict[str, object] = {}
    warnings: list[str] = []
    corrections: dict[str, object] = {}
    remove: list[str] = []
    for key in QUERY_KEYS:
        if key in kept:
            values[key] = validate(key, str(kept[key]))[0]
            remove.extend(url_key for url_key, _ in given.get(key, ()) if url_key != key)
            continue
        if key not in given:
            continue
        text, reworded, note = _one_value(key, given[key], remove)
        warnings.extend(note)
        value, problem = validate(key, text)
        if problem:
            warnings.append(problem)
        if problem or reworded:
            corrections[key] = value
        values[key] = value
    values.setdefault("weights", DEFAULTS["weights"])  # the app opens on trained weights
    if values.get("weights") == "trained":
        _fit_trained(values, given, kept, warnings, corrections, k_before)
    text = str(values.get("text", ""))
    tokens = text[:N_MAX] if values.get("weights") == "trained" else tokenize(text)
    length = len(tokens) or int(values.get("n", N_DEFAULT))  # type: ignore[call-overload]
    if "win" not in kept:
        _fit_window(values, given, length, warnings, corrections, remove)
    return ParsedQuery(
        ViewParams(**values),  # type: ignore[arg-type]
        tuple(warnings),
        corrections,
        tuple(dict.fromkeys(remove)),
        tuple(other),
    )


def _one_value(
    key: str, pairs: list[tuple[str, str]], remove: list[str]
) -> tuple[str, bool, list[str]]:
    """(the value to use, whether the URL must be rewritten, warnings) for one shared key.

    The real key wins over aliases; of several values the last is used (as a browser's form
    would send it).
    """
    notes: list[str] = []
    exact = [(k, v) for k, v in pairs if k == key]
    aliased = [(k, v) for k, v in pairs if k != key]
    if exact and aliased:
        for url_key in dict.fromkeys(k for k, _ in aliased):
            notes.append(f"URL parameter {url_key}: ignored, {key} is given too")
    chosen = exact or aliased
    for url_key in dict.fromkeys(k for k, _ in aliased):
        remove.append(url_key)
    reworded = False
    if not exact:
        url_key = chosen[-1][0]
        notes.append(
            f"URL parameter {url_key}: read as {key}, the name this app uses; "
            f"the address now says {key}"
        )
        reworded = True
    if len(chosen) > 1:
        listed = ", ".join(quoted(v, 12) for _, v in chosen)
        notes.append(
            f"URL parameter {chosen[-1][0]} is given {len(chosen)} times ({listed}); "
            f"using the last one, {quoted(chosen[-1][1])}"
        )
        reworded = True
    return chosen[-1][1], reworded, notes


def _fit_trained(
    values: dict[str, object],
    given: dict[str, list[tuple[str, str]]],
    kept: Mapping[str, object],
    warnings: list[str],
    corrections: dict[str, object],
    k_before: int | None,
) -> None:
    """With trained weights, d_model, heads and the mask are the model's and k one of the
    clip distances it was trained at: a URL value that differs is replaced, with a warning
    (a value kept in the session follows quietly: the sidebar says why)."""
    fixed = {"d_model": TRAINED_D_MODEL, "heads": TRAINED_HEADS, "mask": TRAINED_MASK}
    k = int(values.get("k", K_DEFAULT))  # type: ignore[call-overload]
    fixed["k"] = nearest_trained_clip(k, k_before if "k" in kept else None)
    for key, use in fixed.items():
        value = values.get(key, DEFAULTS[key])
        if value == use:
            continue
        values[key] = use
        corrections[key] = use
        if key in given and key not in kept:
            allowed = (
                "one of " + ", ".join(map(str, TRAINED_CLIPS))
                if key == "k"
                else f"the model's {use}"
            )
            warnings.append(
                f"URL parameter {key}: with trained weights {key} is {allowed}, got "
                f"{quoted(given[key][-1][1])}; using {use} (weights=random frees it)"
            )


def _fit_window(
    values: dict[str, object],
    given: dict[str, list[tuple[str, str]]],
    length: int,
    warnings: list[str],
    corrections: dict[str, object],
    remove: list[str],
) -> None:
    """Clamp the window start to the last start at this length, saying the number used."""
    if "win" not in given:
        return
    win = int(values["win"])  # type: ignore[call-overload]
    last = max(0, length - DISPLAY_MAX)
    if last == 0:
        if win or to_int(given["win"][-1][1]) != 0:
            warnings[:] = [w for w in warnings if not w.startswith("URL parameter win")]
            warnings.append(
                f"URL parameter win: the window start applies only above n = {DISPLAY_MAX} "
                f"(here n = {length}, every position is shown); ignored"
            )
        values["win"] = 0
        corrections.pop("win", None)
        remove.append("win")
    elif win > last or any(w.startswith("URL parameter win:") for w in warnings):
        warnings[:] = [w for w in warnings if not w.startswith("URL parameter win:")]
        warnings.append(
            f"URL parameter win: win (window start) must be an integer in [0, {last}] at "
            f"n = {length}, got {quoted(given['win'][-1][1])}; using {min(win, last)}"
        )
        values["win"] = min(win, last)
        corrections["win"] = min(win, last)
