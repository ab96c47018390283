"""Check an implementation of a relative position step against its definition.

    verdict = check_implementation("shaw", my_attention)
    assert verdict.ok, verdict.text

The user's function is called on float64 inputs at sizes chosen to expose each known bug class
and compared cell by cell with the definition; the verdict says, in words, equal, equal up to
a constant per softmax row, differs (where, and which known bug), or cannot be called. Each
kind's calling convention is ``KINDS[kind].convention``.

A kind is the ``KIND`` of a scheme folder's ``reference`` module
(``relpos_core/schemes/<name>/reference.py``): ``KINDS`` is the walk of those folders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache

from relpos_core.check.kind import Kind
from relpos_core.check.verdict import CANNOT, DIFFERS, EQUAL, ROW_CONSTANT, Verdict, check
from relpos_core.schemes.folders import folders, part


@cache
def walked(packages: tuple[str, ...]) -> dict[str, Kind]:
    """The ``KIND`` of each folder among ``packages`` that has a reference, by name, in order."""
    kinds = [m.KIND for m in (part(p, "reference") for p in packages) if m is not None]
    found: dict[str, Kind] = {}
    for kind in sorted(kinds, key=lambda k: (k.order, k.name)):
        if kind.name in found:
            raise ValueError(f"two scheme folders define the checker's kind {kind.name!r}")
        found[kind.name] = kind
    return found


class Kinds(Mapping[str, Kind]):
    """Every kind by name, read from the scheme folders each time it is asked (walked once)."""

    def __getitem__(self, name: str) -> Kind:
        return walked(folders())[name]

    def __iter__(self) -> Iterator[str]:
        return iter(walked(folders()))

    def __len__(self) -> int:
        return len(walked(folders()))

    def __repr__(self) -> str:
        return f"KINDS({', '.join(self)})"


KINDS: Mapping[str, Kind] = Kinds()


def check_implementation(kind: str, fn: Callable) -> Verdict:
    """The verdict on ``fn`` as an implementation of ``kind`` (one of ``KINDS``)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return check(KINDS[kind], fn)


__all__ = [
    "CANNOT",
    "DIFFERS",
    "EQUAL",
    "KINDS",
    "ROW_CONSTANT",
    "Kind",
    "Verdict",
    "check_implementation",
]
