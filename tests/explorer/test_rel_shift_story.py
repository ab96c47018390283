"""The Transformer-XL shift story against the definition: every step's values, the cells the
shift gets right and wrong, where a picked value sits in every step, and the check.

Expected numbers are built here from the paper's formula with a plain loop (the sinusoid
written out with math.sin / math.cos) and from the pad / reshape / slice index arithmetic
worked out by hand: out[i, j] = padded_flat[Q + i K + j], padded_flat[p] = 0 when p is a
multiple of K + 1, else X[p // (K + 1), p % (K + 1) - 1].
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from explorer.frame.params import ViewParams
from explorer.stories.shift.rel_shift import (
    CHECK_QUERIES,
    DROPPED,
    KEPT,
    STEPS,
    STORY_QUERIES,
    WRONG,
    shift_check,
    shift_story,
    xl_scheme,
)
from explorer.stories.shift.rel_shift_tables import wrong_cells
from explorer.stories.shift.stepping import locate, result_cell_of
from explorer.weights.example import example_inputs

CLOSE = {"rtol": 1e-5, "atol": 1e-5}


def sinusoid(distance: int, d_model: int) -> np.ndarray:
    """R_distance of Transformer-XL: every sine, then every cosine, f_m = 10000^(-2m/d_model)."""
    freqs = [10000.0 ** (-2 * m / d_model) for m in range(d_model // 2)]
    sines = [math.sin(distance * f) for f in freqs]
    return np.array(sines + [math.cos(distance * f) for f in freqs])


def xl_position_term(params: ViewParams, queries: int, memory: int, head: int) -> np.ndarray:
    """(b) + (d) = (q_i + v) . W_R R_((M+i)-j) / sqrt(d) for every query row i and key j."""
    scheme = xl_scheme(params)
    d = params.head_dim
    w_r = scheme.w_r.detach().double().numpy()  # (d_model, h d)
    v = scheme.v.detach().double().numpy()[head]
    q = example_inputs(params).q[0, head].double().numpy()
    keys = queries + memory
    out = np.zeros((queries, keys))
    for i in range(queries):
        for j in range(keys):
            projected = (sinusoid(memory + i - j, params.d_model) @ w_r)[head * d : (head + 1) * d]
            out[i, j] = (q[i] + v) @ projected / math.sqrt(d)
    return out


def relative_layout(params: ViewParams, queries: int, memory: int, head: int) -> np.ndarray:
    """X[i, c] = (q_i + v) . W_R R_(K-1-c) / sqrt(d): the shift's input, from the definition."""
    term = xl_position_term(params, queries, memory + queries, head)  # distances up to K + Q - 1
    keys = queries + memory
    # term[i, j'] has distance (M + Q + i) - j'; column c needs distance K - 1 - c
    return np.stack([[term[i, memory + queries + i - (keys - 1 - c)] for c in range(keys)]
                     for i in range(queries)])  # fmt: skip


