"""Real-browser fixtures: serve app.py with Streamlit and drive it in Debian's Chromium.

Every test in this folder gets the ``browser`` marker. Without /usr/bin/chromium the tests are
skipped on a developer machine but fail under CI (``CI`` set), so CI never skips them silently.
Playwright's own browser download is never used (``playwright install`` cannot run here).
"""

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from scripts.local_app import APP_IDLE, CHROMIUM, CHROMIUM_ARGS, served_app

BROWSER_TESTS_DIR = Path(__file__).resolve().parent
ARTIFACTS_DIR = BROWSER_TESTS_DIR / "artifacts"
SERVER_START_TIMEOUT_S = 60.0
APP_RUN_TIMEOUT_MS = 30_000


def _running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # This hook sees the whole session's items, not only this folder's: filter by path.
    for item in items:
        if BROWSER_TESTS_DIR in item.path.parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def _require_chromium() -> None:
    """Skip (locally) or fail (CI) every browser test when Debian's Chromium is missing."""
    if CHROMIUM.exists():
        return
    reason = f"{CHROMIUM} not found: install it with `apt-get install -y chromium`"
    if _running_in_ci():
        pytest.fail(f"{reason} (CI must run the browser tests, not skip them)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Launch the system Chromium instead of a Playwright-downloaded build."""
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@contextlib.contextmanager
def serve_app(log_dir: Path) -> Iterator[str]:
    """A fresh Streamlit server for the repo's app.py on a free port; yield its base URL."""
    try:
        with served_app(log_dir / "streamlit.log", SERVER_START_TIMEOUT_S) as (base_url, _):
            yield base_url
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serve the repo's app.py on a free local port for the whole session; yield its base URL."""
    with serve_app(tmp_path_factory.mktemp("app_server")) as base_url:
        yield base_url


@pytest.fixture
def fresh_app_server(tmp_path: Path) -> Iterator[str]:
    """A server no session has opened yet: the first request it sees is the test's."""
    with serve_app(tmp_path) as base_url:
        yield base_url


@pytest.fixture
def wait_for_app_run() -> Callable[[Page], None]:
    """Return ``wait(page)``: block until the app's script run has finished and is connected.

    Use it right after ``page.goto(...)``: the page reports script state ``initial`` until its
    first run starts, so waiting for ``notRunning`` cannot return before that run is done.
    """

    def wait(page: Page, timeout_ms: float = APP_RUN_TIMEOUT_MS) -> None:
        page.wait_for_selector(APP_IDLE, timeout=timeout_ms)

    return wait


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Folder for screenshots and traces (git-ignored)."""
    ARTIFACTS_DIR.mkdir(exist_ok=True)
    return ARTIFACTS_DIR
