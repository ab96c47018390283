"""Every example in docs/check.md is a right implementation of its kind: each code block under
a kind's heading is run and its function checked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from relpos_core.check import EQUAL, KINDS, check_implementation

DOC = Path(__file__).resolve().parents[2] / "docs" / "check.md"
SECTION = re.compile(r"^### `(?P<kind>[\w-]+)`.*?```python\n(?P<code>.*?)```", re.S | re.M)


def examples() -> dict[str, str]:
    return {m["kind"]: m["code"] for m in SECTION.finditer(DOC.read_text())}


def test_every_kind_has_an_example() -> None:
    assert set(examples()) == set(KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_docs_example_is_right(kind: str) -> None:
    code = examples()[kind]
    assert len([line for line in code.splitlines() if line.strip()]) <= 14  # about ten
    scope: dict[str, object] = {}
    exec(compile(code, f"docs/check.md ({kind})", "exec"), scope)  # noqa: S102 (our own docs)
    function = scope[kind.replace("-", "_")]  # each example's function is named as its kind
    verdict = check_implementation(kind, function)
    assert verdict.status == EQUAL, verdict.text
