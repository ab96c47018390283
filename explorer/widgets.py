"""The explorer's URL-bound widgets, each given a value it can take before it is drawn.

A control's allowed values often follow another control: the window start follows n, a zoom
follows the window, a head picker follows the head count, a picked cell follows the sequence.
Streamlit keeps a bound widget's value in session state, also while the widget is hidden, and
when that value no longer fits the widget's new range it raises (``StreamlitValueBelowMinError``,
``StreamlitValueAboveMaxError``) or falls back to its default without a word. So every widget
here first calls :func:`fit`, which settles in session state the value the widget will show
(before the widget exists: the only moment Streamlit lets it be set):

- a value kept from an earlier run of this session is the user's own (the URL only mirrors
  it): one that no longer fits moves to the nearest allowed value, and a caption says so,
  once; one the user never moved (still the widget's default) follows the new default quietly;
- otherwise the value comes from the URL just opened: one the widget cannot take is replaced by
  the default, with a warning naming the URL parameter, what is allowed and the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import streamlit as st

BIND = "query-params"
_DEFAULTS_KEY = "_widget_defaults"  # key -> the default each widget was last drawn with
_MARKDOWN_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character


def md_escape(text: str) -> str:
    """Backslash-escape every punctuation character so markdown shows ``text`` literally."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


@dataclass(frozen=True)
class Allowed:
    """What a widget can take.

    ``text`` says it in words ("an integer in [0, 699]"); ``fits`` tells whether a value is
    allowed; ``nearest`` maps a value that is not to the closest allowed one (None: no such
    thing, use the default); ``outside`` says how a value misses ("above the new maximum 699");
    ``parse`` reads the URL's form of a value (None: not a value of this widget). A URL value
    that does not fit gives way to the default, or with ``url_nearest`` to its nearest value.
    """

    text: str
    fits: Callable[[object], bool]
    nearest: Callable[[object], object | None]
    outside: Callable[[object], str]
    parse: Callable[[str], object | None]
    url_nearest: bool = False
    url_form: Callable[[object], str] = str  # how the widget itself writes a value in the URL


