"""One matrix of a figure as a plotly trace: a heatmap with exact hover values up to
``IMAGE_SIDE`` rows and columns, a colour-mapped PNG (``go.Image``) beyond.

A PNG is about 0.1-0.4 MB for 512 x 512 instead of 2-5 MB of float32 values; its hover gives
the position only. Rows run down from the top, masked (NaN) cells are blank.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from explorer.figures.scales import Scale, colour_at, heatmap_colours
from explorer.figures.ticks import escape_label
from explorer.frame.memory import cached
from explorer.pair.marks import axes_meta

CELL_TEXT_MAX = 16
IMAGE_SIDE = 128  # a panel with more rows or columns than this travels as a PNG
HOVER_TEXT_CELLS = 1024  # up to this many cells, hover names both tokens of every cell
MASKED_RGB = (217, 217, 217)  # MASKED_BACKGROUND as RGB, for the pixels of masked cells


@dataclass(frozen=True)
class Panel:
    """One matrix of a figure: ``z`` (rows, cols), NaN = masked; offsets are the positions of the
    first row / column (a window of a larger matrix); labels name rows / columns (tokens)."""

    z: np.ndarray
    title: str = ""
    x_title: str = "key j"
    y_title: str = "query i"
    row_offset: int = 0
    col_offset: int = 0
    x_labels: Sequence[str] | None = None
    y_labels: Sequence[str] | None = None
    x_symbol: str = "j"
    y_symbol: str = "i"
    cell_text: np.ndarray | None = None  # written into the cells when both sides <= CELL_TEXT_MAX
    subtitle: str = ""  # a second, smaller line under the title (a reading of the panel)


def png_source(z: np.ndarray, scale: Scale) -> str:
    """``z`` colour-mapped on ``scale`` as a PNG data URI (masked cells light grey).

    Encoding a 512 x 512 panel takes about 70 ms, so the result is cached by the bytes of ``z``
    (a digest, not Streamlit's sampled hash of large arrays): a rerun that draws the same
    matrix, or a page that draws it twice, encodes it once.
    """
    z = np.ascontiguousarray(z, dtype=np.float32)
    digest = hashlib.blake2b(z.tobytes(), digest_size=16).hexdigest()
    return _png(digest, z.shape, scale, z)


@cached(64)
def _png(digest: str, shape: tuple[int, ...], scale: Scale, _z: np.ndarray) -> str:
    """The PNG of ``_z`` (left out of the cache key: ``digest`` and ``shape`` stand for it)."""
    rgb = colour_at(scale.kind, np.nan_to_num(scale.position(_z), nan=0.0), scale.colours)
    rgb[~np.isfinite(_z)] = MASKED_RGB
    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def pool(z: np.ndarray, side: int) -> tuple[np.ndarray, int]:
    """Block means of ``z`` so that no side exceeds ``side``: (pooled, block size). NaN cells are
    left out of a mean; a block of NaN stays NaN."""
    z = np.asarray(z, dtype=np.float32)
    block = max(1, math.ceil(max(z.shape) / side))
    if block == 1:
        return z, 1
    rows, cols = (math.ceil(s / block) * block for s in z.shape)
    padded = np.full((rows, cols), np.nan, dtype=np.float32)
    padded[: z.shape[0], : z.shape[1]] = z
    blocks = padded.reshape(rows // block, block, cols // block, block)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a fully masked block is meant to be NaN
        return np.nanmean(blocks, axis=(1, 3)).astype(np.float32), block


def hover_labels(labels: Sequence[str] | None, count: int, offset: int, symbol: str) -> list[str]:
    """'i = 3 "the"' for each of ``count`` positions from ``offset`` (no token: 'i = 3')."""
    out = []
    for p in range(offset, offset + count):
        token = f' "{escape_label(labels[p])}"' if labels is not None and p < len(labels) else ""
        out.append(f"{symbol} = {p}{token}")
    return out


def panel_trace(panel: Panel, scale: Scale, axis: str, side: int) -> dict:
    """The heatmap or image trace of one panel on axes ``x{axis}`` / ``y{axis}``."""
    z = np.asarray(panel.z, dtype=np.float32)
    rows, cols = z.shape
    y_sym, x_sym = panel.y_symbol, panel.x_symbol
    refs = {
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
        "meta": axes_meta(
            y_sym,
            x_sym,
            (panel.row_offset, panel.row_offset + rows - 1),
            (panel.col_offset, panel.col_offset + cols - 1),
        ),
    }
    if max(rows, cols) > IMAGE_SIDE:
        shown, block = pool(z, side)
        return {
            "type": "image",
            "source": png_source(shown, scale),
            "x0": panel.col_offset + (block - 1) / 2,
            "dx": block,
            "y0": panel.row_offset + (block - 1) / 2,
            "dy": block,
            "hovertemplate": f"{y_sym} = %{{y}}<br>{x_sym} = %{{x}}<extra></extra>",
            "name": "image",
            **refs,
        }
    trace: dict = {
        "type": "heatmap",
        "z": z,
        "x": np.arange(panel.col_offset, panel.col_offset + cols),
        "y": np.arange(panel.row_offset, panel.row_offset + rows),
        **heatmap_colours(scale),
        "hoverongaps": False,
        **refs,
    }
    if panel.cell_text is not None and max(rows, cols) <= CELL_TEXT_MAX:
        trace["text"] = np.vectorize(lambda v: html.escape(str(v), quote=False))(panel.cell_text)
        trace["texttemplate"] = "%{text}"
        trace["textfont"] = {"size": 10}
    value = "%{z:.4g}"
    if rows * cols <= HOVER_TEXT_CELLS:
        ys = hover_labels(panel.y_labels, rows, panel.row_offset, y_sym)
        xs = hover_labels(panel.x_labels, cols, panel.col_offset, x_sym)
        hover = np.array([[f"{y}<br>{x}" for x in xs] for y in ys], dtype=object)
        with np.errstate(invalid="ignore"):  # NaN (masked) cells are never beyond
            beyond = (z < scale.zmin) | (z > scale.zmax)
        if scale.kind == "diverging" and beyond.any():  # a clipped scale: say which cells
            hover[beyond] += f"<br>beyond the colour scale (±{scale.zmax:.3g})"
        trace["hovertext"] = hover
        trace["hovertemplate"] = f"%{{hovertext}}<br>value = {value}<extra></extra>"
    else:
        trace["hovertemplate"] = (
            f"{y_sym} = %{{y}}<br>{x_sym} = %{{x}}<br>value = {value}<extra></extra>"
        )
    return trace
