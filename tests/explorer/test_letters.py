"""explorer/figures/letters.py: the characters' image writes each character in its own cell,
in a colour that reads on the cell, with glyphs the shipped font really has."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image, ImageDraw

from explorer.figures.letters import COVERED, MISSING, font, letters_source, text_colours, written
from explorer.weights.reading import held_out_passage, shown

CELL = (24, 36)


def pixels(uri: str) -> np.ndarray:
    header, data = uri.split(",", 1)
    assert header == "data:image/png;base64"
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"))


def cell(image: np.ndarray, row: int, col: int) -> np.ndarray:
    width, height = CELL
    return image[row * height : (row + 1) * height, col * width : (col + 1) * width]


def glyph_mask(char: str, size: int = 20) -> np.ndarray:
    """Which pixels the font draws for ``char`` alone (an independent rendering)."""
    image = Image.new("L", (40, 40))
    ImageDraw.Draw(image).text((20, 20), char, font=font(size), fill=255, anchor="mm")
    return np.asarray(image) > 0


def test_each_character_is_in_its_own_cell_and_empty_cells_stay_clear() -> None:
    chars = np.array([["a", "", "x"], ["x", "a", ""]], dtype=object)
    rgb = np.zeros((2, 3, 3), np.uint8)  # dark cells: white characters
    image = pixels(letters_source(chars, rgb, CELL))
    assert image.shape == (2 * 36, 3 * 24, 4)
    for (row, col), char in np.ndenumerate(chars):
        drawn = cell(image, row, col)[..., 3] > 0
        assert drawn.any() == bool(char), (row, col)
    # the same character draws the same pixels wherever it is, another character others
    np.testing.assert_array_equal(cell(image, 0, 0), cell(image, 1, 1))
    np.testing.assert_array_equal(cell(image, 0, 2), cell(image, 1, 0))
    assert not np.array_equal(cell(image, 0, 0), cell(image, 0, 2))


def test_the_text_is_dark_on_a_light_cell_and_white_on_a_dark_one() -> None:
    yellow, purple = (253, 231, 37), (68, 1, 84)  # the two ends of Viridis
    colours = text_colours(np.array([yellow, purple], np.uint8))
    assert colours[0, :3].max() < 64 and colours[1, :3].min() == 255
    chars = np.array([["W", "W"]], dtype=object)
    image = pixels(letters_source(chars, np.array([[yellow, purple]], np.uint8), CELL))
    solid = [cell(image, 0, col)[cell(image, 0, col)[..., 3] == 255][:, :3] for col in (0, 1)]
    assert solid[0].max() < 64 and solid[1].min() == 255


def test_the_font_has_every_covered_glyph_and_the_passage_needs_no_other() -> None:
    # a character the subset lacks draws nothing at all: written() puts U+FFFD in its place
    assert not glyph_mask("\u4e00").any()
    invisible = {0x20, 0xA0, 0xAD}  # space, no-break space, soft hyphen
    for code in sorted(COVERED - invisible):
        assert glyph_mask(chr(code)).any(), hex(code)
    assert written("\u4e00") == MISSING and written("a") == "a" and written("") == MISSING
    passage = held_out_passage()
    assert all(written(shown(c)) == shown(c) for c in set(passage))
