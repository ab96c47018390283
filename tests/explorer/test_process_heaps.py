"""glibc's mapping threshold, set once by ``explorer.frame.host.configure_process``: a freed
large block goes back to the system even where small objects were allocated after it.

Each case runs in a fresh interpreter (``mallopt`` settings are process-wide): a 24 MiB block is
allocated and freed (glibc's default would then raise its threshold to 24 MiB), then 6 blocks of
20 MiB are allocated with a small object after each, and the blocks are freed. Without the fixed
threshold the blocks come from the heap and the small objects keep their pages resident."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROGRAM = r"""
import json, sys
import numpy as np
from explorer.frame.memory import resident_bytes
set_up = {}
if sys.argv[1] == "configured":
    from explorer.frame.host import configure_process
    set_up = configure_process()

np.ones(3 * 2**20).sum()  # one 24 MiB block, freed
before = resident_bytes()
blocks, small = [], []
for _ in range(6):
    blocks.append(np.ones(20 * 2**17))  # 20 MiB, written
    small.append(bytearray(64 * 1024))  # stays, after the block on the heap
del blocks
print(json.dumps({"set_up": set_up, "kept": resident_bytes() - before}))
"""


def kept_after_free(mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(
    not Path("/proc/self/status").exists() or not sys.platform.startswith("linux"),
    reason="reads the resident set from /proc (Linux, glibc)",
)
def test_freed_blocks_go_back_to_the_system() -> None:
    plain = kept_after_free("plain")
    configured = kept_after_free("configured")
    mib = 2**20
    # the 6 small objects (0.4 MiB) stay either way; the 120 MiB of blocks only without it
    assert plain["kept"] > 60 * mib, plain
    assert configured["kept"] < 8 * mib, configured
    assert configured["set_up"]["mmap_threshold"] == 16 * mib
