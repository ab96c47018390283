"""What the tests that run over every scheme expect of each one, written in the scheme's own
oracle test, ``tests/schemes/test_<name>_scheme.py``, from its paper:

    SHIFT_INVARIANT_WITH_CONTENT   whether its position term is a function of j - i alone
    learned_parameters(h, d, settings)   its learned parameter count

A new scheme's expectations come with its oracle test; a scheme without one fails in those tests
with a message naming the file to add."""

from __future__ import annotations

import importlib
from types import ModuleType


def expected(name: str) -> ModuleType:
    """The oracle test module of scheme ``name``, holding what the tests expect of it."""
    try:
        return importlib.import_module(f"tests.schemes.test_{name}_scheme")
    except ModuleNotFoundError as error:
        if error.name != f"tests.schemes.test_{name}_scheme":
            raise
        raise AssertionError(
            f"scheme {name!r} has no oracle test: add tests/schemes/test_{name}_scheme.py with "
            "SHIFT_INVARIANT_WITH_CONTENT and learned_parameters (see docs/contributing.md)"
        ) from None
