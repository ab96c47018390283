"""What a cached value holds, and the ledger that bounds every cached value by bytes.

:func:`value_bytes` sizes a value by the arrays, tensors and strings it reaches; :func:`read_only`
locks its numpy arrays so no rerun can change what another visitor is shown; a :class:`Ledger`
records each value's size, least recently used first, and clears the oldest from their Streamlit
caches once the total passes its budget. ``explorer.frame.memory`` keeps the one ledger of the
process.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np


def value_bytes(value: Any, _seen: set[int] | None = None) -> int:
    """Bytes of the arrays, tensors, strings and bytes reachable from ``value`` (through
    tuples, lists, dicts, dataclasses and objects' attributes), each counted once.

    >>> value_bytes((np.zeros((4, 4), np.float32), {"a": b"xy"}, "abc"))  # 64 + 1 + 2 + 3
    70
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen or value is None or isinstance(value, bool | int | float | complex):
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if hasattr(value, "element_size") and hasattr(value, "numel"):  # a torch.Tensor
        return int(value.element_size() * value.numel())
    if isinstance(value, bytes | bytearray | str):
        return len(value)
    if isinstance(value, dict):
        return sum(value_bytes(k, seen) + value_bytes(v, seen) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return sum(value_bytes(item, seen) for item in value)
    if dataclasses.is_dataclass(value):
        fields = dataclasses.fields(value)
        return sum(value_bytes(getattr(value, f.name, None), seen) for f in fields)
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return value_bytes(vars(value), seen)
    return 0


def read_only(value: Any, _seen: set[int] | None = None) -> None:
    """Make every numpy array reachable from ``value`` read-only (through the same containers
    as :func:`value_bytes`).

    >>> a = np.zeros(2)
    >>> read_only({"a": [a]})
    >>> a.flags.writeable
    False
    """
    seen = set() if _seen is None else _seen
    if id(value) in seen or value is None or isinstance(value, bool | int | float | complex | str):
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    elif isinstance(value, dict):
        for item in value.values():
            read_only(item, seen)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            read_only(item, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            read_only(getattr(value, f.name, None), seen)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        read_only(vars(value), seen)


@dataclasses.dataclass
class _Entry:
    clear: Callable[[], None]  # clears this one value from its Streamlit cache
    bytes: int
    value_id: int = 0  # id() of the cached object, which its cache keeps alive


class Ledger:
    """Sizes of every cached value, least recently used first; evicts beyond a byte budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(entry.bytes for entry in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def touch(self, key: tuple, value: Any) -> bool:
        """Mark ``key`` used now if it is recorded for this very object (a cache hit), without
        sizing the value again; False if it must be entered (a value computed anew)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.value_id != id(value):
                return False
            self._entries.move_to_end(key)
            return True

    def enter(
        self, key: tuple, clear: Callable[[], None], size: int, per_function: int, value: Any = None
    ) -> None:
        """Record (or touch) ``key`` of ``size`` bytes (``value``: the object cached); keep at
        most ``per_function`` entries of its function (the Streamlit cache keeps as many, least
        recently used out first)."""
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = _Entry(clear, size, id(value))
            mine = [other for other in self._entries if other[0] == key[0]]
            for stale in mine[: max(0, len(mine) - per_function)]:
                del self._entries[stale]  # Streamlit has dropped it already
            evicted = self._over_budget()
        for entry in evicted:
            entry.clear()

    def _over_budget(self) -> list[_Entry]:
        evicted, total = [], sum(entry.bytes for entry in self._entries.values())
        while self._entries and total > self.budget:
            _, entry = self._entries.popitem(last=False)
            evicted.append(entry)
            total -= entry.bytes
        return evicted

    def clear(self) -> int:
        """Clear every recorded value from its cache; returns the bytes they held."""
        with self._lock:
            entries = list(self._entries.values())
            self._entries.clear()
        for entry in entries:
            entry.clear()
        return sum(entry.bytes for entry in entries)
