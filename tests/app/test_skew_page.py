"""The Skew page's story: every step's values against relpos_core, the followed value at its
place in every step (positions worked out here from the skew's definition), the variant that
follows the sidebar mask, and the large-n view."""

from __future__ import annotations

import base64
import math
import re

import numpy as np
import pytest

import relpos_core as rc
from explorer.frame.params import DISPLAY_MAX, ViewParams
from explorer.frame.tex import plain
from explorer.stories.shift.skew import skew_story
from explorer.weights.example import example_inputs
from tests.app.conftest import assert_clean, chart_keys, chart_spec, chart_z, open_page

CLOSE = {"rtol": 1e-5, "atol": 1e-5}
STEP_OPTIONS = {1: "input", 2: "padded", 3: "reshaped", 4: "result"}
NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)"  # a number as the page writes it (.4g)
KINDS = {True: "masked (causal)", False: "unmasked (two-sided)"}


def decode(array) -> np.ndarray:
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), array["dtype"])
    return np.asarray(array)


def relative_input(params: ViewParams, head: int, masked: bool) -> np.ndarray:
    """Q Er^T / sqrt(d) of one head: row i, column c = distance c - (n - 1)."""
    inputs = example_inputs(params)
    length = params.length
    e_r = rc.skew_embeddings(inputs.table_k, length)
    e_r = e_r[:length] if masked else e_r
    return (inputs.q @ e_r.T)[0, head].numpy() / math.sqrt(params.head_dim)


def definition(params: ViewParams, head: int) -> np.ndarray:
    """q_i · w^K_clip(j - i, k) / sqrt(d), one pair at a time (relpos_core's loop)."""
    inputs = example_inputs(params)
    rel = rc.relative_logits(inputs.q, inputs.table_k, method="loop")[0, head].numpy()
    return rel / math.sqrt(params.head_dim)


def expected_cells(length: int, i: int, j: int, masked: bool) -> dict[str, tuple[int, int]]:
    """(row, col) of result cell (i, j)'s value in every step, from the skew's definition.

    Result (i, j) = input (i, j - i + L - 1). The pad column goes left (masked) or right
    (unmasked); the reshape keeps row-major order; the slice drops row 0 (masked) or keeps
    [:L, L-1:] (unmasked).
    """
    c = j - i + length - 1
    if masked:
        padded = (i, c + 1)
        flat = padded[0] * (length + 1) + padded[1]
        reshaped = divmod(flat, length)
    else:
        padded = (i, c)
        flat = padded[0] * 2 * length + padded[1]
        reshaped = divmod(flat, 2 * length - 1)
    return {"input": (i, c), "padded": padded, "reshaped": reshaped, "result": (i, j)}


def picked_cell(spec: dict) -> tuple[float, float]:
    """(x, y) centre of the shape named "picked" (exactly one)."""
    shapes = [s for s in spec["layout"].get("shapes", []) if s.get("name") == "picked"]
    assert len(shapes) == 1, spec["layout"].get("shapes")
    shape = shapes[0]
    return (shape["x0"] + shape["x1"]) / 2, (shape["y0"] + shape["y1"]) / 2


def open_story(step: int, masked: bool, i: int, j: int, **query: str):
    words = ("relative", "padded", "reshaped", "sliced")
    at = open_page(
        "skew", skew_kind=KINDS[masked], skew_step=f"{step} {words[step - 1]}",
        i=str(i), j=str(j), **query,
    )  # fmt: skip
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    return at


