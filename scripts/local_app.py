"""Serve the repo's app.py locally and drive it in Debian's Chromium.

One place for what the browser tests (tests/browser) and the scripts (screenshots, load test)
share: the Chromium binary and flags that work on a machine with a closed network, the
selector of an app whose script run has finished, and a server on a free port.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")  # Debian's; a Playwright-downloaded browser cannot install
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # else Chromium keeps dialling out and being refused
    "--disable-component-update",
    "--disable-sync",
]
# The app is connected and its script run has finished (Streamlit marks both on stApp).
APP_IDLE = (
    '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
    '[data-test-script-state="notRunning"]'
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def health(base_url: str) -> str | None:
    """The server's /_stcore/health answer ("ok" when ready), or None if it does not answer."""
    try:
        with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as response:
            return response.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


@contextlib.contextmanager
def served_app(
    log_path: Path,
    timeout_s: float = 60.0,
    *,
    env: Mapping[str, str] | None = None,
    command_prefix: Sequence[str] = (),
    entry: str = "app.py",
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start ``streamlit run <entry>`` on a free port; yield (base URL, server process).

    ``env`` adds to (or overrides) this process's environment for the server. The server runs
    as ``[*command_prefix, python, -m, streamlit, ...]``: a prefix that ends by exec'ing its
    arguments (e.g. after joining a cgroup) keeps the yielded process the server itself.
    ``entry`` is the main script, relative to the repository root the server runs in (as on
    Streamlit Community Cloud, which reads only the root ``.streamlit/config.toml``).
    Raises RuntimeError with the tail of ``log_path`` if the server is not healthy within
    ``timeout_s``; stops the server on exit either way.
    """
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "streamlit", "run", entry,
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command_prefix, *command],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=None if env is None else {**os.environ, **env},
        )
    try:
        deadline = time.monotonic() + timeout_s
        while health(base_url) != "ok":
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"streamlit server not healthy at {base_url} within {timeout_s:.0f} s "
                    f"(exit code {process.poll()}):\n{tail}"
                )
            time.sleep(0.25)
        yield base_url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
