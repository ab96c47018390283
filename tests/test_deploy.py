"""The Streamlit Community Cloud entry point (deploy/): its requirements stay the root's pins with
a CPU torch, and it runs the root app.py.

Cloud installs deploy/requirements.txt (the file beside the entry point), ./dev.sh and CI the
root requirements.txt: a pin bumped in one file only would deploy other versions than the ones
tested. The browser check of the served entry point is tests/browser/test_deploy_entry.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]
ROOT_REQUIREMENTS = REPO / "requirements.txt"
DEPLOY_DIR = REPO / "deploy"
DEPLOY_REQUIREMENTS = DEPLOY_DIR / "requirements.txt"
DEPLOY_ENTRY = DEPLOY_DIR / "streamlit_app.py"

# torch's page on PyTorch's CPU index, as a find-links source: it adds torch's files only, so
# every other package still comes from PyPI (see deploy/requirements.txt).
CPU_TORCH_LINE = "--find-links https://download.pytorch.org/whl/cpu/torch/"
CPU_LOCAL_VERSION = "+cpu"


def parse(text: str) -> tuple[list[str], dict[str, str]]:
    """(option lines, {normalized package name: specifier}) of a requirements file's text."""
    options, pins = [], {}
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            options.append(" ".join(line.split()))
            continue
        requirement = Requirement(line)
        name = requirement.name.lower().replace("_", "-")
        assert name not in pins, f"{name} is listed twice"
        pins[name] = str(requirement.specifier)
    return options, pins


def exact_version(specifier: str) -> str | None:
    """The version of an exact ``==X`` pin, else None."""
    if specifier.startswith("==") and "," not in specifier and "*" not in specifier:
        return specifier[2:]
    return None


def deploy_mismatches(root_text: str, deploy_text: str) -> list[str]:
    """Every way the deploy requirements differ from "the root pins, torch as its +cpu build,
    found through the CPU torch page and no other source"; empty when they agree."""
    problems = []
    root_options, root_pins = parse(root_text)
    deploy_options, deploy_pins = parse(deploy_text)
    if root_options:
        problems.append(f"root requirements carry options {root_options}: keep them offline")
    if deploy_options != [CPU_TORCH_LINE]:
        problems.append(f"deploy options are {deploy_options}, not [{CPU_TORCH_LINE!r}]")
    for name in sorted(root_pins.keys() | deploy_pins.keys()):
        root_spec, deploy_spec = root_pins.get(name), deploy_pins.get(name)
        if root_spec is None or deploy_spec is None:
            where = "root" if root_spec is None else "deploy"
            problems.append(f"{name} is missing from the {where} requirements")
            continue
        version = exact_version(root_spec)
        if version is None:
            problems.append(f"{name}{root_spec} in the root requirements is not an exact pin")
            continue
        wanted = f"=={version}{CPU_LOCAL_VERSION}" if name == "torch" else root_spec
        if deploy_spec != wanted:
            problems.append(f"{name}{deploy_spec} in deploy, {name}{wanted} expected")
    if "torch" not in root_pins:
        problems.append("torch is not pinned in the root requirements")
    return problems


def test_deploy_requirements_are_the_root_pins_with_a_cpu_torch() -> None:
    problems = deploy_mismatches(ROOT_REQUIREMENTS.read_text(), DEPLOY_REQUIREMENTS.read_text())
    assert problems == [], "\n".join(problems)


def _replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} is not in the file exactly once"
    return text.replace(old, new)


ROOT_TEXT = ROOT_REQUIREMENTS.read_text()
DEPLOY_TEXT = DEPLOY_REQUIREMENTS.read_text()


