"""``python -m relpos_lab.check KIND FILE.py:FUNCTION``: the library's verdict, printed, and
an exit status a script can read (0 equal, 1 differs, 2 cannot load or call)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from relpos_core.check import KINDS, check_implementation
from relpos_lab import check as command
from tests.check.examples import shaw as examples

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "check" / "examples" / "shaw.py"


@pytest.mark.parametrize(
    ("function", "status"),
    [("right_gather", 0), ("wrong_i_minus_j", 1), ("wrong_no_value_term", 1)],
)
def test_the_command_prints_the_libraries_verdict(function: str, status: int, capsys) -> None:
    assert command.main(["shaw", f"{EXAMPLES}:{function}"]) == status
    verdict = check_implementation("shaw", getattr(examples, function))
    assert capsys.readouterr().out == f"shaw: {verdict.text}\n"


def test_a_file_that_cannot_be_loaded_is_named(tmp_path: Path, capsys) -> None:
    broken = tmp_path / "mine.py"
    broken.write_text("import no_such_package\n")
    assert command.main(["shaw", f"{broken}:attend"]) == 2
    assert "importing" in capsys.readouterr().err
    assert command.main(["shaw", f"{tmp_path / 'absent.py'}:attend"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert command.main(["shaw", f"{EXAMPLES}:attend"]) == 2
    assert "has no function 'attend'; it has right_gather" in capsys.readouterr().err
    assert command.main(["shaw", str(EXAMPLES)]) == 2
    assert "expected FILE.py:FUNCTION" in capsys.readouterr().err
    raising = tmp_path / "raising.py"
    raising.write_text("def attend(*args):\n    raise RuntimeError('not yet')\n")
    assert command.main(["shaw", f"{raising}:attend"]) == 2
    assert "it raised RuntimeError: not yet" in capsys.readouterr().out


def test_help_lists_every_kind_with_its_convention() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "relpos_lab.check", "--help"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    flat = " ".join(out.split())
    for name, kind in KINDS.items():
        assert f"\n  {name}\n" in out
        assert " ".join(kind.convention.split()) in flat
