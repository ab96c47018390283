"""Arrays as CSV files a spreadsheet opens safely: a header row of column labels, a label first
on every row, masked (NaN) cells empty, and no cell a spreadsheet would run as a formula.

An array of more than two axes becomes one CSV per index of its leading axes.
"""

from __future__ import annotations

import dataclasses
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Labelled:
    """An array with what its axes mean, for one CSV (or one per slice of its leading axis).

    ``rows`` / ``cols``: one label per row / column (default: 0, 1, ...). ``corner``: the
    header's first cell, naming both axes (``"query i \\ key j"``). An array of more than two
    axes is written as one CSV per index of its leading axes, named ``<name>_<split><index>``
    (``split=("layer", "head")`` names two leading axes: ``attention_layer0_head1.csv``).
    """

    values: np.ndarray
    about: str = ""
    rows: Sequence[str] | None = None
    cols: Sequence[str] | None = None
    corner: str = "row \\ column"
    split: str | tuple[str, ...] = "slice"

    def __post_init__(self) -> None:
        # Checked while the page runs: the CSVs are written only on a click, in a callable
        # whose error the browser never shows (the download just does not start).
        shape = np.shape(self.values)
        table = shape[-2:] if len(shape) >= 2 else (*shape, 1, 1)[:2]  # 1-D: one column
        for axis, labels, size in (("rows", self.rows, table[0]), ("cols", self.cols, table[1])):
            if labels is None:
                continue
            if isinstance(labels, str) or not hasattr(labels, "__len__"):
                raise TypeError(f"{axis} must be a sequence of labels, got {labels!r}")
            if len(labels) != size:
                raise ValueError(f"{len(labels)} {axis} labels do not fit shape {shape}")


def csv_text(table: Labelled) -> str:
    """One 2-D (or 1-D: one column) array as CSV with a header row and a label per row."""
    values = np.asarray(table.values)
    if values.ndim == 1:
        values = values[:, None]
    rows = list(table.rows) if table.rows is not None else [str(i) for i in range(len(values))]
    cols = list(table.cols) if table.cols is not None else [str(j) for j in range(values.shape[1])]
    if len(rows) != values.shape[0] or len(cols) != values.shape[1]:
        raise ValueError(
            f"labels ({len(rows)} rows, {len(cols)} columns) do not fit shape {values.shape}"
        )
    integer = np.issubdtype(values.dtype, np.integer) or values.dtype == bool
    body = io.StringIO()
    np.savetxt(body, values.astype(np.int64 if integer else np.float64), delimiter=",",
               fmt="%d" if integer else "%.7g")  # fmt: skip
    lines = body.getvalue().splitlines()
    out = io.StringIO()
    out.write(",".join(_cell(c) for c in [table.corner, *cols]) + "\n")
    for label, line in zip(rows, lines, strict=True):
        cells = ["" if cell == "nan" else cell for cell in line.split(",")]  # masked: blank
        out.write(_cell(label) + "," + ",".join(cells) + "\n")
    return out.getvalue()


#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _cell(text: object) -> str:
    """One CSV cell. A text a spreadsheet would run as a formula (starting with = + - @, a tab
    or a carriage return; a plain number such as -3 is no formula) gets a leading single quote
    and double quotes, as OWASP's CSV-injection advice says; a comma, quote or line break is
    quoted.

    >>> print(_cell("=cmd|' /C calc'!A0"), _cell("-3"), _cell("a,b"), _cell("the"))
    "'=cmd|' /C calc'!A0" -3 "a,b" the
    """
    text = str(text)
    formula_like = text.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text)
    if formula_like:
        text = "'" + text  # read as text, shown without the quote
    if formula_like or any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_files(name: str, table: Labelled) -> list[tuple[str, str, str]]:
    """(file name, CSV text, README line) for one array, split along its leading axes."""
    values = np.asarray(table.values)
    if values.ndim <= 2:
        shape = "(" + ", ".join(str(s) for s in values.shape) + ")"
        line = f"{name}.csv: shape {shape}, {table.corner}. {table.about}".strip()
        return [(f"{name}.csv", csv_text(table), line)]
    files = []
    names = (table.split,) if isinstance(table.split, str) else table.split
    names = (*names, *("slice",) * (values.ndim - 2 - len(names)))
    for index in np.ndindex(values.shape[:-2]):
        suffix = "_".join(f"{axis}{i}" for axis, i in zip(names, index, strict=False))
        piece = dataclasses.replace(table, values=values[index])
        files.extend(csv_files(f"{name}_{suffix}", piece))
    return files
