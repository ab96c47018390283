"""What a visitor picked on a chart: the selection Streamlit keeps under the chart's key."""

from __future__ import annotations

import streamlit as st


def clicked_cell(chart_key: str) -> tuple[int, int] | None:
    """(row, col) of the last clicked heatmap cell of chart ``chart_key``, from the point's
    customdata; None when nothing with customdata is selected."""
    event = st.session_state.get(chart_key)
    points = event["selection"]["points"] if event else []
    cells = [p for p in points if p.get("customdata") is not None]
    if not cells:
        return None
    data = cells[-1]["customdata"]  # (row, col); a typed array arrives as {"0": row, "1": col}
    if isinstance(data, dict):
        return int(data["0"]), int(data["1"])
    return int(data[0]), int(data[1])
