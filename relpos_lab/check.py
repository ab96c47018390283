"""Check your own implementation of a relative position step against its definition.

    python -m relpos_lab.check KIND FILE.py:FUNCTION

Imports FILE.py in this process (your code runs on your machine, with your packages), calls
FUNCTION on float64 inputs at sizes chosen to expose each known bug, and prints the verdict of
``relpos_core.check_implementation``. Exit status: 0 equal (or equal up to a constant per
softmax row), 1 differs, 2 the file or function cannot be loaded or called.

From your own tests:

    from relpos_core.check import check_implementation
    def test_my_attention():
        verdict = check_implementation("shaw", my_attention)
        assert verdict.ok, verdict.text
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

from relpos_core.check import KINDS, check_implementation

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
    sys.path.insert(0, str(path.resolve().parent))  # its own imports of neighbouring files
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file: any failure is reported in words
        raise ValueError(f"importing {path} raised {type(error).__name__}: {error}") from None
    finally:
        sys.path.remove(str(path.resolve().parent))
    function = getattr(module, name, None)
    if not callable(function):
        found = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
        raise ValueError(f"{path} has no function {name!r}; it has {', '.join(found) or 'none'}")
    return function


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
    try:
        function = load_function(args.target)
    except ValueError as error:
        print(f"cannot load {args.target}: {error}", file=sys.stderr)
        return EXIT_CANNOT
    verdict = check_implementation(args.kind, function)
    print(f"{args.kind}: {verdict.text}")
    return verdict.exit_code


if __name__ == "__main__":
    sys.exit(main())
