"""The Transformer-XL shift page: each step's chart against the definition, the wrong cells
hatched, the picked value marked, the memory length from the URL (good and bad), and n = 1024."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from explorer.frame.params import N_MAX, ViewParams
from explorer.stories.shift.rel_shift import STORY_QUERIES
from tests.app.conftest import assert_clean, chart_keys, chart_spec, chart_z, open_page
from tests.app.test_extremes import EXTREMES
from tests.explorer.test_rel_shift_story import relative_layout, xl_position_term

CLOSE = {"rtol": 1e-5, "atol": 1e-5}
STEP_LABELS = ("1 relative", "2 padded", "3 reshaped", "4 sliced", "5 result")


def decode(array) -> np.ndarray:
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), array["dtype"])
    return np.asarray(array)


def badges(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def picked(spec: dict) -> tuple[float, float]:
    (shape,) = [s for s in spec["layout"]["shapes"] if s.get("name") == "picked"]
    return (shape["x0"] + shape["x1"]) / 2, (shape["y0"] + shape["y1"]) / 2


@pytest.mark.parametrize("memory", [0, 3])
def test_the_steps_at_n8_equal_the_definition_and_mark_the_wrong_cells(memory: int) -> None:
    params, keys = ViewParams(n=8), 8 + memory
    query = {"n": "8", "xl_mem": str(memory), "xl_head": "1", "i": "2", "j": "1"}
    first = open_page("rel_shift", **query)
    assert_clean(first)
    assert not first.warning, [w.value for w in first.warning]
    z = chart_z(first, "xl_input")
    np.testing.assert_allclose(z, relative_layout(params, 8, memory, 1), **CLOSE)
    ticks = chart_spec(first, "xl_input")["layout"]["xaxis"]["ticktext"]
    assert ticks == [str(c - (keys - 1)) for c in range(keys)]  # column c: j - i = c - (K - 1)

    at = open_page("rel_shift", xl_step="5 result", **query)
    assert_clean(at)
    result = chart_z(at, "xl_result")
    definition = xl_position_term(params, 8, memory, 1)
    i, j = np.indices(result.shape)
    valid = j <= memory + i
    np.testing.assert_allclose(result[valid], definition[valid], **CLOSE)
    assert (result[j == memory + i + 1] == 0).all()  # the pad, just right of the valid region
    spec = chart_spec(at, "xl_result")
    hatch = next(t for t in spec["data"] if t.get("name") == "wrong")
    assert hatch["fill"] == "toself" and hatch["fillpattern"]["shape"] == "/"
    xs = [x for x in hatch["x"] if x is not None]
    assert len(xs) == 5 * (~valid).sum()  # one closed square per wrong cell
    assert picked(spec) == (memory + 1, 2)  # (x = key j after the M memory keys, y = query i)
    green, orange = badges(at)
    assert green.startswith(":green-badge") and "all 8 queries" in green
    assert f"28 of {8 * keys} cells" in orange  # Q (Q - 1) / 2 wrong cells
    assert any(m.value.startswith("| picked cell") for m in at.markdown)


def test_a_bad_memory_length_in_the_url_warns_and_the_page_works() -> None:
    at = open_page("rel_shift", n="8", xl_mem="abc")
    assert_clean(at)
    (warning,) = [w.value.replace("\\", "") for w in at.warning]
    assert "xl_mem" in warning and "[0, 12]" in warning and "'abc'" in warning
    assert at.slider(key="xl_mem").value == 2
    assert chart_z(at, "xl_input").shape == (8, 10)


def test_n1024_draws_a_capped_story_and_checks_a_window() -> None:
    at = open_page("rel_shift", n="1024", xl_mem="4", xl_step="5 result")
    assert_clean(at)
    assert chart_keys(at) == {"xl_result"}
    assert chart_z(at, "xl_result").shape == (STORY_QUERIES, STORY_QUERIES + 4)
    assert any(f"the first {STORY_QUERIES} of them" in c.value for c in at.caption)
    green = badges(at)[0]
    assert green.startswith(":green-badge") and "first 512 of the 1024 queries" in green


def test_one_download_names_the_view() -> None:
    at = open_page("rel_shift", n="6", xl_mem="3")
    assert_clean(at)
    (button,) = at.get("download_button")
    text = button.proto.help
    assert text.startswith("relpos_rel-shift_n6_k2_d16_h2_seed0_mask-none_xl-mem3_xl-head0")
    for name in ("step1_relative", "step5_result", "definition", "wrong_cells"):
        assert name in text, text


@pytest.mark.parametrize("name", [*EXTREMES, "largest n"])
def test_extreme_views_render(name: str) -> None:
    query = EXTREMES.get(name, {"n": str(N_MAX), "d_model": "128", "heads": "8"})
    at = open_page("rel_shift", xl_step="5 result", xl_mem="12", **query)
    assert_clean(at)
    n = ViewParams(n=int(query.get("n", 8)), text=query.get("text", "")).length
    queries = min(n, STORY_QUERIES)
    assert chart_z(at, "xl_result").shape == (queries, queries + 12)
    assert badges(at)[0].startswith(":green-badge"), badges(at)


def picked_shapes(spec: dict) -> list[dict]:
    return [s for s in spec["layout"].get("shapes", []) if s.get("name") == "picked"]


def test_with_no_pair_picked_no_cell_is_marked_and_the_page_says_how_to_pick() -> None:
    at = open_page("rel_shift", n="8", xl_step="5 result")
    assert_clean(at)
    assert at.number_input(key="i").value is None and at.number_input(key="j").value is None
    assert not picked_shapes(chart_spec(at, "xl_result"))
    assert any("No pair picked" in c.value and "sidebar" in c.value for c in at.caption)
    assert not any(m.value.startswith("| picked cell") for m in at.markdown)


@pytest.mark.parametrize(("memory", "i", "j"), [(0, 5, 2), (3, 5, 2), (3, 1, 4), (12, 7, 7)])
def test_the_shared_pair_is_marked_at_its_key_after_the_memory(memory, i, j) -> None:
    """The sidebar's (i, j) is query i and key j of the sequence: after M memory keys, key j is
    column M + j of the result, labelled j; its distance is j - i, as on every page."""
    at = open_page("rel_shift", n="8", xl_mem=str(memory), xl_step="5 result", i=str(i), j=str(j))
    assert_clean(at)
    spec = chart_spec(at, "xl_result")
    (shape,) = picked_shapes(spec)
    x, y = (shape["x0"] + shape["x1"]) / 2, (shape["y0"] + shape["y1"]) / 2
    assert (x, y) == (memory + j, i)
    assert spec["layout"]["xaxis"]["ticktext"][memory + j] == str(j)
    z = chart_z(at, "xl_result")
    definition = xl_position_term(ViewParams(n=8), 8, memory, 0)
    if j <= i:  # a right cell: the shift gives the definition's (b) + (d) of (i, j)
        np.testing.assert_allclose(z[i, memory + j], definition[i, memory + j], **CLOSE)
    table = next(m.value for m in at.markdown if m.value.startswith("| picked cell"))
    assert f"| ({i}, {j}) |" in table and f"| distance j - i | {j - i} |" in table


def test_a_pair_beyond_the_queries_drawn_marks_nothing_and_says_why() -> None:
    at = open_page("rel_shift", n="30", xl_step="5 result", i="20", j="3")
    assert_clean(at)
    assert not picked_shapes(chart_spec(at, "xl_result"))
    assert any(
        "(20, 3)" in c.value and f"queries and keys 0-{STORY_QUERIES - 1}" in c.value
        for c in at.caption
    )