def by_hand(x: np.ndarray) -> dict[str, np.ndarray]:
    """Every step of the shift from the index arithmetic in the module docstring."""
    queries, keys = x.shape
    padded = np.zeros((queries, keys + 1))
    for p in range(queries * (keys + 1)):
        row, col = divmod(p, keys + 1)
        padded[row, col] = 0.0 if col == 0 else x[row, col - 1]
    flat = [padded[p // (keys + 1), p % (keys + 1)] for p in range(queries * (keys + 1))]
    reshaped = np.array(flat).reshape(keys + 1, queries)
    result = np.array([[flat[queries + i * keys + j] for j in range(keys)]
                       for i in range(queries)])  # fmt: skip
    return {"input": x, "padded": padded, "reshaped": reshaped, "sliced": reshaped[1:],
            "result": result}  # fmt: skip


@pytest.mark.parametrize(("n", "memory", "head"), [(8, 0, 1), (8, 3, 0), (5, 12, 1), (1, 0, 0)])
def test_every_step_equals_the_definition_and_the_index_arithmetic(n, memory, head) -> None:
    params = ViewParams(n=n)
    story = shift_story(params, head, memory)
    x = relative_layout(params, n, memory, head)
    expected = by_hand(x)
    for name in STEPS:
        np.testing.assert_allclose(story.step(name).z, expected[name], **CLOSE, err_msg=name)
    i, j = np.indices((n, n + memory))
    assert np.array_equal(story.valid, j <= memory + i)
    assert np.array_equal(story.distance, j - (memory + i))  # j - i, as on every page
    definition = xl_position_term(params, n, memory, head)
    np.testing.assert_allclose(story.definition, definition, **CLOSE)
    result = story.step("result").z
    np.testing.assert_allclose(result[story.valid], definition[story.valid], **CLOSE)


def test_the_wrong_cells_hold_the_pad_then_the_next_rows_leftovers() -> None:
    params, memory = ViewParams(n=6), 2
    story = shift_story(params, 0, memory)
    x = relative_layout(params, 6, memory, 0)
    keys = 6 + memory
    table = wrong_cells(story)
    assert len(table["i"]) == 6 * 5 // 2  # row i has Q - 1 - i wrong cells
    for i, j, holds, value in zip(table["i"], table["j"], table["holds"], table["by the shift"],
                                  strict=True):  # fmt: skip
        assert j > i  # key j, in column M + j
        if j == i + 1:
            assert holds == "zero pad" and value == 0.0
        else:  # the next row's distances that point before the first key, largest first
            column = j - i - 2
            assert holds == f"next row: (q_{i + 1} + v)·W_R R_{keys - 1 - column}"
            np.testing.assert_allclose(value, x[i + 1, column], **CLOSE)


def test_every_cell_is_marked_by_where_its_value_ends_up() -> None:
    n, memory = 7, 3
    story = shift_story(ViewParams(n=n), 0, memory)
    keys = n + memory
    fate = story.step("input").fate
    for i in range(n):
        for c in range(keys):
            distance = keys - 1 - c
            if distance <= memory + i:
                assert fate[i, c] == KEPT
            else:  # a key before the first: row 0's are sliced off, the rest land in row i - 1
                assert fate[i, c] == (DROPPED if i == 0 else WRONG)
    padded = story.step("padded").fate
    assert padded[0, 0] == DROPPED and (padded[1:, 0] == WRONG).all()
    reshaped = story.step("reshaped").fate
    assert (reshaped[0] == DROPPED).all() and not (reshaped[1:] == DROPPED).any()
    result = story.step("result").fate
    assert np.array_equal(result == KEPT, story.valid)


def expected_places(n: int, memory: int, i: int, j: int) -> list[tuple[int, int] | None]:
    """(row, col) of result cell (i, j)'s value in every step, from the index arithmetic."""
    keys = n + memory
    p = n + i * keys + j  # in the padded flat
    row, col = divmod(p, keys + 1)
    source = None if col == 0 else (row, col - 1)
    return [source, (row, col), divmod(p, n), divmod(p - n, n), (i, j)]


@pytest.mark.parametrize(("i", "j"), [(4, 6), (0, 0), (2, 6), (2, 9), (6, 9), (0, 4)])
def test_a_picked_cell_is_found_at_its_place_in_every_step(i: int, j: int) -> None:
    n, memory = 7, 3
    story = shift_story(ViewParams(n=n), 1, memory)
    places = locate(story, i, j)
    for name, place, expected in zip(STEPS, places, expected_places(n, memory, i, j),
                                     strict=True):  # fmt: skip
        if expected is None:
            assert place is None, name
            continue
        assert (place.row, place.col) == expected, name
        assert place.value == story.step("result").z[i, j]


def test_a_click_on_any_cell_maps_to_the_result_cell_showing_its_value() -> None:
    story = shift_story(ViewParams(n=5), 0, 2)
    for index, name in enumerate(STEPS):
        step = story.step(name)
        for row in range(step.shape[0]):
            for col in range(step.shape[1]):
                cell = result_cell_of(story, name, row, col)
                if cell is None:
                    assert step.fate[row, col] == DROPPED
                    continue
                place = locate(story, *cell)[index]
                assert (place.row, place.col) == (row, col)


def test_the_story_is_capped_and_the_check_covers_at_most_check_queries() -> None:
    params = ViewParams(n=1024)
    story = shift_story(params, 0, 4)
    assert story.step("input").shape == (STORY_QUERIES, STORY_QUERIES + 4)
    check = shift_check(params, 4)
    assert check.queries == CHECK_QUERIES
    assert check.max_diff < 1e-4
    assert check.wrong_cells == CHECK_QUERIES * (CHECK_QUERIES - 1) // 2
    assert check.cells == CHECK_QUERIES * (CHECK_QUERIES + 4)
    small = shift_check(ViewParams(n=9, heads=4), 5)
    assert (small.queries, small.wrong_cells, small.cells) == (9, 36, 9 * 14)
    assert small.max_diff < 1e-5


def test_the_shift_page_shows_the_same_transformer_xl_as_the_schemes_pages() -> None:
    from explorer.stories.family import views as family
    from explorer.weights.schemes import SchemeConfig

    params = ViewParams(n=8, mask="causal")
    story = shift_story(params, 1, 0)  # head 1, no memory: the schemes pages' square view
    term = family.position_view(params, SchemeConfig("xl")).term[1]  # (b) + (d), NaN above
    np.testing.assert_allclose(story.definition[story.valid], term[story.valid], rtol=1e-5)
