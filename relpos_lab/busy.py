"""Neighbours for a measurement: processes that spin on a CPU each, as on a shared host."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator

SPIN = "while True: pass"


@contextlib.contextmanager
def busy_cpu(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` processes that spin on a CPU each, started before the block (half a second to
    get going) and killed, by their PIDs, after it."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]
    try:
        if spinners:
            time.sleep(0.5)
        yield spinners
    finally:
        for spinner in spinners:
            spinner.kill()
        for spinner in spinners:
            spinner.wait()
