"""Characters written into a map's cells as one transparent PNG laid over the map.

plotly.js writes a heatmap's cell text as one SVG text node per cell, each laid out on its own:
Predict's 1,024-character passage took 250 ms a draw in Chromium, drawn twice on every open
(Streamlit's themed copy), the most of any chart in the explorer. Beyond ``SVG_CELLS_MAX`` cells
the characters travel as one image instead; the heatmap under it keeps its colours and its
exact hover (the character and its value), so nothing a learner reads is lost.

The glyphs come from a subset of DejaVu Sans Mono shipped with the explorer
(``explorer/assets/fonts``: printable ASCII, Latin-1, typographic quotes and dashes, and the
signs the explorer writes for whitespace), so the image is the same on every host; a character
outside it is written as U+FFFD, its hover still exact.
"""

from __future__ import annotations

import base64
import hashlib
import io
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from explorer.frame.memory import cached

SVG_CELLS_MAX = 256  # up to this many cells plotly.js writes the characters itself
FONT_FILE = Path(__file__).resolve().parents[1] / "assets" / "fonts" / "DejaVuSansMono-subset.ttf"
# the code points of FONT_FILE (the subset it was cut with)
COVERED = frozenset(
    [*range(0x20, 0x7F), *range(0xA0, 0x100), 0x2013, 0x2014, 0x2018, 0x2019, 0x201C,
     0x201D, 0x2026, 0x21B5, 0x21E5, 0x2423, 0xFFFD]
)  # fmt: skip
MISSING = "\ufffd"
DARK_TEXT, LIGHT_TEXT = (34, 34, 34, 255), (255, 255, 255, 255)


@cache
def font(size_px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(FONT_FILE), size_px)


def written(char: str) -> str:
    """The glyph a cell shows: the character, or U+FFFD where the font has none."""
    return char if len(char) == 1 and ord(char) in COVERED else MISSING


def text_colours(rgb: np.ndarray) -> np.ndarray:
    """(..., 4) RGBA text colour for cells of colour ``rgb`` (..., 3): dark on a light cell,
    white on a dark one (relative luminance above or below one half)."""
    luminance = rgb.astype(np.float32) @ np.array([0.2126, 0.7152, 0.0722], np.float32) / 255
    return np.where((luminance > 0.5)[..., None], DARK_TEXT, LIGHT_TEXT).astype(np.uint8)


def letters_source(chars: np.ndarray, rgb: np.ndarray, cell_px: tuple[int, int]) -> str:
    """PNG data URI of ``chars`` (rows, cols; "" = an empty cell), each centred in a cell of
    ``cell_px`` (width, height) pixels, in the colour that reads on its cell's ``rgb``."""
    chars = np.asarray(chars, dtype=object)
    text = "\x00".join(str(c) for c in chars.flat)
    digest = hashlib.blake2b(text.encode() + rgb.tobytes(), digest_size=16).hexdigest()
    return _letters_png(digest, chars.shape, tuple(cell_px), chars, np.ascontiguousarray(rgb))


@cached(16)
def _letters_png(
    digest: str, shape: tuple[int, ...], cell_px: tuple[int, int], _chars, _rgb
) -> str:
    """The PNG of ``_chars`` on ``_rgb`` (left out of the cache key: ``digest`` stands for
    both)."""
    rows, cols = shape
    width, height = cell_px
    image = Image.new("RGBA", (cols * width, rows * height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    glyphs = font(round(0.55 * height))
    colours = text_colours(_rgb)
    for (row, col), char in np.ndenumerate(_chars):
        if char:
            centre = (col * width + width / 2, row * height + height / 2)
            fill = tuple(int(v) for v in colours[row, col])
            draw.text(centre, written(char), font=glyphs, fill=fill, anchor="mm")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
