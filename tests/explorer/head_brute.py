"""Where a head puts its weight, by the definition cell by cell (the reference the note engine is
tested against), and the numbers a head note states, read back from its words."""

from __future__ import annotations

import math
import re

import numpy as np

# the thresholds explorer/figures/head_reading.py states
FOCUS, EVEN, STANDOUT, NOTICE = 0.5, 0.85, 1.5, 0.1


def brute_reading(weights: np.ndarray, visible: np.ndarray | None = None, offset: int = 0) -> dict:
    """Every hypothesis a learner tests, one loop per cell.

    A row counts when it sees two keys or more (or, on a window from offset > 0, one drawn key
    and the keys before the window). distance r: mean of w[i, i + r] over the counted rows that
    see key i + r; key c: mean of w[i, c] over the counted rows that see key c; a hypothesis is
    kept when it has at least half the counted rows. Evenness: mean over rows with two keys
    drawn of -sum p log p / log(keys), p the row renormalised over its keys drawn. The best
    stands out with 1.5 times the share an even spread gives its cells and 10% at least; it names
    the head with half a row's weight or more, else the head leans on it; with none standing
    out, the head is even at an evenness of 85% or more.
    """
    w = np.asarray(weights, dtype=np.float64)
    rows, cols = w.shape
    sees = [
        [bool(np.isfinite(w[i, j]) and (visible is None or visible[i, j])) for j in range(cols)]
        for i in range(rows)
    ]
    counted = [i for i in range(rows) if sum(sees[i]) >= 2 or (offset > 0 and sum(sees[i]) >= 1)]
    if not counted:
        return {"pattern": "none"}
    need = max(1, math.ceil(len(counted) / 2))
    found = []  # (share, rows, kind, at, query rows)
    for r in range(-(rows - 1), cols):
        on = [i for i in counted if 0 <= i + r < cols and sees[i][i + r]]
        if len(on) >= need:
            found.append((sum(w[i, i + r] for i in on) / len(on), len(on), "distance", r, on))
    for c in range(cols):
        on = [i for i in counted if sees[i][c]]
        if len(on) >= need:
            found.append((sum(w[i, c] for i in on) / len(on), len(on), "key", c, on))
    best = max(
        found,
        key=lambda f: (f[0], f[1], f[2] == "distance", -abs(f[3]) if f[2] == "distance" else -f[3]),
    )
    ratios, even_rows = [], []
    for i in counted:
        drawn = [w[i, j] for j in range(cols) if sees[i][j]]
        total = sum(drawn)
        if len(drawn) >= 2 and total > 0:
            h = -sum(p / total * math.log(p / total) for p in drawn if p > 0)
            ratios.append(h / math.log(len(drawn)))
            even_rows.append(i + offset)
    evenness = float(np.mean(ratios)) if ratios else math.nan
    share, _, kind, at, on = best
    # an even spread of each row's drawn weight over its keys drawn, on the same cells
    even_share = float(
        np.mean([sum(w[i, j] for j in range(cols) if sees[i][j]) / sum(sees[i]) for i in on])
    )
    if share >= STANDOUT * even_share and share >= NOTICE:
        pattern = kind if share >= FOCUS else "leans"
    else:
        pattern = "even" if evenness >= EVEN else "mixed"
    return {
        "pattern": pattern,
        "kind": kind,
        "at": at + offset * (kind == "key"),
        "share": share,
        "even_share": even_share,
        "rows": [i + offset for i in on],
        "evenness": evenness,
        "even_rows": even_rows,
    }


def span_list(text: str) -> list[int]:
    """'1-3, 5' -> [1, 2, 3, 5]."""
    out: list[int] = []
    for part in text.split(", "):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def parse_head_note(note: str) -> dict:
    """The numbers a head note states: its pattern, the cell it names, the share and the query
    rows it averages over, an even spread's share, the entropy and its rows (markdown escapes
    removed)."""
    note = note.replace("\\", "")
    out: dict = {}
    if "no query row sees two keys or more" in note:
        return {"pattern": "none"}
    if m := re.search(r"entropy is on average ([\d.]+)%", note):
        out["evenness"] = float(m.group(1)) / 100
    if m := re.search(
        r"spreads its weight (?:close to )?evenly .*over query rows? ([\d, -]+)\.", note
    ):
        out["pattern"] = "even"
        out["even_rows"] = span_list(m.group(1))
        return out
    if m := re.search(r"(?:an even spread puts|times the) ([\d.]+)%", note):
        out["even_share"] = float(m.group(1)) / 100
    cell = re.search(r"\((j - i = (-?\d+)|j = (\d+))", note)
    assert cell, note
    out["kind"], out["at"] = (
        ("distance", int(cell.group(2))) if cell.group(2) else ("key", int(cell.group(3)))
    )
    share = re.search(r"(?:puts |: |the most, )([\d.]+)% of a row's weight", note)
    assert share, note
    out["share"] = float(share.group(1)) / 100
    out["pattern"] = (
        "leans" if " leans on " in note else "mixed" if "follows no one" in note else out["kind"]
    )
    rows = re.search(r"over query rows? ([\d, -]+?)(?:[.;]|,? on | where|$)", note)
    assert rows, note
    out["rows"] = span_list(rows.group(1).rstrip(","))
    return out


def shown_exactly(stated: float, value: float) -> bool:
    """A percentage stated with its decimals equals ``value`` rounded to those decimals."""
    decimals = len(f"{100 * stated:.6f}".rstrip("0").split(".")[1]) if stated else 0
    return abs(100 * stated - 100 * value) <= 0.5 * 10**-decimals + 1e-9


def assert_note_reads(note: str, brute: dict) -> None:
    """The note states the brute-force reading: same pattern, cell, rows and numbers."""
    said = parse_head_note(note)
    assert said["pattern"] == brute["pattern"], (note, brute)
    if brute["pattern"] == "none":  # no row with a choice: nothing more to state
        return
    if brute["pattern"] == "even":
        assert said["even_rows"] == brute["even_rows"], note
    else:
        assert (said["kind"], said["at"]) == (brute["kind"], brute["at"]), (note, brute)
        assert said["rows"] == brute["rows"], note
        assert shown_exactly(said["share"], brute["share"]), (note, brute["share"])
        if "even_share" in said:
            assert shown_exactly(said["even_share"], brute["even_share"]), note
    if "evenness" in said:
        assert shown_exactly(said["evenness"], brute["evenness"]), (note, brute["evenness"])
