"""Drawing helpers: a figure with its formula and shape, and PNG export from its toolbar."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from explorer.controls import md_escape
from explorer.params import DISPLAY_MAX, ViewParams


def png_config(key: str) -> dict:
    """Plotly modebar config: the camera button saves the figure as ``<key>.png``."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": key, "scale": 2},
    }


def shape_text(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def chart(
    fig: go.Figure,
    key: str,
    matrix: np.ndarray,
    *,
    formula: str = "",
    shape: tuple[int, ...] | None = None,
    note: str = "",
) -> None:
    """Formula and shape, then the figure and its note.

    ``matrix`` is what the page's one download (explorer.downloads) should carry for it.
    """
    if formula or shape is not None:
        parts = [f"`{formula}`" if formula else ""]
        if shape is not None:
            parts.append(f"shape `{shape_text(shape)}`")
        st.markdown(" · ".join(p for p in parts if p))
    st.plotly_chart(fig, key=f"chart_{key}", width="stretch", config=png_config(key))
    if note:
        st.caption(md_escape(note))


def agreement_badge(label: str, max_diff: float, tolerance: float = 1e-4) -> None:
    """A green badge when two computations agree within ``tolerance``, red otherwise."""
    ok = max_diff <= tolerance
    st.badge(
        f"{label}: max |difference| = {max_diff:.1e}",
        icon=":material/check:" if ok else ":material/close:",
        color="green" if ok else "red",
    )


def bytes_text(count: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def window_note(params: ViewParams) -> str:
    """'' for a whole view; else which positions a windowed heatmap shows, for its caption."""
    if not params.windowed:
        return ""
    start, stop = params.window
    return f"window: positions {start}-{stop - 1} of {params.length} on both axes"


def window_caption(params: ViewParams, what: str = "every n x n heatmap") -> None:
    """Say, under the title, that the heatmaps show a window and how large the full matrix is."""
    if params.windowed:
        start, stop = params.window
        n = params.length
        st.caption(
            f"n = {n} is above {DISPLAY_MAX}: {what} shows the window of "
            f"queries and keys {start}-{stop - 1} ({stop - start} x {stop - start} of the full "
            f"({n}, {n})), not a downsample; every value is exact. Move it with *window start* "
            "in the sidebar."
        )
