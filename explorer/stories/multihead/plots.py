"""Figure sizes of the Multi-head page: (positions, channels) panels rows can read."""

from __future__ import annotations

from explorer.figures.heatmaps import CELL_MAX_PX, ELONGATED

ROW_PX = 160  # the least height of a (positions, channels) panel much wider than tall


def channel_cell_px(rows: int, cols: int) -> float | None:
    """The ``cell_px`` for ``panel_grid`` of (positions, channels) panels: when a panel is so
    much wider than tall that the grid gives rows and columns their own cell sizes, rows tall
    enough to read their labels; else None (the grid's own square cells).

    >>> channel_cell_px(8, 128), channel_cell_px(32, 128)
    (20.0, None)
    """
    if max(rows, cols) <= ELONGATED * min(rows, cols):
        return None
    return float(min(CELL_MAX_PX, max(8.0, ROW_PX / rows)))
