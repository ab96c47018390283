"""python -m relpos_lab.extract PATH --out FILE: a checkpoint's position parameters, alone.

PATH is a .safetensors file, a folder as save_pretrained writes it (config.json beside the
weights), or a PyTorch state dict (.pt, .pth, .bin; loaded weights-only). Prints what it found
and writes it to FILE (.safetensors, kilobytes), which the explorer's "Your model" page reads.
Only regular files are read (a named pipe or a device is refused). Exit status: 0 written, 1 no
position parameters found, 2 a file it cannot read (one sentence says why).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from relpos_lab.extract import FileProblem, from_path, looked_for, to_bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m relpos_lab.extract", description=__doc__)
    parser.add_argument("path", type=Path, help="a checkpoint file or a save_pretrained folder")
    parser.add_argument("--out", type=Path, required=True, help="the .safetensors file to write")
    args = parser.parse_args(argv)
    if not os.path.lexists(args.path):
        print(f"error: {args.path} does not exist", file=sys.stderr)
        return 2
    try:
        positions = from_path(args.path)
    except FileProblem as problem:
        print(f"error: {args.path}: {problem}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"error: {args.path}: reading it needs more memory than is free", file=sys.stderr)
        return 2
    except Exception as error:  # exit 1 means "nothing found": an unforeseen failure is not that
        why = f"{type(error).__name__}: {str(error)[:160]}"
        print(f"error: {args.path} could not be read ({why})", file=sys.stderr)
        return 2
    if positions.empty:
        print(f"{args.path}: no position parameters found. Looked for:", file=sys.stderr)
        for item in looked_for():
            print(f"  - {item}", file=sys.stderr)
        for note in positions.notes:
            print(f"  ({note})", file=sys.stderr)
        return 1
    print(f"{args.path}: found")
    for line in positions.summary():
        print(f"  {line}")
    data = to_bytes(positions)
    if args.out.exists() and not args.out.is_file():
        print(f"error: {args.out} exists and is not a regular file", file=sys.stderr)
        return 2
    try:
        args.out.write_bytes(data)
    except OSError as error:
        print(f"error: {args.out} cannot be written ({error.strerror})", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
