"""The guard: refuse a computation whose estimated memory is beyond the machine, before it
allocates anything. The estimates themselves come from ``relpos_core.memory``.
"""

from __future__ import annotations

import math
import numbers
import os
import time
from pathlib import Path

import torch

from relpos_core.validation import check_device, check_max_bytes


def device_memory_bytes(device: torch.device | str | None = None) -> int | None:
    """Total memory of ``device``: for the CPU, physical RAM or the process's control-group
    limit, whichever is smaller (a container's limit is the memory it really has); the card's
    memory for CUDA; None where torch cannot tell (then nothing is refused)."""
    device = check_device("device", device)
    device = torch.device("cpu") if device is None else device
    return _total_memory(device.type, device.index)


def _total_memory(kind: str, index: int | None) -> int | None:
    if kind == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (index or 0) >= count:
            have = f"cuda:0 to cuda:{count - 1}" if count else "none here"
            raise ValueError(
                f"device must be a CUDA device this machine has ({have}), got cuda:{index or 0}"
            )
        return int(torch.cuda.get_device_properties(index).total_memory)
    if kind == "cpu":
        sizes = [size for size in (_physical_memory(), cgroup_memory_limit()) if size]
        return min(sizes) if sizes else None
    return None


# torch.compile reads it once while tracing and keeps the number (sysconf and file reads cannot
# be traced). This is what torch.compiler.assume_constant_result sets; setting it here spares
# every import of the package the import of torch._dynamo (1.5 s and 70 MB on two cores).
_total_memory._dynamo_marked_constant = True  # type: ignore[attr-defined]


def _physical_memory() -> int | None:
    if not hasattr(os, "sysconf"):
        return None
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return None


# Every guarded call asks for the limit: reading the files costs about 1 ms, a tenth of a
# fast attention call at n = 1024. A limit read less than a second ago is taken as it was.
_LIMIT_TTL_S = 1.0
_limits_read: dict[tuple[str, str], tuple[float, int | None]] = {}


def cgroup_memory_limit(
    proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup"
) -> int | None:
    """The smallest memory limit on this process's control group and its ancestors (cgroup v2
    ``memory.max``, v1 ``memory.limit_in_bytes``); None on a host without one (no Linux, no
    cgroup, or no limit set). Read again once a second at most.

    Linux kills a process whose group goes over this limit, however much RAM the host has.
    """
    now = time.monotonic()
    read = _limits_read.get((proc_cgroup, root))
    if read is not None and now - read[0] < _LIMIT_TTL_S:
        return read[1]
    limit = _read_cgroup_limit(proc_cgroup, root)
    _limits_read[(proc_cgroup, root)] = (now, limit)
    return limit


def _read_cgroup_limit(proc_cgroup: str, root: str) -> int | None:
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2: one unified hierarchy
            base, name = Path(root), "memory.max"
        elif "memory" in controllers.split(","):
            base, name = Path(root) / "memory", "memory.limit_in_bytes"
        else:
            continue
        folder = base / path.lstrip("/")
        while True:  # a parent's limit binds its children too
            try:
                text = (folder / name).read_text().strip()
            except OSError:
                text = "max"
            if text.isdigit() and int(text) < 2**60:  # v1 writes "no limit" as a huge number
                limits.append(int(text))
            if folder == base or base not in folder.parents:
                break
            folder = folder.parent
    return min(limits) if limits else None


def format_bytes(count: int) -> str:
    """Binary units, one decimal.

    >>> format_bytes(256 * 2**20), format_bytes(3 * 2**30), format_bytes(1536)
    ('256.0 MiB', '3.0 GiB', '1.5 KiB')
    """
    if isinstance(count, bool) or not isinstance(count, numbers.Real):
        raise TypeError(
            f"count (bytes) must be a number (int or float), got {type(count).__name__} {count!r}"
        )
    if not (0 <= count < math.inf):  # NaN fails too
        raise ValueError(f"count (bytes) must be a finite number >= 0, got {count}")
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def check_fits(
    what: str,
    need: int,
    max_bytes: int | None,
    device: torch.device | str | None = None,
) -> None:
    """Refuse (ValueError) a computation estimated at ``need`` bytes above ``max_bytes``.

    ``max_bytes=None`` means the total memory of ``device`` (see ``device_memory_bytes``): a
    call that could never fit is refused up front instead of failing inside the allocator or
    being killed. Pass a larger ``max_bytes`` to run anyway (the estimates are upper bounds).

    >>> check_fits("demo", 2**70, max_bytes=None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: demo needs about 1073741824.0 TiB, more than max_bytes = ... (...); ...
    """
    if not isinstance(what, str):
        raise TypeError(f"what (the call to name) must be a str, got {type(what).__name__}")
    if isinstance(need, bool) or not isinstance(need, (numbers.Integral, torch.SymInt)):
        raise TypeError(f"need (bytes) must be an int, got {type(need).__name__} {need!r}")
    if need < 0:
        raise ValueError(f"need (bytes) must be >= 0, got {need}")
    max_bytes = check_max_bytes(max_bytes)
    limit = device_memory_bytes(device) if max_bytes is None else max_bytes
    if limit is None or need <= limit:
        return
    source = "the device's total memory" if max_bytes is None else "the max_bytes given"
    raise ValueError(
        f"{what} needs about {format_bytes(need)}, more than max_bytes = {limit} "
        f"({source}); use a smaller size, or pass a larger max_bytes if the estimate is "
        "too cautious for this machine"
    )
