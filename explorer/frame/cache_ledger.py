"""What a cached value holds, and the ledger that bounds every cached value by bytes.

:func:`value_bytes` sizes a value by the arrays, tensors and strings it reaches; :func:`read_only`
locks its numpy arrays so no rerun can change what another visitor is shown; a :class:`Ledger`
records each value's size and what it cost to compute, and clears from their Streamlit caches
those cheapest to compute again per byte once the total passes its budget.
``explorer.frame.memory`` keeps the one ledger of the process.
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
    cost_s: float = 0.0  # what computing it again would take
    priority: float = 0.0  # GreedyDual-Size's H: the smallest is evicted first
    run: int = 0  # the view run that last entered or used it


class Ledger:
    """Sizes of every cached value; evicts beyond a byte budget what is cheapest to compute again
    per byte held, the least recently used first among equals.

    GreedyDual-Size (Cao and Irani 1997): a value entered or used gets the priority
    ``inflation + cost_s / bytes``; the smallest goes first and its priority becomes the new
    inflation, so what is not used again ages out. With every cost 0 it is least recently used.
    A model's pass over a passage (seconds, kilobytes) then outlives a large map computed in
    milliseconds, which plain recency evicted first. What the view now being drawn has used
    (since :meth:`start_run`) goes last, least recently used first: a view's own working set is
    never pushed out by what other views computed, so drawing it again computes nothing.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict[tuple, _Entry] = OrderedDict()  # least recently used first
        self._inflation = 0.0
        self._run = 0
        self._lock = threading.Lock()

    def start_run(self) -> None:
        """A new view is being drawn (runs are one at a time: ``memory.VIEW_SLOT``)."""
        with self._lock:
            self._run += 1

    def _priority(self, entry: _Entry) -> float:
        return self._inflation + entry.cost_s / max(entry.bytes, 1)

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
            entry.priority, entry.run = self._priority(entry), self._run
            self._entries.move_to_end(key)
            return True

    def enter(
        self,
        key: tuple,
        clear: Callable[[], None],
        size: int,
        per_function: int,
        value: Any = None,
        cost_s: float = 0.0,
    ) -> None:
        """Record (or touch) ``key`` of ``size`` bytes (``value``: the object cached, ``cost_s``:
        the seconds it took); keep at most ``per_function`` entries of its function (the
        Streamlit cache keeps as many, least recently used out first)."""
        with self._lock:
            self._entries.pop(key, None)
            entry = _Entry(clear, size, id(value), cost_s, run=self._run)
            entry.priority = self._priority(entry)
            self._entries[key] = entry
            mine = [other for other in self._entries if other[0] == key[0]]
            for stale in mine[: max(0, len(mine) - per_function)]:
                del self._entries[stale]  # Streamlit has dropped it already
            evicted = self._over_budget()
        for entry in evicted:
            entry.clear()

    def _over_budget(self) -> list[_Entry]:
        evicted, total = [], sum(entry.bytes for entry in self._entries.values())
        while self._entries and total > self.budget:
            older = [k for k, e in self._entries.items() if e.run != self._run]
            if older:  # min keeps the first of equals: the least recently used
                key = min(older, key=lambda k: self._entries[k].priority)
            else:  # only this view's own values: the least recently used
                key = next(iter(self._entries))
            entry = self._entries.pop(key)
            self._inflation = max(self._inflation, entry.priority)
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
