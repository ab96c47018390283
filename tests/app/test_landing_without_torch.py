"""The landing page draws without torch (its import is 1.5 s of a visitor's cold start), and torch
is loaded after the run, with the host's thread count, for the page the visitor opens next.

Each check runs in a fresh interpreter: this test process has loaded torch already.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ENTRY = Path(__file__).resolve().parent / "harness" / "entry.py"

FIRST_RUN = """
import sys
sys.path.insert(0, {root!r})

class NoTorch:  # any import of torch raises: the page would show it as an error or exception
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch imported by the landing page's run")

from streamlit.testing.v1 import AppTest
{block}
at = AppTest.from_file({entry!r}, default_timeout=120)
for key, value in {query!r}.items():
    at.query_params[key] = value
at.run()
print("EXCEPTIONS", [e.value for e in at.exception])
print("ERRORS", [e.value for e in at.error])
print("CHARTS", len(at.get("plotly_chart")))
{after}
"""

WAIT_FOR_TORCH = """
import time
from explorer.frame import host
deadline = time.monotonic() + 60
while "torch" not in sys.modules or host.collections_done() == 0:
    if time.monotonic() > deadline:
        break
    time.sleep(0.05)
time.sleep(0.5)  # the import under way finishes
import torch
print("TORCH", "torch" in sys.modules, torch.get_num_threads())
"""


def run_landing(query: dict[str, str], *, block: bool, after: str = "") -> str:
    root = str(ENTRY.parents[3])
    script = FIRST_RUN.format(
        root=root,
        entry=str(ENTRY),
        query=query,
        block="sys.meta_path.insert(0, NoTorch())" if block else "",
        after=after,
    )
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "RELPOS_TORCH_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize(
    "query",
    [{}, {"weights": "random", "i": "1", "j": "3"}, {"text": "The cat sat", "k": "2"}],
    ids=["default", "random-weights-and-a-pair", "typed-text"],
)
def test_the_landing_page_runs_without_torch(query):
    out = run_landing(query, block=True)
    assert "EXCEPTIONS []" in out and "ERRORS []" in out, out
    assert "CHARTS 1" in out, out


def test_torch_is_loaded_after_the_first_run_with_the_hosts_threads():
    out = run_landing({}, block=False, after=WAIT_FOR_TORCH)
    assert "TORCH True 1" in out, out