@pytest.mark.parametrize(
    ("root", "deploy"),
    [
        # a pin bumped in one file only
        (ROOT_TEXT, _replace_once(DEPLOY_TEXT, "numpy==2.4.6", "numpy==2.4.7")),
        (_replace_once(ROOT_TEXT, "plotly==7.1.0", "plotly==7.2.0"), DEPLOY_TEXT),
        (_replace_once(ROOT_TEXT, "torch==2.13.0", "torch==2.14.0"), DEPLOY_TEXT),
        # torch as the default (CUDA on Linux) build, or loosened in the root
        (ROOT_TEXT, _replace_once(DEPLOY_TEXT, "torch==2.13.0+cpu", "torch==2.13.0")),
        (_replace_once(ROOT_TEXT, "torch==2.13.0", "torch>=2.13.0"), DEPLOY_TEXT),
        # a package added to one file only
        (ROOT_TEXT + "pandas==3.1.1\n", DEPLOY_TEXT),
        (ROOT_TEXT, DEPLOY_TEXT + "pandas==3.1.1\n"),
        # no CPU torch source, or an index that would also decide numpy and the rest
        (ROOT_TEXT, _replace_once(DEPLOY_TEXT, CPU_TORCH_LINE + "\n", "")),
        (ROOT_TEXT, DEPLOY_TEXT + "--extra-index-url https://download.pytorch.org/whl/cpu\n"),
        # the root file must stay installable without the CPU index
        (CPU_TORCH_LINE + "\n" + ROOT_TEXT, DEPLOY_TEXT),
    ],
    ids=[
        "numpy-bumped-in-deploy",
        "plotly-bumped-in-root",
        "torch-bumped-in-root",
        "deploy-torch-without-cpu",
        "root-torch-not-exact",
        "package-only-in-root",
        "package-only-in-deploy",
        "no-cpu-torch-source",
        "extra-index-added",
        "root-has-options",
    ],
)
def test_an_edit_to_one_file_only_is_caught(root: str, deploy: str) -> None:
    assert deploy_mismatches(root, deploy) != []


def test_the_same_edit_to_both_files_passes() -> None:
    """A pin bumped in both files is in step: the check does not pin today's versions."""
    root = _replace_once(ROOT_TEXT, "torch==2.13.0", "torch==2.14.1")
    root = _replace_once(root, "numpy==2.4.6", "numpy==2.5.0")
    deploy = _replace_once(DEPLOY_TEXT, "torch==2.13.0+cpu", "torch==2.14.1+cpu")
    deploy = _replace_once(deploy, "numpy==2.4.6", "numpy==2.5.0")
    assert deploy_mismatches(root, deploy) == []


def test_deploy_folder_has_no_pages_folder() -> None:
    """A pages/ beside the entry point would switch Streamlit's legacy multipage layout on for
    it: a deep link on a fresh server would then run a page without app.py."""
    assert not (DEPLOY_DIR / "pages").exists()


def test_entry_point_runs_the_root_app() -> None:
    """The entry point runs app.py itself: its shared sidebar controls and its first page."""
    at = AppTest.from_file(str(DEPLOY_ENTRY), default_timeout=60)
    at.query_params["weights"] = "random"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.slider(key="n").value is not None  # a widget app.py draws in the sidebar
    assert at.get("plotly_chart"), "the Overview page drew no chart"


def test_the_apps_upload_cap_is_its_largest_uploader_and_the_proxys_reads_it() -> None:
    """server.maxUploadSize (what Streamlit and the proxy in front refuse above) is the largest
    cap a page states: a page's own cap above it would never be reached."""
    import tomllib

    from explorer.stories.check.upload import MAX_MB
    from explorer.stories.your_model.sources import MAX_UPLOAD_MB

    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == max(MAX_MB, MAX_UPLOAD_MB)
    assert "maxUploadSize" in (REPO / "deploy" / "replicas.sh").read_text()


def test_what_outlives_the_replicas_scripts_stop_is_stopped_and_its_directory_removed(
    tmp_path: Path,
) -> None:
    """A process that ignores TERM (as a replica stuck at its memory limit may) is killed,
    an already ended one is left alone, and the run directory goes."""
    import signal
    import subprocess
    import sys

    from scripts.replica_proxy import alive, stop_left

    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
         "signal.SIG_IGN); print(flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    stubborn.stdout.readline()  # its TERM handler is set
    ended = subprocess.Popen(["true"])
    ended.wait()
    run_dir = tmp_path / "run"
    (run_dir / "nginx").mkdir(parents=True)
    stop_left([stubborn.pid, ended.pid], [None], run_dir, timeout_s=1.0)
    assert stubborn.wait(timeout=5) == -signal.SIGKILL
    stubborn.stdout.close()
    assert not alive(stubborn.pid) and not run_dir.exists()
