"""The server process set up for the host a shared link runs on, once, before any page draws.

Streamlit Community Cloud gives an app between 0.078 and 2 CPU cores, shared with other apps.
torch splits each op over its intra-op threads; when another process holds a core, every
parallel op waits about a scheduler slice (~5 ms) for its descheduled thread, and a rerun runs
hundreds of small ops. One thread never waits for another: measured with scripts/measure_host.py
(keypress), key press to redrawn chart stays within its quiet time beside two busy processes with
one thread, and not with two (docs/deploy.md has the table). ``RELPOS_TORCH_THREADS``
overrides it for a dedicated machine with idle cores. The landing page draws without torch (its
import is 1.5 s of a cold start): the count goes to the environment torch reads when it loads,
and the collector thread below loads it once the first run is done, so the page a visitor opens
next finds it loaded.

glibc gives each thread that allocates its own heap (up to 8 per core) and keeps what is freed
there; Streamlit runs every visitor's rerun in a thread of its own, so freed tensors would stay
resident once per thread. Two heaps are plenty for one computation at a time
(``explorer.frame.memory.COMPUTE_SLOT``). glibc also serves a large block from its own mapping
only until the first such block is freed: then it raises that threshold to the block's size (up
to 32 MiB), and later blocks of that size come from the heap, which does not hand all of them
back when they are freed, even trimmed after each run. A fixed threshold of
``MMAP_THRESHOLD_BYTES`` keeps every block of 16 MiB or more (a (4, 1024, 1024) float32 tensor)
in a mapping of its own, handed back the moment it is freed: one visitor's tour of every page at
its default and at n = 1024 ended at 335 MiB of anonymous memory instead of 379, and four
visitors' tour in 690 MiB peaked at a server RSS of 641 MiB instead of 680-686, with none of its
views refused (/proc/PID/status, docs/deploy.md). 1 MiB kept less at the peak (four visitors'
RSS 575 MiB) but made every mid-sized temporary a fresh mapping whose pages the kernel zeroes:
Position schemes' rerun at a new k (n = 1024) took 2.1-2.5 s instead of 1.0-1.1 s (1.1 s at
16 MiB).

Streamlit collects every generation of garbage at the end of each script run
(``runner.postScriptGC``), in the script's thread, holding the interpreter lock: with torch,
plotly and Streamlit loaded that is over 200,000 objects and about 100 ms, and the server's event
loop cannot send the run's last messages meanwhile, so each key press waits for it.
``.streamlit/config.toml`` turns it off; :func:`collect_soon` runs the same full collection,
then hands freed heap pages back to the system, on a thread of its own a moment after the run,
when the browser already has what the run drew. The long-lived objects are frozen
(``explorer.frame.memory.collect_all``) each time new modules have loaded and at least every
``REFREEZE_S``: the collections between walk only what the runs made (about 1 ms instead of
130-250 ms), and so do the automatic collections inside a run.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import math
import os
import sys
import threading
import time

from explorer.frame.memory import c_library, collect_all, trim_heap

THREADS_VARIABLE = "RELPOS_TORCH_THREADS"
DEFAULT_THREADS = 1
M_ARENA_MAX = -8  # mallopt's parameter numbers in glibc's malloc.h
M_MMAP_THRESHOLD = -3
HEAPS = 2
MMAP_THRESHOLD_BYTES = 16 * 2**20
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")  # torch's intra-op thread pools
COLLECT_DELAY_S = 0.25  # after a run: its last messages reach the browser first
REFREEZE_S = 30.0  # the longest frozen garbage waits while visitors keep the server busy


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
    """Set torch's threads and glibc's heaps and mapping threshold for this process (once);
    returns what was set (0 where glibc's ``mallopt`` is not there)."""
    threads = torch_threads()
    for variable in THREAD_VARIABLES:
        os.environ[variable] = str(threads)  # read once, when torch loads
    if "torch" in sys.modules:  # loaded already (a test's process): too late for the variables
        sys.modules["torch"].set_num_threads(threads)
    libc = c_library()
    heaps = mmap_threshold = 0
    if libc is not None and hasattr(libc, "mallopt"):
        if libc.mallopt(M_ARENA_MAX, HEAPS) == 1:
            heaps = HEAPS
        if libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1:
            mmap_threshold = MMAP_THRESHOLD_BYTES
    return {"torch_threads": threads, "heaps": heaps, "mmap_threshold": mmap_threshold}


_collect_requested = threading.Event()
_collections = 0  # full collections done by the collector thread (read by the tests)


def collect_soon() -> None:
    """Ask for one full garbage collection and heap trim ``COLLECT_DELAY_S`` from now, on the
    collector thread; requests made meanwhile are served by that one collection."""
    _collector_thread()
    _collect_requested.set()


def collections_done() -> int:
    return _collections


@functools.cache
def _collector_thread() -> threading.Thread:
    thread = threading.Thread(target=_collect_when_asked, name="after-run-gc", daemon=True)
    thread.start()
    return thread


def _collect_when_asked() -> None:
    global _collections
    refreshed_at, modules_then = -math.inf, 0
    while True:
        _collect_requested.wait()
        time.sleep(COLLECT_DELAY_S)
        _collect_requested.clear()
        load_torch()
        if len(sys.modules) != modules_then or time.monotonic() - refreshed_at > REFREEZE_S:
            collect_all()  # new code loaded, or frozen garbage waited long enough
            refreshed_at, modules_then = time.monotonic(), len(sys.modules)
        else:
            gc.collect()  # walks only what is not frozen: the runs' objects
        trim_heap()  # what the collection and the run freed goes back to the system
        _collections += 1


def load_torch() -> None:
    """Import torch if no run has yet (the landing page draws without it). Where it cannot be
    imported, the page that needs it says why; this thread goes on collecting."""
    if "torch" not in sys.modules:
        with contextlib.suppress(ImportError):
            import torch  # noqa: F401
