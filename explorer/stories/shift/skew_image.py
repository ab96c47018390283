"""The image figure of the skew story: a large step as an image (one pixel per cell), the kept
cells outlined, the pick crossed; which steps are large, and the crop around the pick that an
inset shows as cells (:func:`explorer.stories.shift.skew_figures.cells_figure`).
"""

from __future__ import annotations

import base64
import functools
import io

import numpy as np
import plotly.colors
import plotly.graph_objects as go
from PIL import Image

from explorer.figures.palettes import active
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.stories.shift.skew import SkewStep, SkewStory, skew_story
from explorer.stories.shift.step_drawing import (
    OUTLINE,
    SCALE,
    colour_bound,
    outline_path,
    pick_shapes,
    step_layout,
)
from explorer.stories.shift.stepping import Place

CELLS_MAX = 8192  # a step with more cells travels as an image


@functools.cache
def _lut(scale: tuple[str, ...]) -> np.ndarray:
    colours = plotly.colors.sample_colorscale(list(scale), np.linspace(0, 1, 256))
    return np.array([plotly.colors.unlabel_rgb(c) for c in colours], dtype=np.float32)


@cached(16)
def step_png(params: ViewParams, head: int, masked: bool, name: str, scale: tuple[str, ...]) -> str:
    """A step as a PNG data URI: one pixel per cell, greyed where not kept (cached)."""
    story = skew_story(params, head, masked)
    step = story.step(name)
    bound = colour_bound(story)
    level = np.clip((step.z / bound + 1) * 127.5, 0, 255).astype(np.uint8)
    rgb = _lut(scale)[level]  # the palette's diverging colours (the sidebar's colours)
    rgb = np.where(step.kept[..., None], rgb, rgb * 0.28 + 255 * 0.72)
    buffer = io.BytesIO()
    Image.fromarray(rgb.round().astype(np.uint8), "RGB").save(buffer, "PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def image_figure(
    story: SkewStory,
    params: ViewParams,
    head: int,
    name: str,
    place: Place | None,
    title: str = "",
    width_px: int = 470,
) -> go.Figure:
    """A large step as an image (one pixel per cell), the kept cells outlined, the pick crossed.

    The exact values are not in this figure: the inset around the picked cell holds them.
    """
    step = story.step(name)
    rows, cols = step.shape
    bound = colour_bound(story)
    x0, y0 = float(step.x[0]), float(step.y[0])
    data = [
        {
            "type": "image",
            "source": step_png(params, head, story.masked, name, active().diverging),
            "x0": x0,
            "y0": y0,
            "dx": 1,
            "dy": 1,
            "hovertemplate": f"{step.y_title} %{{y}}, {step.x_title} %{{x}}<extra></extra>",
            "name": name,
        },
        {  # an invisible marker carrying the image's colour bar
            "type": "scatter",
            "x": [None],
            "y": [None],
            "mode": "markers",
            "marker": {
                "size": 0.1,
                "opacity": 0,
                "color": [0.0],
                "colorscale": SCALE,
                "cmin": -bound,
                "cmax": bound,
                "showscale": True,
                "colorbar": {"thickness": 12, "len": 0.8, "title": {"text": "value"}},
            },
            "hoverinfo": "skip",
            "name": "scale",
        },
    ]
    outline = outline_path(step.kept, x0, y0)
    shapes = [{"type": "path", "path": outline, "line": {"color": OUTLINE, "width": 1},
               "name": "kept", "layer": "above"}]  # fmt: skip
    shapes += pick_shapes(place, True, (x0, x0 + cols - 1, y0, y0 + rows - 1))
    x_axis = {"range": [x0 - 0.5, x0 + cols - 0.5]}
    y_axis = {"range": [y0 + rows - 0.5, y0 - 0.5]}
    height = int(np.clip(rows / cols * width_px + 110, 280, 640))
    return go.Figure({"data": data, "layout": step_layout(step, title, x_axis, y_axis, height,
                                                      shapes)})  # fmt: skip


def is_small(story: SkewStory, name: str) -> bool:
    """Whether a step is drawn as cells (else as an image with an inset)."""
    rows, cols = story.step(name).shape
    return rows * cols <= CELLS_MAX


def inset_window(step: SkewStep, place: Place, height: int = 9, width: int = 9) -> tuple[
    slice, slice]:  # fmt: skip
    """Rows and columns of a crop of ``step`` around ``place`` (clamped to the matrix)."""
    rows, cols = step.shape
    r0 = int(np.clip(place.row - height // 2, 0, max(rows - height, 0)))
    c0 = int(np.clip(place.col - width // 2, 0, max(cols - width, 0)))
    return slice(r0, min(r0 + height, rows)), slice(c0, min(c0 + width, cols))
