"""The table of relative position schemes in docs/library.md, generated from the schemes.

    python -m relpos_lab.schemes_table                          # print the markdown table
    python -m relpos_lab.schemes_table --check docs/library.md  # exit 1 if its copy differs
    python -m relpos_lab.schemes_table --write docs/library.md  # replace its copy

One row per scheme of the catalogue (``relpos_core.schemes.catalogue``), in its order. Every
number is computed: the learned parameters are counted on a scheme built at the reference size
(8 heads, head dim 64, each setting at its catalogue default), the
memory is the scheme's own estimate (``position_bytes`` and ``logit_bytes``, float32, batch 1,
n queries and n keys), and shift invariance is measured by ``scheme_profile`` on seeded random
q and k: the largest distance of the position term from a function of j - i (0 for one),
with content and for the position-only part (every position given the same content).
The document holds the table between START and END.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from relpos_core import format_bytes
from relpos_core.schemes import PositionScheme, make_scheme, scheme_profile
from relpos_core.schemes.catalogue import scheme_entries, scheme_entry

HEADS, HEAD_DIM = 8, 64
MEMORY_N = (1024, 4096)
PROFILE_N = 12  # queries and keys of the shift-invariance measurement
SEED = 0
TOLERANCE = 1e-9  # float64: a deviation below this is rounding, the term is a function of j - i
START = "<!-- schemes-table:start -->"
END = "<!-- schemes-table:end -->"


def reference_settings(name: str) -> dict[str, object]:
    """The scheme's settings at the reference size: each at its catalogue default."""
    return {s.keyword: s.default for s in scheme_entry(name).settings}


def reference_text() -> str:
    """The reference size in words: the heads, the head dim, every scheme's settings."""
    schemes = [
        f"{e.label} {text}"
        for e in scheme_entries()
        if (text := e.settings_text(reference_settings(e.name)))
    ]
    return ", ".join([f"{HEADS} heads, head dim {HEAD_DIM}", *schemes])


def reference_scheme(name: str) -> PositionScheme:
    """The scheme ``name`` at the reference size, its parameters drawn from SEED, in float64."""
    return make_scheme(name, HEADS, HEAD_DIM, seed=SEED, **reference_settings(name)).double()


def learned_parameters(scheme: PositionScheme) -> int:
    return sum(p.numel() for p in scheme.parameters() if p.requires_grad)


def deviation(scheme: PositionScheme, position_only: bool) -> float:
    """Largest |term - the mean of its diagonal| bound: the profile's toeplitz_deviation."""
    gen = torch.Generator().manual_seed(SEED)
    q, k = (torch.randn(1, HEADS, PROFILE_N, HEAD_DIM, generator=gen, dtype=torch.float64)
            for _ in range(2))  # fmt: skip
    return scheme_profile(scheme, q, k, position_only=position_only).toeplitz_deviation


def invariance_text(value: float) -> str:
    """``yes (0)``, ``yes (< 1e-09)`` (rounding only) or ``no (1.2)``: stable across machines."""
    if value == 0:
        return "yes (0)"
    if value < TOLERANCE:
        return f"yes (< {TOLERANCE:.0e})"
    return f"no ({value:.2g})"


def cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def scheme_row(name: str) -> list[str]:
    scheme = reference_scheme(name)
    memory = "; ".join(
        f"n = {n}: {format_bytes(scheme.position_bytes(n, n))} / "
        f"{format_bytes(scheme.logit_bytes(n, n))}"
        for n in MEMORY_N
    )
    with torch.no_grad():
        invariance = (
            f"position term: {invariance_text(deviation(scheme, False))}; "
            f"position-only part: {invariance_text(deviation(scheme, True))}"
        )
    entry = scheme_entry(name)
    return [
        f"**{entry.title}**<br>{entry.paper}",
        f"{entry.parameters_text}<br>{learned_parameters(scheme):,} learned",
        f"{entry.memory_text}<br>estimate, position work / every term: {memory}",
        invariance,
        entry.extrapolation,
    ]


def schemes_table() -> str:
    """The markdown table, one row per scheme in catalogue order (no trailing newline)."""
    header = ["scheme", "parameters", "memory", "shift-invariant", "extrapolation"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(cell(c) for c in scheme_row(name)) + " |"
        for name in (e.name for e in scheme_entries())
    ]
    return "\n".join(lines)


def block() -> str:
    """What the README holds between its markers: the reference size, then the table."""
    return (
        f"{START}\n"
        f"Reference size: {reference_text()}; memory in float32 for batch 1 and n queries and "
        f"keys; shift invariance on seeded random q, k of {PROFILE_N} positions, in float64 "
        f"(the largest distance of the term from a function of j - i in brackets).\n\n"
        f"{schemes_table()}\n"
        f"{END}"
    )


def readme_block(text: str) -> str:
    """The README's copy: from START to END inclusive; ValueError when the markers are missing."""
    first, last = text.find(START), text.find(END)
    if first < 0 or last < first:
        raise ValueError(f"the README needs the markers {START} and {END}, in that order")
    return text[first : last + len(END)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", type=Path, metavar="README", help="exit 1 if its table differs")
    group.add_argument("--write", type=Path, metavar="README", help="replace its table")
    args = parser.parse_args(argv)
    generated = block()
    target = args.check or args.write
    if target is None:
        print(generated)
        return 0
    text = target.read_text(encoding="utf-8")
    try:
        current = readme_block(text)
    except ValueError as error:
        print(f"{target}: {error}", file=sys.stderr)
        return 1
    if args.write:
        target.write_text(text.replace(current, generated), encoding="utf-8")
        print(f"{target}: table written")
        return 0
    if current != generated:
        print(f"{target}: the schemes table differs from the code; run "
              f"python -m relpos_lab.schemes_table --write {target}", file=sys.stderr)  # fmt: skip
        return 1
    print(f"{target}: the schemes table matches the code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
