"""The server's memory, decided in one place: caches bounded by bytes for the whole process, one
computation at a time, and a view refused before it would take more than the process may use.

The explorer runs in one process for every visitor; the host it is meant for (Streamlit
Community Cloud) gives that process as little as 690 MB and kills it, with every open page, the
moment it goes over. Entry counts bound nothing here: one cached (8, 1024, 1024) float32 tensor
is 32 MiB. So:

* every cached view goes through :func:`cached` and is kept once for every visitor
  (``st.cache_resource`` underneath, its arrays made read-only): ``st.cache_data`` would hand
  each rerun its own copy, and the copies a page keeps for its download (about 40 MB per
  visitor at n = 1024, measured) would add up per visitor. Each value is entered, with its
  size in bytes, in one ledger shared by all of them; when the ledger holds more than
  ``CACHE_BUDGET_BYTES`` the entries cheapest to compute again per byte (the least recently
  used among equals) are cleared from their Streamlit caches, and an entry larger than
  ``ENTRY_MAX_BYTES`` is not kept at all (a redraw computes it again);
* a cached call runs while holding ``COMPUTE_SLOT``, one process-wide reentrant lock: two
  visitors' computations never add their peaks (on a host of one or two cores they would only
  slow each other anyway). The slot is taken before Streamlit's own per-value lock, so a cached
  function that calls another cannot deadlock against a second thread;
* a page's run (and a fragment's rerun) holds ``VIEW_SLOT``, one process-wide reentrant lock
  taken before any other: what a rerun holds outside the caches (the tensors a view computed
  and did not keep, its figures while they are built) is never held by two visitors at once.
  Four visitors touring at n = 1024 took the server past 690 MB with computations alone
  serialized; with whole views serialized they fit. A visitor who arrives during another's
  rerun waits for it (about a second at n = 1024), which on one or two cores is what running
  both at once would cost anyway;
* :func:`admit` is asked before a computation by its estimate (``explorer.frame.budget`` does so for
  every one): if the process's resident memory plus the estimate would pass ``limit_bytes()``
  minus ``HEADROOM_BYTES``, the caches are emptied and freed memory handed back to the system;
  it then waits up to ``ADMIT_WAIT_S`` for memory being released (no other view runs meanwhile:
  the view slot is held); if it still
  would not fit, a ``ValueError`` says so in words, and nothing is allocated.

Why these sizes (measured with scripts/measure_host.py and the server's /proc/self/status):
with torch, plotly and Streamlit loaded and the landing page drawn the server holds about 200
MB of anonymous memory and 100 MB of code mapped from files; once every page has run, about
350 MB anonymous. A tour of every page at n = 8 and n = 1024 caches about 55 MiB of views; at
32 MiB what is cheapest to compute again per byte goes first (``cache_ledger.Ledger``). The
rest of a 690 MB limit is room for one computation (at most about 75 MB at n = 1024,
measured) and the figures of the reruns under way.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import ctypes.util
import functools
import gc
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from explorer.frame.cache_ledger import Ledger, read_only, value_bytes

CACHE_BUDGET_BYTES = 32 * 2**20  # every cached value of every visitor, together
ENTRY_MAX_BYTES = 16 * 2**20  # a larger value is computed for its rerun and not kept
# Beside its anonymous memory the process needs its code resident (torch's, Python's: about
# 105 MB mapped from files, measured) and room for the figures and messages of the reruns
# under way, which no estimate counts.
HEADROOM_BYTES = 128 * 2**20
# A call longer than this computed its value (a hit takes microseconds); the heap is trimmed
# after it, so the temporaries of one view's computations do not stack up in the next one's
# (the six schemes of Position schemes at n = 1024 peaked 190 MB above the server's base
# without, measured with the server's RssAnon).
COMPUTED_S = 0.02
# How long a view waits for memory being released (other sessions' messages being sent, garbage
# collected) before it is refused.
ADMIT_WAIT_S = 15.0

VIEW_SLOT = threading.RLock()  # one page run or fragment rerun at a time in the whole process
COMPUTE_SLOT = threading.RLock()  # one computation at a time in the whole process
VIEW_SLOT_POLL_S = 0.25  # a waiting rerun looks up this often, so a stop or rerun reaches it


# ---- the caches ------------------------------------------------------------------------------

LEDGER = Ledger(CACHE_BUDGET_BYTES)
# How many values each cached function has computed (a miss, not a hit) in this process: what a
# rerun recomputed, for the tests and the measuring scripts.
COMPUTED: collections.Counter[str] = collections.Counter()


def cached(max_entries: int = 8, *, resource: bool = False) -> Callable:
    """A cache of ``max_entries`` values shared by every visitor (``st.cache_resource``, no
    spinner), its values entered in the process-wide ledger and its calls run in the compute
    slot. A value is data unless ``resource`` (a model, a tokenizer): its numpy arrays are made
    read-only, so no rerun can change what another visitor is shown."""

    def decorate(function: Callable) -> Callable:
        inner = st.cache_resource(max_entries=max_entries, show_spinner=False)(function)

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            with COMPUTE_SLOT:
                started = time.perf_counter()
                value = inner(*args, **kwargs)
                took = time.perf_counter() - started
                if took > COMPUTED_S:
                    trim_heap()  # a computation's freed temporaries: back to the system now
            try:
                key = (call, args, tuple(sorted(kwargs.items())))
                hash(key)
            except TypeError:  # arguments Streamlit hashes its own way: sized, never evicted
                key = None
            if key is not None and LEDGER.touch(key, value):
                return value  # a hit: made read-only and sized when it was entered
            if not resource:
                read_only(value)
            if key is None:
                return value
            COMPUTED[function.__qualname__] += 1
            size = value_bytes(value)
            forget = functools.partial(inner.clear, *args, **kwargs)
            if size > ENTRY_MAX_BYTES:
                forget()
            else:
                # a value computed in less than COMPUTED_S counts as free to compute again:
                # among those, the least recently used goes first
                cost = took if took > COMPUTED_S else 0.0
                LEDGER.enter(key, forget, size, max_entries, value, cost_s=cost)
            return value

        call.clear = inner.clear  # type: ignore[attr-defined]
        return call

    return decorate


@contextlib.contextmanager
def one_view_at_a_time() -> Iterator[None]:
    """Hold the view slot while the block runs (reentrant: a fragment inside a page run takes it
    again at no cost). The wait polls, so the waiting thread stays a normal Python thread."""
    while not VIEW_SLOT.acquire(timeout=VIEW_SLOT_POLL_S):
        pass
    try:
        yield
    finally:
        VIEW_SLOT.release()


# ---- the process ---------------------------------------------------------------------------


def resident_bytes() -> int:
    """This process's anonymous resident memory (RssAnon + RssShmem: what the system cannot
    reclaim by dropping file pages), 0 where /proc is not there."""
    total = 0
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(("RssAnon:", "RssShmem:")):
                    total += int(line.split()[1]) * 1024
    except OSError:
        pass
    return total


def limit_bytes() -> int | None:
    """What the process may use: its control group's limit or the machine's RAM (the core's
    ``device_memory_bytes``), None where neither is known."""
    from relpos_core.guard import device_memory_bytes  # loads torch: asked once a view computes

    return device_memory_bytes("cpu")


def release_memory() -> None:
    """Empty the caches, collect garbage and hand freed heap pages back to the system."""
    LEDGER.clear()
    collect_all()
    trim_heap()


def collect_all() -> None:
    """Collect every generation, the frozen objects too, then freeze what survived, so that
    later collections skip it (``gc.freeze``). The modules loaded (torch, plotly, Streamlit) are
    some 240,000 objects that a full collection walks in 130-250 ms, holding the interpreter
    lock; frozen, a collection takes about 1 ms. A frozen object that becomes cyclic garbage
    waits for the next call."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@functools.cache
def c_library() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def trim_heap() -> None:
    """glibc keeps freed memory in its heaps; ``malloc_trim(0)`` returns the free pages of
    every heap to the system (no-op elsewhere)."""
    libc = c_library()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def admit(what: str, need: int, wait_s: float = ADMIT_WAIT_S) -> None:
    """Refuse, before anything is allocated, a computation of about ``need`` bytes that would
    take the process past its limit. The caches are emptied first; then, for up to ``wait_s``,
    it waits for memory being released (messages other sessions are sending, garbage not yet
    collected), and only then says no."""
    limit = limit_bytes()
    if limit is None:
        return
    room = limit - HEADROOM_BYTES
    if resident_bytes() + need <= room:
        return
    release_memory()
    deadline = time.monotonic() + wait_s
    while (free := room - resident_bytes()) < need and time.monotonic() < deadline:
        time.sleep(0.25)
        gc.collect()
        trim_heap()
    if need <= free:
        return
    from relpos_core.guard import format_bytes

    raise ValueError(
        f"{what} needs about {format_bytes(need)} of memory, and this server has "
        f"{format_bytes(max(free, 0))} free of the {format_bytes(limit)} it may use right now "
        "(the visitors of this app share it); choose a smaller n, or try again in a moment"
    )
