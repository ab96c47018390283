"""What a model never reads or never learned, drawn as such: those cells and table rows are
blank (NaN, drawn grey like every masked cell, and left out of the colour scale), and one line
says why. Also the typed characters a model cannot read, named safely.

A causal model never reads a key ahead of its query (j > i), so the rows w_+1..w_+k of Shaw's
tables get no gradient and keep their initial draw; a table row for a distance beyond the
training windows is never trained either (``explorer.weights.trained.never_trained``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from explorer.figures.numbers import count
from explorer.frame.widgets import md_escape
from explorer.weights.reading import shown


def blank(z: np.ndarray, hidden: np.ndarray | None) -> np.ndarray:
    """``z`` as float32 with NaN where ``hidden`` (broadcast) is True; ``z`` itself without."""
    z = np.asarray(z, dtype=np.float32)
    return z if hidden is None else np.where(hidden, np.float32(np.nan), z)


def hidden_keys(
    rows: int, cols: int, *, causal: bool, row_offset: int = 0, col_offset: int = 0,
    keys: int | None = None, padded: int = 0,
) -> np.ndarray | None:  # fmt: skip
    """(rows, cols) bool, True where the mask hides key j from query i: j > i when ``causal``,
    and the last ``padded`` of ``keys`` keys; None when nothing is hidden.

    >>> hidden_keys(2, 3, causal=True).astype(int).tolist()
    [[0, 1, 1], [0, 0, 1]]
    """
    i = np.arange(row_offset, row_offset + rows)[:, None]
    j = np.arange(col_offset, col_offset + cols)[None, :]
    hidden = np.zeros((rows, cols), dtype=bool)
    if causal:
        hidden |= j > i
    if padded and keys is not None:
        hidden |= np.broadcast_to(j >= keys - padded, hidden.shape)
    return hidden if hidden.any() else None


def rows_text(distances: Sequence[int]) -> str:
    """Table rows by distance: 'w_+1..w_+2', 'w_+1', 'w_-64'.

    >>> rows_text([1, 2]), rows_text([1]), rows_text([-64])
    ('w_+1..w_+2', 'w_+1', 'w_-64')
    """
    low, high = min(distances), max(distances)
    if low == high:
        return f"w_{low:+d}"
    return f"w_{low:+d}..w_{high:+d}"


def untrained_line(distances: Sequence[int]) -> str:
    """Why the table rows at ``distances`` are blank: a causal model never reads the rows
    ahead, and the rows beyond the training windows are never reached (the windows' length is
    the nearest of them, negated)."""
    ahead = [r for r in distances if r > 0]
    behind = [r for r in distances if r < 0]
    why = []
    if ahead:
        why.append(f"a causal model never reads {rows_text(ahead)}")
    if behind:
        length = -max(behind)
        why.append(
            f"its training windows of {length} characters never reach {rows_text(behind)} "
            f"(read only on texts longer than {length})"
        )
    return (
        "Grey rows were never trained: "
        + " and ".join(why)
        + ", so they keep their initial random draw (shrunk only by weight decay)."
    )


def masked_line(causal: bool, padded: int, untrained_ahead: Sequence[int] = ()) -> str:
    """Why cells are blank: the mask hides them from the softmax; with ``untrained_ahead`` (a
    trained causal model's rows w_+1..w_+k) the keys ahead would read never-trained rows."""
    hidden = []
    if causal:
        hidden.append("keys ahead of their query (j > i)")
    if padded:
        hidden.append(f"the last {padded} key(s), padding")
    line = "Grey cells are masked: " + " and ".join(hidden) + " are never attended to"
    if untrained_ahead:
        line += (
            f"; a causal model never reads {rows_text(untrained_ahead)} there, so those rows "
            "keep their initial random draw"
        )
    return line + "."


def printable(char: str) -> str:
    """A character as a note names it: itself, a visible sign for whitespace, or its code.

    >>> printable("é"), printable(" "), printable("\\u200b")
    ('é', '␣', 'U+200B')
    """
    sign = shown(char)
    return sign if sign.isprintable() else f"U+{ord(char):04X}"


def unread_line(unread: Sequence[str], total: int) -> str | None:
    """Markdown: how many of the ``total`` characters the model reads as the one unknown id,
    and which (each once, escaped so that markdown, HTML and $ show literally); None if none.

    >>> print(unread_line(("é", "東", "é"), 10)[:72])
    The model cannot read 3 of the 10 characters (2 different): é, 東 are out
    """
    if not unread:
        return None
    distinct = dict.fromkeys(unread)
    which = ", ".join(md_escape(printable(c)) for c in distinct)
    repeats = f" ({count(len(distinct))} different)" if len(distinct) < len(unread) else ""
    return (
        f"The model cannot read {count(len(unread))} of the {count(total)} characters{repeats}: "
        f"{which} {'is' if len(set(unread)) == 1 else 'are'} outside its vocabulary (the "
        "characters of its training text), and it reads every such character as one and the "
        "same unknown id."
    )
