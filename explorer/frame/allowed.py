"""What a URL-bound widget can take: an :class:`Allowed` says it in words, tells whether a value
fits, finds the nearest value that does, and reads the URL's form of a value.

:func:`explorer.frame.widgets.fit` uses one to settle a widget's value before it is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Allowed:
    """What a widget can take.

    ``text`` says it in words ("an integer in [0, 699]"); ``fits`` tells whether a value is
    allowed; ``nearest`` maps a value that is not to the closest allowed one (None: no such
    thing, use the default); ``outside`` says how a value misses ("above the new maximum 699");
    ``parse`` reads the URL's form of a value (None: not a value of this widget). A URL value
    that does not fit gives way to the default, or with ``url_nearest`` to its nearest value.
    With ``many`` a value is a list (a multiselect's), one URL value per item.
    """

    text: str
    fits: Callable[[object], bool]
    nearest: Callable[[object], object | None]
    outside: Callable[[object], str]
    parse: Callable[[str], object | None]
    url_nearest: bool = False
    url_form: Callable[[object], str] = str  # how the widget itself writes a value in the URL
    many: bool = False

    def read(self, raws: Sequence[str]) -> object | None:
        """The value the URL's values of a key say (the last one, or every one with ``many``);
        None when one of them is not a value of this widget."""
        if not self.many:
            return self.parse(raws[-1])
        items = [self.parse(raw) for raw in raws if raw]  # ``key=`` alone: nothing picked
        return None if None in items else items

    def url_values(self, value: object) -> list[str]:
        """What the widget writes in the URL for ``value``: one string per URL value."""
        if not self.many:
            return [self.url_form(value)]
        return [self.url_form(item) for item in value] or [""]  # type: ignore[attr-defined]


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
    options: Sequence[object],
    format_func: Callable[[object], object] = str,
    none_fits=False,
    aliases: Mapping[str, object] | None = None,
) -> Allowed:
    """One of ``options`` (``None`` too with ``none_fits``); the URL holds an option's label,
    and an option's own name and each of ``aliases`` (other spelling -> option) are read too.

    >>> step = one_of([1, 2], lambda s: f"{s} pad", aliases={"two": 2})
    >>> step.parse("2 pad"), step.parse("2"), step.parse("two"), step.url_form(2)
    (2, 2, 2, '2 pad')

    A number that is no longer an option moves to the nearest number among them:

    >>> heads = one_of([0, 1])
    >>> heads.fits(5), heads.nearest(5), heads.outside(5)
    (False, 1, 'not one of the choices now (0, 1)')
    >>> one_of(["a", "b"]).nearest("c") is None
    True
    """
    labels = [str(format_func(option)) for option in options]
    by_label = {
        **(aliases or {}),
        **{str(o): o for o in options},
        **dict(zip(labels, options, strict=True)),
    }
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


def some_of(options: Sequence[object]) -> Allowed:
    """Any of ``options``, each at most once (a multiselect's list); the URL holds one value per
    option picked, as ``key=a&key=b``.

    >>> methods = some_of(["skew", "bucket"])
    >>> methods.read(["bucket", "skew"]), methods.read(["fast"]), methods.url_values([])
    (['bucket', 'skew'], None, [''])
    """
    names = [str(option) for option in options]
    by_name = dict(zip(names, options, strict=True))
    return Allowed(
        text="any of " + ", ".join(names) + ", each at most once",
        fits=lambda value: (
            isinstance(value, list)
            and len(set(value)) == len(value)
            and all(item in options for item in value)
        ),
        nearest=lambda value: None,
        outside=lambda value: "not among the choices now",
        parse=by_name.get,
        many=True,
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
    url_form=lambda value: str(value).lower(),
)