@pytest.mark.parametrize("masked", [True, False])
def test_every_step_equals_relpos_core_and_the_result_the_definition(masked: bool) -> None:
    params = ViewParams(n=6, k=2, heads=2)
    name = "masked" if masked else "unmasked"
    x = relative_input(params, 1, masked)
    rel = definition(params, 1)
    valid = np.tril(np.ones((6, 6), dtype=bool)) if masked else np.ones((6, 6), dtype=bool)
    for step in (1, 4):
        at = open_story(step, masked, 3, 1, n="6", k="2", skew_head="1")
        z = chart_z(at, f"skew_{name}_{STEP_OPTIONS[step]}")
        if step == 1:
            np.testing.assert_allclose(z, x, **CLOSE)
            spec = chart_spec(at, f"skew_{name}_input")
            r_axis = decode(spec["data"][0]["x"])  # the first step's axis is the distance r
            np.testing.assert_array_equal(r_axis, np.arange(-5, 1 if masked else 6))
            assert [int(v) for v in decode(spec["layout"]["xaxis"]["tickvals"])] == list(r_axis)
        else:
            np.testing.assert_allclose(z[valid], rel[valid], **CLOSE)
            if masked:
                assert not np.allclose(z[~valid], rel[~valid])  # the cells the mask removes
    badge = [m.value for m in at.markdown if "max |difference|" in m.value]
    assert len(badge) == 1 and "green" in badge[0], badge


@pytest.mark.parametrize(
    ("masked", "i", "j"), [(True, 4, 1), (True, 5, 5), (False, 2, 5), (False, 5, 0)]
)
def test_the_picked_value_is_highlighted_at_its_place_in_every_step(masked, i, j) -> None:
    params = ViewParams(n=6, k=2)
    name = "masked" if masked else "unmasked"
    value = definition(params, 0)[i, j]
    for step, step_name in STEP_OPTIONS.items():
        at = open_story(step, masked, i, j, n="6", k="2")
        spec = chart_spec(at, f"skew_{name}_{step_name}")
        trace = spec["data"][0]
        x, y = decode(trace["x"]), decode(trace["y"])
        cx, cy = picked_cell(spec)
        row, col = int(np.flatnonzero(y == cy)[0]), int(np.flatnonzero(x == cx)[0])
        assert (row, col) == expected_cells(6, i, j, masked)[step_name], step_name
        z = chart_z(at, f"skew_{name}_{step_name}")
        np.testing.assert_allclose(z[row, col], value, **CLOSE)
        table = next(m.value for m in at.markdown if "| step | where | value |" in m.value)
        assert table.count(f"{value:.4g}") == 4  # the same value in all four steps


def test_a_pad_cell_above_the_diagonal_is_followed_to_the_pad() -> None:
    i, j = 2, 3  # masked result (i, i + 1) holds the pad of the next row
    for step, step_name in STEP_OPTIONS.items():
        at = open_story(step, True, i, j, n="6")
        spec = chart_spec(at, f"skew_masked_{step_name}")
        shapes = [s for s in spec["layout"].get("shapes", []) if s.get("name") == "picked"]
        if step_name == "input":
            assert not shapes  # the pad does not exist before step 2
            continue
        x, y = picked_cell(spec)
        expected = {"padded": (-6, i + 1), "reshaped": (i + 1, i + 1), "result": (j, i)}
        assert (x, y) == expected[step_name]  # padded: the pad column (r = -L) of row i + 1
    assert any("holds the pad zero" in box.value for box in at.info)


def test_the_variant_follows_the_sidebar_mask_unless_overridden() -> None:
    causal = open_page("skew", n="5", mask="causal")
    assert_clean(causal)
    assert chart_z(causal, "skew_masked_input").shape == (5, 5)
    none = open_page("skew", n="5", mask="padding")
    assert chart_z(none, "skew_unmasked_input").shape == (5, 9)
    override = open_page("skew", n="5", mask="causal", skew_kind="unmasked (two-sided)")
    assert chart_z(override, "skew_unmasked_input").shape == (5, 9)


def test_reshaped_step_outlines_the_slice_and_greys_the_dropped_row() -> None:
    at = open_story(3, True, 3, 1, n="6")
    spec = chart_spec(at, "skew_masked_reshaped")
    veil = next(t for t in spec["data"] if t.get("name") == "greyed")
    greyed = np.isfinite(decode(veil["z"]).reshape(7, 6))
    assert greyed[0].all() and not greyed[1:].any()  # row 0 is dropped, the rest kept
    kept = [s for s in spec["layout"]["shapes"] if s.get("name") == "kept"]
    assert len(kept) == 1 and kept[0]["type"] == "path"
    assert "M-0.5,0.5H5.5" in kept[0]["path"] and "M-0.5,6.5H5.5" in kept[0]["path"]


