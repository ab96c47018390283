"""The server process set up for the host a shared link runs on, once, before any page draws.

Streamlit Community Cloud gives an app between 0.078 and 2 CPU cores, shared with other apps.
torch splits each op over its intra-op threads; when another process holds a core, every
parallel op waits about a scheduler slice (~5 ms) for its descheduled thread, and a rerun runs
hundreds of small ops. One thread never waits for another: measured with scripts/measure_host.py
(keypress), key press to redrawn chart stays within its quiet time beside two busy processes with
one thread, and not with two (the README's Deploy section has the table). ``RELPOS_TORCH_THREADS``
overrides it for a dedicated machine with idle cores.

glibc gives each thread that allocates its own heap (up to 8 per core) and keeps what is freed
there; Streamlit runs every visitor's rerun in a thread of its own, so freed tensors would stay
resident once per thread. Two heaps are plenty for one computation at a time
(``explorer.frame.memory.COMPUTE_SLOT``).
"""

from __future__ import annotations

import functools
import os

import torch

from explorer.frame.memory import c_library

THREADS_VARIABLE = "RELPOS_TORCH_THREADS"
DEFAULT_THREADS = 1
M_ARENA_MAX = -8  # mallopt's parameter number in glibc's malloc.h
HEAPS = 2


def torch_threads(environ: dict[str, str] | os._Environ = os.environ) -> int:
    """Intra-op threads for torch: ``RELPOS_TORCH_THREADS`` if it is a whole number from 1 to
    the machine's cores, else ``DEFAULT_THREADS``.

    >>> torch_threads({}), torch_threads({"RELPOS_TORCH_THREADS": "1"})
    (1, 1)
    >>> torch_threads({"RELPOS_TORCH_THREADS": "lots"})
    1
    """
    text = environ.get(THREADS_VARIABLE, "").strip()
    cores = os.cpu_count() or 1
    if text.isdigit() and 1 <= int(text) <= cores:
        return int(text)
    return DEFAULT_THREADS


@functools.cache
def configure_process() -> dict[str, int]:
    """Set torch's threads and glibc's heaps for this process (once); returns what was set."""
    threads = torch_threads()
    torch.set_num_threads(threads)
    libc = c_library()
    heaps = 0
    if libc is not None and hasattr(libc, "mallopt") and libc.mallopt(M_ARENA_MAX, HEAPS) == 1:
        heaps = HEAPS
    return {"torch_threads": threads, "heaps": heaps}
