"""favoured_distance_note against brute force: the mean of the term over the valid cells of each
distance group (every distance beyond the clip reads the same edge row, so they form one group),
groups of too few cells left out, and the note says over how many cells each mean is taken."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.figures.notes import favoured_distance_note


def brute_groups(term, distance, valid, clip, min_cells=3) -> dict[int, tuple[float, int]]:
    """Group -> (mean, cells), one cell at a time; the group is clip(j - i, k) (or j - i)."""
    cells: dict[int, list[float]] = {}
    for (a, b), value in np.ndenumerate(term):
        if valid[a, b] and np.isfinite(value):
            r = int(distance[a, b])
            group = r if clip is None else max(-clip, min(clip, r))
            cells.setdefault(group, []).append(float(value))
    kept = {g: v for g, v in cells.items() if len(v) >= min_cells} or cells
    return {g: (float(np.mean(v)), len(v)) for g, v in kept.items()}


def label(group: int, clip: int | None, distances: np.ndarray) -> str:
    if clip is not None and group == -clip and (distances < -clip).any():
        return f"j - i <= -{clip}, which all read w_-{clip}"
    if clip is not None and group == clip and (distances > clip).any():
        return f"j - i >= {clip}, which all read w_+{clip}"
    return f"j - i = {group}"


@pytest.mark.parametrize(("n", "clip", "seed"), [(40, 2, 0), (9, 3, 1), (7, None, 2), (12, 1, 3)])
def test_the_note_names_the_groups_with_the_largest_and_smallest_mean(n, clip, seed) -> None:
    rng = np.random.default_rng(seed)
    term = rng.normal(size=(n, n))
    i, j = np.indices(term.shape)
    valid = j <= i
    note = favoured_distance_note(term, j - i, valid, "the term", clip=clip)
    groups = brute_groups(term, j - i, valid, clip)
    high = max(groups, key=lambda g: groups[g][0])
    low = min(groups, key=lambda g: groups[g][0])
    seen = (j - i)[valid]
    for group in (high, low):
        mean, count = groups[group]
        assert f"{label(group, clip, seen)} (mean {mean:.3g} over {count:,} cells)" in note, note
    assert f"over its {int(valid.sum()):,} valid cells" in note


def test_far_distances_that_read_one_edge_row_are_one_group_not_a_single_cell() -> None:
    """n = 40, k = 2: j - i = -39 is one cell, and it reads w_-2 like every j - i <= -2."""
    n, k = 40, 2
    i, j = np.indices((n, n))
    term = np.where(j - i <= -k, -1.0, 1.0)
    term[n - 1, 0] = -50.0  # one far cell: the old note crowned j - i = -39 for it
    note = favoured_distance_note(term, j - i, j <= i, "the term", clip=k)
    assert "-39" not in note
    cells = int(((j - i <= -k) & (j <= i)).sum())
    assert f"smallest at j - i <= -2, which all read w_-2 (mean {-(cells - 1 + 50) / cells:.3g}" \
        in note  # fmt: skip


def test_without_a_clip_distances_held_by_too_few_cells_are_left_out_and_said() -> None:
    i, j = np.indices((6, 6))
    term = (j - i).astype(float)
    term[5, 0] = 100.0  # j - i = -5: one cell
    note = favoured_distance_note(term, j - i, j <= i, "the term")
    assert "j - i = -5" not in note and "j - i = -4" not in note  # 1 and 2 cells
    assert "largest at j - i = 0 (mean 0 over 6 cells)" in note
    assert "smallest at j - i = -3 (mean -3 over 3 cells)" in note
    assert "fewer than 3 cells" in note