@pytest.mark.parametrize("masked", [True, False])
def test_large_n_draws_an_image_and_an_exact_inset(masked: bool) -> None:
    n, win = 1200, 600
    i, j = win + 300, win + 297
    name = "masked" if masked else "unmasked"
    at = open_story(4, masked, i, j, n=str(n), win=str(win))
    assert {f"skew_{name}_result", "skew_inset"} <= chart_keys(at)
    image = chart_spec(at, f"skew_{name}_result")
    assert [t["type"] for t in image["data"]] == ["image", "scatter"]  # the PNG, its colour bar
    assert picked_cell(image) == (j, i)
    params = ViewParams(n=n, win=win)
    inputs = example_inputs(params)
    block = slice(win, win + DISPLAY_MAX)
    rel = rc.relative_logits(inputs.scaled_q, inputs.table_k, method="bucket")[0, 0, block, block]
    inset = chart_spec(at, "skew_inset")
    x, y = decode(inset["data"][0]["x"]), decode(inset["data"][0]["y"])
    z = chart_z(at, "skew_inset")
    expected = rel.numpy()[np.ix_(y - win, x - win)]
    valid = (x[None, :] <= y[:, None]) if masked else np.ones(z.shape, dtype=bool)
    np.testing.assert_allclose(z[valid], expected[valid], rtol=1e-4, atol=1e-5)
    assert picked_cell(inset) == (j, i)
    story = skew_story(params, 0, masked)  # the image's source values
    result = story.steps[-1].z
    np.testing.assert_allclose(result[story.valid], rel.numpy()[story.valid], rtol=1e-4, atol=1e-5)
    assert story.valid.sum() == (DISPLAY_MAX * (DISPLAY_MAX + 1) // 2 if masked else DISPLAY_MAX**2)


def test_a_picked_cell_outside_the_sequence_warns_and_falls_back() -> None:
    at = open_page("skew", n="6", i="99", j="1")
    assert not at.exception
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert any(
        "URL parameter i: must be empty or an integer in [0, 5], got '99'" in w for w in warned
    ), warned
    assert at.number_input(key="i").value is None
    assert any("Following (i, j) = (3, 1)" in c.value for c in at.caption)


def test_one_download_names_the_view_and_holds_every_step() -> None:
    at = open_page("skew", n="6", skew_head="1")
    assert_clean(at)
    (button,) = at.get("download_button")
    text = button.proto.help
    assert text.startswith("relpos_skew_n6_k2_d16_h2_seed0_mask-none_kind-follows-the-mask_head1")
    for name in ("step1_relative", "step2_padded", "step3_reshaped", "step4_sliced", "definition"):
        assert name in text, text


def test_the_picked_cell_names_the_table_vector_by_its_distance() -> None:
    at = open_page("skew", n="6", k="1", i="4", j="1")
    assert_clean(at)
    formulas = " ".join(plain(item.value) for item in at.latex)
    assert r"q_{4} \cdot w^K_{-1}" in formulas  # j - i = -3, clipped to -1: the edge vector
    assert any("is $w^K_{-1}$, stored as table row 0" in c.value for c in at.caption)


def shown_number(pattern: str, texts) -> float:
    """The first number ``pattern`` (one group) finds in ``texts``."""
    for text in texts:
        match = re.search(pattern, text)
        if match:
            return float(match.group(1))
    raise AssertionError(f"{pattern!r} not in {list(texts)}")


@pytest.mark.parametrize(
    ("i", "j", "query"),
    [(4, 2, {"weights": "trained"}), (5, 0, {"n": "6", "k": "1"}), (3, 3, {"weights": "trained"})],
)
def test_the_skew_number_of_a_pair_is_the_logits_number_and_the_definition(i, j, query) -> None:
    """The relative logit q_i · w_clip(j - i, k) / sqrt(d), the same on /skew and /logits."""
    skew = open_page("skew", i=str(i), j=str(j), **query)
    logits = open_page("logits", i=str(i), j=str(j), **query)
    assert_clean(skew)
    assert_clean(logits)
    on_skew = shown_number(r"&= " + NUMBER + r"\\end\{aligned\}", skew_latex(skew))
    card = r"a\^K_\{I,J\}\}\{\\sqrt\{\d+\}\} = [-\d.e+]+ \+ \(?" + NUMBER
    on_logits = shown_number(card.replace("I", str(i)).replace("J", str(j)), skew_latex(logits))
    assert on_skew == on_logits
    params = view_params(query)
    inputs = example_inputs(params)
    k, d = params.k, params.head_dim
    w = inputs.table_k[max(-k, min(k, j - i)) + k].double()
    by_definition = float(inputs.q[0, 0, i].double() @ w) / math.sqrt(d)
    assert on_skew == float(f"{by_definition:.4g}")
    definition_caption = shown_number(r"\$ / √d = " + NUMBER, captions(skew))
    assert definition_caption == on_skew


def test_the_note_groups_the_distances_that_read_the_edge_row() -> None:
    """n = 40, k = 2: every j - i <= -2 reads w_-2; the note's means are over the result's
    valid cells, grouped by clip(j - i, k), against brute force on the chart's values."""
    at = open_story(4, True, 30, 2, n="40", weights="trained")
    z = chart_z(at, "skew_masked_result")
    i, j = np.indices(z.shape)
    groups = {}
    for a, b in zip(*np.nonzero(j <= i), strict=True):
        groups.setdefault(max(-2, min(2, int(b - a))), []).append(float(z[a, b]))
    means = {g: (np.mean(v), len(v)) for g, v in groups.items()}
    note = next(box.value for box in at.info if "valid cells" in box.value).replace("\\", "")
    assert "-39" not in note
    for g in (max(means, key=lambda g: means[g][0]), min(means, key=lambda g: means[g][0])):
        where = "j - i <= -2, which all read w_-2" if g == -2 else f"j - i = {g}"
        mean, count = means[g]
        assert f"{where} (mean {mean:.3g} over {count:,} cells)" in note, note


def test_a_large_step_drops_the_numbers_in_its_cells_and_says_so() -> None:
    small = open_story(1, True, 5, 2, n="8")
    large = open_story(1, True, 30, 2, n="40")
    written = [t for t in chart_spec(small, "skew_masked_input")["data"] if t.get("mode") == "text"]
    assert written and len(written[0]["text"]) == 64
    spec = chart_spec(large, "skew_masked_input")
    assert not [t for t in spec["data"] if t.get("mode") == "text"]
    cells = next(t for t in spec["data"] if t.get("name") == "cells")
    assert len(cells["text"]) == 40 * 40 and "r = -28" in " ".join(cells["text"])  # hover keeps r
    assert any("too small" in c.value and "hover" in c.value for c in large.caption)


def test_the_skew_page_writes_n_and_d() -> None:
    at = open_page("skew", n="8")
    # the page itself: the sidebar's glossary names L and the papers' symbols on purpose
    text = " ".join([*skew_latex(at), *captions(at), *(m.value for m in at.main.markdown)])
    assert not re.search(r"\bL\b|d_z|d_k", text.replace("Huang et al. write $L$", "")), text
    assert "Huang et al. write $L$" in text


def skew_latex(at) -> list[str]:
    return [plain(item.value) for item in at.latex]


def captions(at) -> list[str]:
    return [c.value for c in at.caption]


def view_params(query: dict) -> ViewParams:
    trained = query.get("weights") == "trained"
    extra = {"d_model": 128, "heads": 4, "mask": "causal"} if trained else {}
    return ViewParams(
        n=int(query.get("n", 8)), k=int(query.get("k", 2)), weights=query.get("weights", "random"),
        **extra,
    )  # fmt: skip
