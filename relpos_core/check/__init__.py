"""Check an implementation of a relative position step against its definition.

    verdict = check_implementation("shaw", my_attention)
    assert verdict.ok, verdict.text

The user's function is called on float64 inputs at sizes chosen to expose each known bug class
and compared cell by cell with the definition; the verdict says, in words, equal, equal up to
a constant per softmax row, differs (where, and which known bug), or cannot be called. Each
kind's calling convention is ``KINDS[kind].convention``.
"""

from __future__ import annotations

from collections.abc import Callable

from relpos_core.check.alibi import ALIBI
from relpos_core.check.kind import Kind
from relpos_core.check.rel_shift import REL_SHIFT
from relpos_core.check.rope import ROPE
from relpos_core.check.shaw import SHAW
from relpos_core.check.skew import SKEW
from relpos_core.check.t5 import T5_BUCKET
from relpos_core.check.verdict import CANNOT, DIFFERS, EQUAL, ROW_CONSTANT, Verdict, check

KINDS: dict[str, Kind] = {
    kind.name: kind for kind in (SHAW, SKEW, REL_SHIFT, ALIBI, T5_BUCKET, ROPE)
}


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
