"""Test helper: the resident set's growth over one ``relative_attention`` call, in a child.

    python -m tests.resident '<Case as JSON>'    # prints the growth in bytes

The profiler (``scripts.measure_memory.peak_bytes``) counts live tensor bytes; what the
machine sees is the resident set, which also holds what the allocator keeps after a free.
glibc serves a block below its mmap threshold from its heap, and a freed block there can only
be reused by one that fits in it: temporaries that grow from block to block leave every freed
one behind. The threshold rises (up to 32 MiB) as a process frees large blocks, so a process
that has run for a while (a server, a training loop) serves all of a block's temporaries from
the heap. ``run`` starts the child in that state (``MALLOC_MMAP_THRESHOLD_``), so the result
does not depend on what the process did before, and caps its address space.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADDRESS_SPACE = 6 * 2**30  # torch alone maps about 0.7 GiB


def run(case) -> int:
    """Growth of the resident set's high-water mark over the call ``case`` (a ``Case``)."""

    def limit() -> None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(hard, ADDRESS_SPACE)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.resident", json.dumps(asdict(case))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, preexec_fn=limit,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return int(done.stdout.split()[-1])


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def main(spec: str) -> None:
    import gc

    import torch

    from scripts.measure_memory import Case, _inputs, _runner

    torch.set_num_threads(1)  # one thread's buffers, and a light load on a shared machine
    case = Case(**json.loads(spec))
    _runner(case, _inputs(case, min(8, case.n_q), min(8, case.n_k)))()  # lazy initialisation
    call = _runner(case, _inputs(case, case.n_q, case.n_k))
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the high-water mark starts again from the current resident set
    before = _status_bytes("VmRSS")
    call()
    print(_status_bytes("VmHWM") - before)


if __name__ == "__main__":
    main(sys.argv[1])
