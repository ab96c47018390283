"""Check your own implementation of a relative position step against its definition.

    python -m relpos_lab.check KIND FILE.py:FUNCTION

Imports FILE.py in this process (your code runs on your machine, with your packages), calls
FUNCTION on float64 inputs at sizes chosen to expose each known bug, and prints the verdict of
``relpos_core.check_implementation``. Exit status: 0 equal (or equal up to a constant per
softmax row), 1 differs, 2 no verdict: the file or function cannot be loaded or called, or the
run was interrupted. Whatever your code raises, on import or when called (``sys.exit(0)``, a
``KeyboardInterrupt``, a ``BaseException`` of its own), is a sentence and exit 2, never a
traceback nor the status of your code's choosing; only ``os._exit`` ends the process first.

From your own tests:

    from relpos_core.check import check_implementation
    def test_my_attention():
        verdict = check_implementation("shaw", my_attention)
        assert verdict.ok, verdict.text
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from relpos_core.check import KINDS, check_implementation
from relpos_core.check.verdict import raised

EXIT_CANNOT = 2


def kinds_help() -> str:
    """Every kind and its calling convention, for --help."""
    lines = ["kinds and their calling conventions:"]
    for name, kind in KINDS.items():
        lines.append(f"  {name}")
        lines += textwrap.wrap(
            kind.convention,
            88,
            initial_indent="      ",
            subsequent_indent="      ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    return "\n".join(lines)


def load_function(target: str) -> Callable:
    """FILE.py:FUNCTION imported from the file (ValueError in words when it cannot be)."""
    path_text, sep, name = target.rpartition(":")
    if not sep or not path_text or not name:
        raise ValueError(f"expected FILE.py:FUNCTION, got {target!r}")
    path = Path(path_text)
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"checked_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot import {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # its own imports of neighbouring files
    try:
        spec.loader.exec_module(module)
        function = getattr(module, name, None)  # a module __getattr__ is the user's code too
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
    except KeyboardInterrupt:
        raise ValueError(f"importing {path} was interrupted (KeyboardInterrupt)") from None
    except BaseException as error:  # the user's file: any failure, an exit too, in words
        raise ValueError(f"importing {path}: {raised(error)}") from None
    finally:
        with contextlib.suppress(ValueError):  # unless the file took it out itself
            sys.path.remove(folder)
    if not callable(function):
        raise ValueError(f"{path} has no function {name!r}; it has {', '.join(found) or 'none'}")
    return function


@contextlib.contextmanager
def kept_streams() -> Iterator[None]:
    """The user's code runs here: stdout and stderr come back as they were (a file may replace
    or close them), and what its threads and finalizers raise is one line, not a traceback."""
    streams, hooks = (sys.stdout, sys.stderr), (sys.unraisablehook, threading.excepthook)

    def ignored(what: str) -> Callable:
        return lambda info: say(f"note: {what} {raised(info.exc_value)} (ignored)", sys.stderr)

    sys.unraisablehook = ignored("a finalizer of the checked code:")
    threading.excepthook = ignored("a thread of the checked code:")
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams
        sys.unraisablehook, threading.excepthook = hooks


def say(text: str, stream) -> None:
    """Print ``text``; straight to the file descriptor when the stream was closed."""
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        os.write(2 if stream is sys.stderr else 1, (text + "\n").encode(errors="replace"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m relpos_lab.check",
        description=__doc__.splitlines()[0],
        epilog=kinds_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=list(KINDS), metavar="KIND", help=", ".join(KINDS))
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the function to check")
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    try:
        with kept_streams():
            function = load_function(args.target)
            verdict = check_implementation(args.kind, function)
    except ValueError as error:
        say(f"cannot load {args.target}: {error}", err)
        return EXIT_CANNOT
    except KeyboardInterrupt:  # a person stopping a call that hangs: no verdict
        say(f"{args.kind}: no verdict: interrupted (KeyboardInterrupt) while checking "
            f"{args.target}", err)  # fmt: skip
        return EXIT_CANNOT
    say(f"{args.kind}: {verdict.text}", out)
    return verdict.exit_code


if __name__ == "__main__":
    status = main()
    # the status is the verdict's: a thread or an atexit handler the checked file left behind
    # ends with the process here, before it can exit with a status of its own
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