def int_range(low: int, high: int) -> Allowed:
    """The integers in [low, high]; a URL value must be written as Streamlit writes it.

    >>> allowed = int_range(0, 699)
    >>> allowed.fits(700), allowed.nearest(700), allowed.outside(700)
    (False, 699, 'above the new maximum 699')
    >>> allowed.parse("12"), allowed.parse("012"), allowed.parse("1.5")
    (12, None, None)
    """

    def is_int(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def parse(raw: str) -> int | None:
        return int(raw) if raw.lstrip("-").isdigit() and raw == str(int(raw)) else None

    return Allowed(
        text=f"an integer in [{low}, {high}]",
        fits=lambda value: is_int(value) and low <= value <= high,  # type: ignore[operator]
        nearest=lambda value: min(max(value, low), high) if is_int(value) else None,  # type: ignore[call-overload]
        outside=lambda value: (
            f"below the new minimum {low}"
            if is_int(value) and value < low  # type: ignore[operator]
            else f"above the new maximum {high}"
        ),
        parse=parse,
    )


def one_of(
    options: Sequence[object], format_func: Callable[[object], object] = str, none_fits=False
) -> Allowed:
    """One of ``options`` (``None`` too with ``none_fits``); the URL holds an option's label,
    and an option's own name is read too (``scheme=xl`` as well as ``scheme=Transformer-XL``).

    A number that is no longer an option moves to the nearest number among them:

    >>> heads = one_of([0, 1])
    >>> heads.fits(5), heads.nearest(5), heads.outside(5)
    (False, 1, 'not one of the choices now (0, 1)')
    >>> one_of(["a", "b"]).nearest("c") is None
    True
    """
    labels = [str(format_func(option)) for option in options]
    by_label = {**{str(o): o for o in options}, **dict(zip(labels, options, strict=True))}
    numbers = [o for o in options if isinstance(o, int | float) and not isinstance(o, bool)]

    def nearest(value: object) -> object | None:
        if not numbers or not isinstance(value, int | float) or isinstance(value, bool):
            return None
        return min(numbers, key=lambda o: abs(o - value))

    return Allowed(
        text="one of " + ", ".join(labels),
        fits=lambda value: (value is None and none_fits) or value in options,
        nearest=nearest,
        outside=lambda value: f"not one of the choices now ({', '.join(labels)})",
        parse=by_label.get,
        url_form=lambda value: str(format_func(value)),
    )


def text_of_length(max_chars: int) -> Allowed:
    """Text of at most ``max_chars`` characters; longer text keeps its beginning."""
    return Allowed(
        text=f"text of at most {max_chars} characters",
        fits=lambda value: isinstance(value, str) and len(value) <= max_chars,
        nearest=lambda value: value[:max_chars] if isinstance(value, str) else None,
        outside=lambda value: f"longer than {max_chars} characters",
        parse=lambda raw: raw,
        url_nearest=True,
    )


BOOLEAN = Allowed(
    text="true or false",
    fits=lambda value: isinstance(value, bool),
    nearest=lambda value: None,
    outside=lambda value: "not true or false",
    parse=lambda raw: {"true": True, "false": False}.get(raw.lower()),
)


def fit(key: str, allowed: Allowed, default: object, name: str) -> None:
    """Settle the value widget ``key`` will show, before it is drawn (see the module docstring).

    ``name`` is what the caption calls the control when a kept value had to move.
    """
    if not allowed.fits(default):
        default = allowed.nearest(default)
    defaults = st.session_state.get(_DEFAULTS_KEY, {})
    untouched = defaults.get(key, default)
    st.session_state[_DEFAULTS_KEY] = {**defaults, key: default}
    if key in st.session_state:  # kept: the user's value, whatever the URL shows
        kept = st.session_state[key]
        if allowed.fits(kept):
            return
        moved = allowed.nearest(kept)
        st.session_state[key] = default if moved is None or kept == untouched else moved
        if kept != untouched:
            shown = st.session_state[key]
            st.caption(
                ":material/tune: "
                + md_escape(f"{name} {kept} was {allowed.outside(kept)}; moved to {shown}")
            )
        return
    raw = st.query_params.get(key)
    if raw is None:
        return
    value = allowed.parse(raw)
    if value is not None and allowed.fits(value):
        if raw != allowed.url_form(value):  # another spelling the widget would not read
            st.session_state[key] = value
        return
    cut = allowed.url_nearest and isinstance(value, str)  # over-long text keeps its beginning
    use = allowed.nearest(value) if cut else default
    shown = raw if len(raw) <= 40 else raw[:40] + "..."
    used = f"the first {len(use)} characters" if cut else allowed.url_form(use)
    st.warning(
        md_escape(f"URL parameter {key}: must be {allowed.text}, got {shown!r}; using {used}"),
        icon=":material/warning:",
    )
    st.session_state[key] = use


def int_slider(
    label: str,
    low: int,
    high: int,
    key: str,
    value: int | None = None,
    *,
    name: str | None = None,
    bind: str | None = BIND,
    **kwargs,
) -> int:
    """A URL-bound integer slider in [low, high] (``value`` defaults to ``low``), fitted first."""
    value = low if value is None else value
    fit(key, int_range(low, high), value, name or label)
    return int(st.slider(label, low, high, value, key=key, bind=bind, **kwargs))


def int_number(
    label: str,
    low: int,
    high: int,
    key: str,
    value: int,
    *,
    name: str | None = None,
    bind: str | None = BIND,
    **kwargs,
) -> int:
    """A URL-bound integer box in [low, high], fitted first."""
    fit(key, int_range(low, high), value, name or label)
    return int(st.number_input(label, low, high, value, step=1, key=key, bind=bind, **kwargs))


def choice(
    label: str,
    options: Sequence[object],
    key: str,
    *,
    kind: Literal["segmented", "radio", "select"] = "segmented",
    format_func=str,
    default: object = None,
    name: str | None = None,
    bind: str | None = BIND,
    **kwargs,
):
    """A URL-bound segmented control, radio or select box over ``options``, fitted first;
    ``default`` (else the first option) by default.

    A deselected segmented control reads as the default, so the result is always an option.
    """
    default = options[0] if default is None else default
    allowed = one_of(options, format_func, none_fits=kind == "segmented")
    fit(key, allowed, default, name or label)
    common = {"key": key, "bind": bind, "format_func": format_func, **kwargs}
    if kind == "segmented":
        widget = st.segmented_control(label, options, default=default, **common)
    else:
        draw = st.radio if kind == "radio" else st.selectbox
        widget = draw(label, options, index=list(options).index(default), **common)
    return default if widget is None else widget


def toggle(label: str, key: str, value: bool) -> bool:
    """A URL-bound toggle, fitted first (the URL says true or false)."""
    fit(key, BOOLEAN, value, label)
    return bool(st.toggle(label, value=value, key=key, bind=BIND))


def text_box(
    label: str, key: str, value: str, max_chars: int, *, bind: str | None = BIND, **kwargs
) -> str:
    """A URL-bound text input of at most ``max_chars`` characters, fitted first."""
    fit(key, text_of_length(max_chars), value, label)
    return st.text_input(label, value, max_chars=max_chars, key=key, bind=bind, **kwargs)


def head_picker(heads: int, key: str) -> int:
    """The head a page draws: a URL-bound segmented control over 0..heads-1."""
    return choice("head", list(range(heads)), key)


SCALE_CHOICES = {"own": "each its own", "shared": "one for all"}


def shared_scale_picker(key: str) -> bool:
    """Whether a figure's panels share one colour scale (to compare their sizes) or each has
    its own (to show its own pattern, the default): a URL-bound segmented control."""
    picked = choice("colour scale", list(SCALE_CHOICES), key, format_func=SCALE_CHOICES.get)
    return picked == "shared"
