"""``python -m relpos_lab.check``: whatever the checked file raises, on import or when called,
an exit with status 0 among it, ends in a sentence and exit 2 (no verdict), never a traceback
and never the status the file chose. Exit 0 means "equal" to a script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from relpos_lab import check as command

ROOT = Path(__file__).resolve().parents[2]
RIGHT = textwrap.dedent(
    """
    import math, torch

    def right(q, k, v, table_k, table_v, clip, causal):
        pos = torch.arange(q.shape[2])
        rows = (pos[None, :] - pos[:, None]).clamp(-clip, clip) + clip
        a_k, a_v = table_k[rows], table_v[rows]
        e = (q @ k.transpose(-1, -2) + torch.einsum("bhid,ijd->bhij", q, a_k))
        e = e / math.sqrt(q.shape[-1])
        if causal:
            e = e.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        w = e.softmax(-1)
        return w @ v + torch.einsum("bhij,ijd->bhid", w, a_v)
    """
)
BOOM = "class Boom(BaseException):\n    pass\n"
LOUD = (
    "class Loud(Exception):\n"
    "    def __str__(self):\n"
    "        raise SystemExit(0)\n"
)  # fmt: skip

# (what the file does at import, what the function does when called, words the sentence has)
AT_IMPORT = [
    ("raise SystemExit(0)", "SystemExit (sys.exit(0))"),
    ("import sys; sys.exit()", "SystemExit (sys.exit(None))"),
    ("exit('bye')", "SystemExit (sys.exit('bye'))"),
    ("raise KeyboardInterrupt", "was interrupted (KeyboardInterrupt)"),
    ("raise GeneratorExit", "it raised GeneratorExit"),
    (BOOM + "raise Boom('mine')", "it raised Boom: mine"),
    (LOUD + "raise Loud()", "it raised Loud"),
]
ABSENT = "def __getattr__(name):\n    raise SystemExit(0)"  # asked for a name it lacks: exits
AT_CALL = [
    ("raise SystemExit(0)", "SystemExit (sys.exit(0))"),
    ("raise SystemExit", "SystemExit (sys.exit(None))"),
    ("raise GeneratorExit", "it raised GeneratorExit"),
    ("raise Boom('mine')", "it raised Boom: mine"),
    ("raise Loud()", "it raised Loud"),
    ("raise BaseExceptionGroup('two', [SystemExit(0), Boom()])", "it raised BaseExceptionGroup"),
]
EXITING = (
    "import numpy as np\n"
    "class Exiting(np.ndarray):\n"
    "    def __new__(cls, tensor):\n"
    "        return np.asarray(tensor.numpy()).view(cls)\n"
    "    def __array_ufunc__(self, *args, **kwargs):\n"
    "        raise SystemExit(0)\n"
    "    def view(self, *args):\n"
    "        raise SystemExit(0)\n"
    "    def copy(self, *args):\n"
    "        raise SystemExit(0)\n"
)  # an array whose every numpy operation exits: only its base class is ever used


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "mine.py"
    path.write_text(RIGHT + "\n" + BOOM + LOUD + EXITING + "\n" + body + "\n")
    return path


@pytest.mark.parametrize(("code", "words"), AT_IMPORT)
def test_what_the_file_raises_on_import_is_a_sentence_and_exit_2(
    tmp_path, capsys, code, words
) -> None:
    path = write(tmp_path, code)
    assert command.main(["shaw", f"{path}:right"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"cannot load {path}:right: importing {path}")
    assert words in err and "Traceback" not in out + err


def test_a_module_getattr_that_exits_is_a_sentence_and_exit_2(tmp_path, capsys) -> None:
    path = write(tmp_path, ABSENT)
    assert command.main(["shaw", f"{path}:absent"]) == 2
    out, err = capsys.readouterr()
    assert "SystemExit (sys.exit(0))" in err and "Traceback" not in out + err


@pytest.mark.parametrize(("code", "words"), AT_CALL)
def test_what_the_function_raises_is_a_sentence_and_exit_2(tmp_path, capsys, code, words) -> None:
    body = f"def mine(*args):\n    {code}\n"
    assert command.main(["shaw", f"{write(tmp_path, body)}:mine"]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("shaw: cannot be called at n = 1, clip = 0, heads = 1, not causal:")
    assert words in out and "Traceback" not in out + err


def test_an_array_whose_operations_exit_is_judged_by_its_numbers(tmp_path, capsys) -> None:
    """Its numbers are twice the definition's: it differs, whatever its methods do."""
    body = "def mine(*args):\n    return Exiting(2 * right(*args))\n"
    assert command.main(["shaw", f"{write(tmp_path, body)}:mine"]) == 1
    assert capsys.readouterr().out.startswith("shaw: differs at n = 1")


def test_the_right_function_beside_them_is_still_equal(tmp_path, capsys) -> None:
    """The checked file above holds the right function: the file itself is sound."""
    assert command.main(["shaw", f"{write(tmp_path, '')}:right"]) == 0
    assert capsys.readouterr().out.startswith("shaw: equal")


def test_a_file_that_closes_stdout_still_gets_its_verdict_printed(tmp_path, capsys) -> None:
    path = write(tmp_path, "import sys\nsys.stdout = None\nsys.stderr = None")
    assert command.main(["shaw", f"{path}:right"]) == 0
    assert capsys.readouterr().out.startswith("shaw: equal")
    assert sys.stdout is not None and sys.stderr is not None


def run(path: Path, function: str, **options) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "relpos_lab.check", "shaw", f"{path}:{function}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("body", "function", "stream", "words"),
    [
        ("def mine(*args):\n    raise SystemExit(0)", "mine", 0, "SystemExit (sys.exit(0))"),
        ("import sys\nsys.exit(0)", "right", 1, "importing"),
        ("import atexit, os\natexit.register(os._exit, 0)\n"
         "def mine(*args):\n    raise ValueError('no')", "mine", 0, "it raised ValueError: no"),
    ],
)  # fmt: skip
def test_the_process_exits_2_whatever_status_the_file_chose(
    tmp_path, body, function, stream, words
) -> None:
    process = run(write(tmp_path, body), function)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, (out, err)
    assert words in (out, err)[stream] and "Traceback" not in out + err


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_an_interrupted_call_is_a_sentence_and_exit_2(tmp_path) -> None:
    body = (
        "import time\n"
        "def mine(*args):\n"
        "    print('started', flush=True)\n"
        "    time.sleep(120)\n"
    )  # fmt: skip
    process = run(write(tmp_path, body), "mine")
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "started"
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2, (out, err)
    assert "shaw: no verdict: interrupted (KeyboardInterrupt) while checking" in err
    assert "Traceback" not in out + err
