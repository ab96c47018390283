"""The scheme folders: every sub-package of ``relpos_core.schemes`` is one scheme, found by
walking the package's path, never by a list.

A folder holds what the project knows of its scheme, one module a part (a part a scheme lacks is
simply absent):

    maths         the ``PositionScheme`` class and its helpers (imports torch)
    entry         ``ENTRY``, its catalogue entry: labels, formulas, settings (no torch)
    reference     ``KIND``, the checker's definition from the paper with its known bugs
    by_distance   its reading at every distance j - i, for a model's own parameters
    checkpoints   how published checkpoints store it: tensor names and config fields, as data
    score_mod     its FlexAttention ``score_mod`` (a ``Mod`` over small tables), or words why it is
                  none (``NOT_A_SCORE_MOD``), and a value term's words (``score_mods``)

The catalogue, the checker's kinds, the readings by distance and the checkpoint layouts are each
``parts(...)`` of these folders. Only ``entry`` and ``checkpoints`` are read without torch.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

PARTS = ("maths", "entry", "reference", "by_distance", "checkpoints", "score_mod")


@cache
def folders() -> tuple[str, ...]:
    """Every scheme folder's package name (``relpos_core.schemes.alibi``, ...), by name; a
    folder on the package's ``__path__`` anywhere counts (a copy in a temporary directory too).
    ``folders.cache_clear()`` walks again."""
    import relpos_core.schemes as schemes

    found = {m.name for m in pkgutil.iter_modules(schemes.__path__) if m.ispkg}
    return tuple(f"{schemes.__name__}.{name}" for name in sorted(found))


@cache
def part(package: str, name: str) -> ModuleType | None:
    """Module ``name`` of the folder ``package``, imported; None where the folder has none."""
    if name not in PARTS:
        raise ValueError(f"a scheme folder's part must be one of {', '.join(PARTS)}; got {name!r}")
    if importlib.util.find_spec(f"{package}.{name}") is None:
        return None
    return importlib.import_module(f"{package}.{name}")


def parts(name: str) -> tuple[tuple[str, ModuleType], ...]:
    """(package, module) of part ``name`` in every folder that has one."""
    found = ((package, part(package, name)) for package in folders())
    return tuple((package, module) for package, module in found if module is not None)


def maths_attribute(package: str) -> Callable[[str], Any]:
    """A folder's module ``__getattr__``: its maths module's names, imported when first asked
    (so that reading a folder's entry loads no torch)."""

    def attribute(name: str) -> Any:
        if name.startswith("__") or name in PARTS:  # a part not imported yet: no maths asked
            raise AttributeError(name)
        maths = importlib.import_module(f"{package}.maths")
        try:
            return getattr(maths, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return attribute
