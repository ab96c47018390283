"""Values read from a visitor's JSON (a config, an index, a header's metadata), each checked for
type and range where it is read.

JSON can put anything in any field: text where a count belongs, a list, NaN or Infinity (Python's
parser reads both), true where an integer belongs (Python's bool is an int), an integer of
thousands of digits, nesting thousands of levels deep. ``load_json`` refuses the last two before
anything walks the value; ``Fields`` reads one field at a time and refuses a value that is not
what the field holds with a FileProblem naming the file, the field, the value and what was
expected, before the value sizes or computes anything.

>>> Fields({"rope_theta": 0}, "config.json").real("rope_theta", 1, 1e9, low_open=True)
Traceback (most recent call last):
...
relpos_lab.extract.safetensors_file.FileProblem: config.json: rope_theta is 0; expected a \
number in (1, 1e+09]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

from relpos_lab.extract.safetensors_file import FileProblem

MAX_DEPTH = 32  # a model's config nests 3-4 levels, a safetensors header 3


def load_json(data: bytes | str, what: str, max_depth: int = MAX_DEPTH) -> object:
    """``data`` parsed, nested at most ``max_depth`` levels; a FileProblem naming ``what``."""
    try:
        value = json.loads(data)
    except RecursionError:  # the C parser stops at the interpreter's recursion limit
        raise FileProblem(
            f"{what} nests deeper than the parser can follow; at most {max_depth} levels are read"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FileProblem(f"{what} is not JSON ({error})") from None
    except ValueError:  # Python converts integers of at most 4,300 digits
        raise FileProblem(f"{what} holds an integer of over 4,300 digits") from None
    if too_deep(value, max_depth):
        raise FileProblem(f"{what} nests more than {max_depth} levels deep")
    return value


def too_deep(value: object, max_depth: int) -> bool:
    """Whether lists, tuples and dicts (keys too) nest deeper than ``max_depth``, walked without
    recursion."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > max_depth:
                return True
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def described(value: object) -> str:
    """A value as a message shows it: short, whatever its size (never the whole of a long text,
    never the digits of a huge integer, which Python refuses to write past 4,300)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value.bit_length() <= 64:
            return str(value)
        return f"an integer of {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return ("-" if value < 0 else "") + "Infinity" if math.isinf(value) else f"{value:g}"
    if isinstance(value, str):
        if len(value) <= 40:
            return f"the text {value!r}"
        return f"a text of {len(value):,} characters beginning {value[:20]!r}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value):,} item{'s' * (len(value) != 1)}"
    if isinstance(value, dict):
        return f"an object of {len(value):,} field{'s' * (len(value) != 1)}"
    return f"a {type(value).__name__}"


def interval(low: float, high: float, low_open: bool) -> str:
    return f"{'(' if low_open else '['}{low:g}, {high:g}]"


@dataclass(frozen=True)
class Fields:
    """The fields of one JSON object, read by name: ``where`` names the file in messages and
    ``prefix`` the object's path inside it (``scheme_params.``). An absent field and a JSON
    null read as None."""

    values: Mapping
    where: str
    prefix: str = ""

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def raw(self, key: str) -> object:
        return self.values.get(key)

    def problem(self, key: str, value: object, expected: str) -> FileProblem:
        return FileProblem(
            f"{self.where}: {self.prefix}{key} is {described(value)}; expected {expected}"
        )

    def integer(self, key: str, low: int, high: int) -> int | None:
        """A whole number in [low, high] (true and false are not numbers here)."""
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer() and low <= value <= high:
            return int(value)  # 512.0 is what some tools write for 512
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.problem(key, value, f"a whole number in [{low:,}, {high:,}]")
        return value

    def real(self, key: str, low: float, high: float, *, low_open: bool = False) -> float | None:
        """A finite number in the interval (low's end open when ``low_open``)."""
        value = self.raw(key)
        if value is None:
            return None
        inside = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and (low < value if low_open else low <= value)
            and value <= high
        )
        if not inside:
            raise self.problem(key, value, f"a number in {interval(low, high, low_open)}")
        return float(value)

    def flag(self, key: str) -> bool | None:
        value = self.raw(key)
        if value is not None and not isinstance(value, bool):
            raise self.problem(key, value, "true or false")
        return value

    def text(self, key: str, longest: int = 200) -> str | None:
        value = self.raw(key)
        if value is not None and (not isinstance(value, str) or len(value) > longest):
            raise self.problem(key, value, f"a text of at most {longest} characters")
        return value

    def table(self, key: str) -> Fields | None:
        """A nested object's fields (``attn_config``, ``scheme_params``)."""
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.problem(key, value, "an object of named fields")
        return Fields(value, self.where, f"{self.prefix}{key}.")

    def first(self, keys: tuple[str, ...], read: str, *args, **kwargs):
        """The first of ``keys`` present, read by the method ``read``; (None, None) if none."""
        for key in keys:
            if self.raw(key) is not None:
                return key, getattr(self, read)(key, *args, **kwargs)
        return None, None
