"""The guard: refuse a computation whose estimated memory is beyond the machine, before it
allocates anything. The estimates themselves come from ``relpos_core.memory``.
"""

from __future__ import annotations

import os

import torch

from relpos_core.checks import check_max_bytes


def device_memory_bytes(device: torch.device | str | None = None) -> int | None:
    """Total memory of ``device``: physical RAM for the CPU, the card's memory for CUDA;
    None where torch cannot tell (then nothing is refused)."""
    device = torch.device("cpu" if device is None else device)
    return _total_memory(device.type, device.index)


# torch.compile reads it once while tracing and keeps the number (sysconf cannot be traced)
@torch.compiler.assume_constant_result
def _total_memory(kind: str, index: int | None) -> int | None:
    if kind == "cuda":
        return int(torch.cuda.get_device_properties(index).total_memory)
    if kind == "cpu" and hasattr(os, "sysconf"):
        try:
            return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError):
            return None
    return None


def format_bytes(count: int) -> str:
    """Binary units, one decimal.

    >>> format_bytes(256 * 2**20), format_bytes(3 * 2**30), format_bytes(1536)
    ('256.0 MiB', '3.0 GiB', '1.5 KiB')
    """
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
