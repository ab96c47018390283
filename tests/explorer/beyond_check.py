"""Check every claim of a "beyond the trained length" note on the curves it describes, number by
number: what it says each curve does past |j - i| = context - 1 is what the values do."""

from __future__ import annotations

import re

import numpy as np

SAME = 1e-3  # "equal": within 0.1 % of the curve's range within (float32 curves)


def _sig(x: float) -> str:
    return f"{x:.3g}"


def _parts(note: str, labels: list[str]) -> dict[str, str]:
    """label -> what the note says of it."""
    head = re.match(r"Past \|j - i\| = (\d+), the farthest a training window holds: ", note)
    assert head, note
    body = note[head.end() :].rstrip(".")
    parts = body.split("; ")
    assert len(parts) == len(labels), note
    out = {}
    for label, part in zip(labels, parts, strict=True):
        assert part.startswith(label + " ") or part.startswith(label + ": "), (label, part)
        out[label] = part[len(label) :].lstrip(": ").strip()
    return out


def _groups(said: str, heads: int) -> list[tuple[list[int], str]]:
    """'heads 0, 2 holds ..., head 1 keeps ...' -> [([0, 2], 'holds ...'), ([1], 'keeps ...')];
    a phrase with no heads named speaks of every head."""
    if not said.startswith("head"):
        return [(list(range(heads)), said)]
    found = re.split(r"(?:^|, )heads? ((?:\d+, )*\d+) ", said)[1:]
    return [([int(h) for h in found[k].split(", ")], found[k + 1]) for k in range(0, len(found), 2)]


def check_claim(said: str, distance: np.ndarray, curves: np.ndarray, context: int) -> None:
    """One phrase against the (h, m) curves it speaks of."""
    edge, end = -(context - 1), int(distance.min())
    back = np.argsort(-distance)  # 0, -1, -2, ...
    r = distance[back]
    for t in np.asarray(curves, dtype=np.float64)[:, back]:
        tol = SAME * np.ptp(t[r >= edge])
        at_edge, beyond = t[r == edge][0], t[r < edge]  # beyond[0] = t(edge - 1)
        if said.startswith("holds its edge value"):
            assert said == f"holds its edge value out to j - i = {end}"
            assert np.all(np.abs(beyond - at_edge) <= tol)
        elif said.startswith("drops to 0"):
            assert said == f"drops to 0 at j - i = {edge - 1} and stays flat"
            assert abs(at_edge) > tol and np.all(np.abs(beyond) <= tol)
        elif said.startswith("keeps falling by"):
            steps = np.diff(np.concatenate([[at_edge], beyond]))  # per position further back
            assert np.all(steps < 0) and np.ptp(steps) <= 2 * tol, steps
            sizes = re.match(r"keeps falling by ([\d.e-]+)(?: to ([\d.e-]+))? logits", said)
            low, high = sizes.group(1), sizes.group(2) or sizes.group(1)
            assert float(low) <= float(_sig(-steps.mean())) <= float(high)
        elif said.startswith("steps at"):
            m = re.match(r"steps at (\d+) distances? \(j - i = ([-\d, .]+)\), then holds one "
                         r"value from (-\d+) out to (-\d+)$", said)  # fmt: skip
            assert m, said
            listed = [int(x) for x in m.group(2).split(", ") if x != "..."]
            last = int(m.group(3))
            assert int(m.group(4)) == end and last == listed[-1]
            prev = np.concatenate([[at_edge], beyond[:-1]])  # t(r + 1) beside t(r)
            jumps = r[r < edge][np.abs(beyond - prev) > tol]
            assert set(jumps.tolist()) <= set(range(last, edge)), jumps
            if "..." not in m.group(2):
                assert set(jumps.tolist()) <= set(listed)
            assert np.all(np.abs(t[r <= last] - t[r == last][0]) <= tol)  # holds from there
        else:
            m = re.match(r"keeps varying \(a range of up to ([\d.e+]+) logits beyond, "
                         r"([\d.e+]+) within\)$", said)  # fmt: skip
            assert m, said
            # each head's range is at most the largest, stated to 3 significant digits
            assert np.ptp(beyond) <= float(m.group(1)) * 1.005 + 1e-9
            assert np.ptp(t[r >= edge]) <= float(m.group(2)) * 1.005 + 1e-9
            # neither flat nor zero nor a straight line
            assert np.any(np.abs(beyond - at_edge) > tol) and np.any(np.abs(beyond) > tol)
            assert np.ptp(np.diff(np.concatenate([[at_edge], beyond]))) > 2 * tol
    if said.startswith("keeps varying"):  # the numbers are the largest over these heads
        spans = [np.ptp(t[distance < edge]) for t in curves]
        within = [np.ptp(t[distance >= edge]) for t in curves]
        m = re.search(r"up to ([\d.e+]+) logits beyond, ([\d.e+]+) within", said)
        assert m.group(1) == _sig(max(spans)) and m.group(2) == _sig(max(within)), said
    if said.startswith("keeps falling by"):
        slopes = [  # fall per position from the edge to the farthest distance drawn
            (t[distance == edge][0] - t[distance == end][0]) / (edge - end) for t in curves
        ]
        m = re.match(r"keeps falling by ([\d.e-]+)(?: to ([\d.e-]+))?", said)
        assert m.group(1) == _sig(min(slopes)) and (m.group(2) or m.group(1)) == _sig(max(slopes))


def check_beyond_note(
    note: str, distance: np.ndarray, curves: dict[str, np.ndarray], context: int
) -> dict[str, str]:
    """Every scheme's claim checked on its curves; returns label -> what was said."""
    note = note.replace("\\", "")
    assert note.startswith(f"Past |j - i| = {context - 1},"), note
    said = _parts(note, list(curves))
    for label, values in curves.items():
        heads = _groups(said[label], len(values))
        assert sorted(h for group, _ in heads for h in group) == list(range(len(values)))
        for group, phrase in heads:
            check_claim(phrase, distance, np.asarray(values)[group], context)
    return said
