"""Sentences and layouts at the edges (n = 1 and 2, k = 0 and past n, layer 1, scheme A = B,
both weights): each note checked against the numbers drawn under it, or against the library."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from explorer.figures.ticks import CHAR_EM
from explorer.frame.budget import REQUEST_BUDGET_BYTES, format_bytes
from explorer.frame.tex import plain
from relpos_core.schemes import make_scheme
from relpos_core.schemes.catalogue import scheme_names
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of, panel_positions, panel_traces, panel_z, trace_z
from tests.app.test_trained_views import model_forward
from tests.explorer.head_brute import assert_note_reads, brute_reading

# A count of one with a plural noun, as the notes wrote "1 cells" and "1 characters".
ONE_PLURAL = re.compile(
    r"(?<![\d.,])1 (cells|characters|positions|queries|keys|rows|pairs|tokens|distances)\b"
)


def texts(at) -> list[str]:
    """Every sentence a learner reads on the page, markdown escapes removed."""
    parts = [*at.info, *at.caption, *at.markdown, *at.warning, *at.success]
    return [p.value.replace("\\", "") for p in parts]


def note(at, start: str) -> str:
    return next(t for t in texts(at) if t.startswith(start))


# ---- every page's notes at the edge settings -------------------------------------------------

EDGES = [
    {"n": "1"},
    {"n": "2", "mask": "causal"},
    {"n": "1", "weights": "trained"},
    {"n": "2", "weights": "trained", "layer": "1"},
    {"n": "5", "k": "0"},
    {"n": "3", "k": "9"},
]
NOTED = ("multihead", "lookup", "logits", "attention", "skew", "rel_shift", "family", "compare")


def head_notes_read_the_weights(at, page: str) -> None:
    """The head notes under every weights map say what the drawn weights hold."""
    if page == "attention":
        said = note(at, "Head 0")
        assert_note_reads(said, brute_reading(panel_z(at, "attention_weights").astype(float)))
    if page == "compare":
        first, second = note(at, "A, ").split(" B, ")
        for panel, part in enumerate((first, second)):
            weights = panel_z(at, "compare_weights", panel).astype(float)
            assert_note_reads(part, brute_reading(weights))


def band_note_reads_the_term(at) -> None:
    """The relative term's note: a row it says changes does change, and a constant run it
    names is constant, on head 0's drawn term."""
    said = next(t for t in texts(at) if "row" in t and ("w_0" in t or "term" in t))
    term = panel_z(at, "logits_heads", 0).astype(float)
    shown = [row[np.isfinite(row)] for row in term]
    if "changes along each row" in said:
        rows = [r for r in shown if len(r) > 1]
        assert rows and all(np.ptp(r) > 0 for r in rows), said
        if "two keys or more" not in said:
            assert all(len(r) > 1 for r in shown), said
    if "from row to row" in said:
        assert len(shown) > 1, said
    if said.startswith("One colour per row"):
        assert all(np.ptp(r) < 1e-5 for r in shown if len(r)), said


@pytest.mark.parametrize("query", EDGES, ids=lambda q: "&".join(f"{k}={v}" for k, v in q.items()))
@pytest.mark.parametrize("page", NOTED)
def test_every_note_at_the_edges_reads_the_data_under_it(page: str, query: dict) -> None:
    """No count of one takes a plural; the head notes and the relative term's note say what
    the drawn numbers hold (k = 0: one colour per row; past n: every row that sees two keys
    changes along it; n = 1: one cell, neither)."""
    at = open_page(page, **query)
    assert_clean(at)
    for sentence in texts(at):
        assert not ONE_PLURAL.search(sentence), sentence
    head_notes_read_the_weights(at, page)
    if page == "logits":
        band_note_reads_the_term(at)


def test_compare_with_a_equal_to_b_reads_both_panels_alike() -> None:
    at = open_page("compare", n="6", compare_a="alibi", compare_b="alibi")
    assert_clean(at)
    first, second = note(at, "A, ").split(" B, ")
    assert first.split(": ", 1)[1] == second.split(": ", 1)[1]
    head_notes_read_the_weights(at, "compare")


# ---- Attention: repeated tokens ----------------------------------------------------------

TEXT = "the tree sees a heart, the sea, the rest; ok, no; ok"  # 11 repeated characters, a space


def copies_apart(x: torch.Tensor, text: str) -> float:
    """The largest distance between two copies of one character's vectors, any head."""
    x = x.reshape(-1, *x.shape[-2:]).double()  # (h, n, d)
    worst = 0.0
    for char in set(text):
        at = [i for i, c in enumerate(text) if c == char]
        if len(at) > 1:
            worst = max(worst, float(torch.cdist(x[:, at], x[:, at]).max()))
    return worst


@pytest.mark.parametrize("layer", [0, 1])
def test_the_repeated_tokens_note_measures_the_layers_queries_keys_and_values(layer) -> None:
    """Identical q, k and v only where the model's own layer gives them; every repeated
    character quoted (a space as ' '), the list ending with how many more."""
    at = open_page("attention", weights="trained", k="4", layer=str(layer), text=TEXT)
    assert_clean(at)
    said = note(at, "Repeated tokens")
    seen = model_forward("shaw-k4", TEXT)[layer]
    q, k, v = (copies_apart(seen[name], TEXT) for name in "qkv")
    identical = max(q, k, v) < 1e-5
    assert bool(re.search(r"\) have identical queries, keys and values", said)) == identical, said
    if not identical:
        assert f"{q:.3g} apart in q, {k:.3g} in k and {v:.3g} in v" in said, said
    repeated = [c for c in dict.fromkeys(TEXT) if TEXT.count(c) > 1]
    assert len(repeated) > 8 and " " in repeated
    listed = ", ".join(f"'{c}'" for c in repeated[:8])
    assert f"({listed} and {len(repeated) - 8} more)" in said, said


# ---- Transformer-XL shift: the pair not drawn ------------------------------------------------


@pytest.mark.parametrize(("i", "j"), [(0, 36), (20, 3), (20, 30)])
def test_a_pair_off_the_shift_steps_names_what_is_not_drawn(i: int, j: int) -> None:
    at = open_page("rel_shift", n="37", xl_step="5 result", xl_mem="2", i=str(i), j=str(j))
    assert_clean(at)
    rows, cols = panel_positions(at, "xl_result")
    keys = cols - 2  # after the two memory keys
    said = next(t for t in texts(at) if f"({i}, {j}) is not drawn" in t)
    assert f"queries and keys 0-{rows - 1}" in said and rows == keys, said
    drawn = {"query i": i < rows, "key j": j < keys}
    for name, value in (("query i", i), ("key j", j)):
        if drawn[name] and not all(drawn.values()):
            assert f"{name} = {value} is drawn" in said, said
        elif not drawn[name]:
            assert f"{name} = {value}" in said and f"{name} = {value} is drawn" not in said


# ---- Position schemes: which terms carry 1/sqrt(d) --------------------------------------------


def builds_on_the_query(name: str) -> bool:
    """Whether a scheme's position term changes with q (a product with it, scaled like the
    content term) or is a bias added as it is."""
    scheme = make_scheme(name, heads=1, head_dim=8, seed=0)
    gen = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 1, 5, 8, generator=gen) for _ in range(2))
    once, twice = (sum(scheme.position_terms(x, k, False, 0).values()) for x in (q, 2 * q))
    return not torch.allclose(once, twice)


def test_position_schemes_says_which_terms_are_divided_by_sqrt_d() -> None:
    from relpos_core.schemes.catalogue import scheme_label

    at = open_page("family", n="6")
    assert_clean(at)
    intro = next(t for t in texts(at) if "position term" in t and "√d" in t)
    divided, undivided = intro.split("divided by √d;", 1)
    for name in scheme_names():
        label = scheme_label(name)
        where = divided if builds_on_the_query(name) else undivided
        assert re.search(rf"\b{re.escape(label)}\b", where), (name, intro)
    assert "1/√d applied" not in " ".join(texts(at))


def test_a_profile_of_one_distance_is_drawn() -> None:
    """n = 1: each scheme's profile is one point, which a line alone does not draw."""
    at = open_page("family", n="1")
    assert_clean(at)
    for trace in chart_spec(at, "family_profile")["data"]:
        if trace.get("hoverinfo") == "skip" or "x" not in trace:
            continue
        points = int(np.isfinite(array_of(trace["y"])).sum())
        assert points > 1 or "markers" in trace["mode"], trace["name"]


# ---- layouts -----------------------------------------------------------------------------------


def panel_px(spec: dict, trace: dict) -> tuple[float, float]:
    """(width, height) in pixels of the axes a panel trace sits on, from the figure's layout."""
    layout = spec["layout"]
    margin = layout["margin"]
    plot_w = layout["width"] - margin["l"] - margin["r"]
    plot_h = layout["height"] - margin["t"] - margin["b"]
    x = layout["xaxis" + trace.get("xaxis", "x")[1:]]["domain"]
    y = layout["yaxis" + trace.get("yaxis", "y")[1:]]["domain"]
    return plot_w * (x[1] - x[0]), plot_h * (y[1] - y[0])


@pytest.mark.parametrize(
    ("page", "keys"),
    [("lookup", ("distance", "index")), ("absolute", ("encoding_similarity", "relative_index"))],
)
def test_square_maps_are_drawn_square(page: str, keys: tuple[str, ...]) -> None:
    at = open_page(page, n="37", k="5")
    assert_clean(at)
    for key in keys:
        spec = chart_spec(at, key)
        for trace in panel_traces(at, key):
            rows, cols = trace_z(trace).shape
            assert rows == cols == 37
            width, height = panel_px(spec, trace)
            assert math.isclose(width, height, rel_tol=0.02), (key, width, height)


@pytest.mark.parametrize("k", ["5", "64"])
def test_lookup_labels_table_rows_one_way_at_every_k(k: str) -> None:
    """The tables' rows are named by table row r + k, the index map's values, at every k."""
    at = open_page("lookup", n="8", k=k)
    assert_clean(at)
    spec = chart_spec(at, "tables")
    y = spec["layout"]["yaxis"]
    shown = [str(int(v)) for v in array_of(y["tickvals"])]
    assert list(y["ticktext"]) == shown, y["ticktext"]
    assert "table row" in y["title"]["text"]
    top = int(panel_z(at, "index").max())
    assert int(array_of(y["tickvals"])[-1]) <= 2 * int(k) and top <= 2 * int(k)


def colourbar_left_px(spec: dict) -> float:
    layout = spec["layout"]
    plot_w = layout["width"] - layout["margin"]["l"] - layout["margin"]["r"]
    bar = next(t for t in spec["data"] if t.get("marker", {}).get("showscale"))
    return layout["margin"]["l"] + plot_w * bar["marker"]["colorbar"].get("x", 1.02)  # plotly's


def last_label_right_px(spec: dict) -> float:
    """Where the last slanted key label ends: its tick, plus its width at 45 degrees."""
    layout = spec["layout"]
    plot_w = layout["width"] - layout["margin"]["l"] - layout["margin"]["r"]
    x = layout["xaxis"]
    low, high = x["range"]
    tick = array_of(x["tickvals"])[-1]
    at = x["domain"][0] + (x["domain"][1] - x["domain"][0]) * (tick - low) / (high - low)
    width = CHAR_EM * x["tickfont"]["size"] * len(x["ticktext"][-1]) / math.sqrt(2)
    return layout["margin"]["l"] + plot_w * at + width


def test_a_long_key_label_stays_clear_of_the_colour_bar() -> None:
    at = open_page("attention", text="a b c supercalifragilistic expialidocious")
    assert_clean(at)
    spec = chart_spec(at, "attention_weights")
    assert spec["layout"]["xaxis"]["tickangle"] == -45
    assert colourbar_left_px(spec) > last_label_right_px(spec)


def test_skew_writes_the_table_row_in_a_formula_of_its_own() -> None:
    """k = 64: the pair card's distance and table row are two short formulas, not one line
    that a narrow column cuts ('= 6' for '= 62')."""
    at = open_page("skew", n="8", k="64", i="5", j="3")
    assert_clean(at)
    formulas = [plain(item.value) for item in at.latex]
    row = [f for f in formulas if r"\operatorname{clip}(-2, 64) + 64 = 62" in f]
    assert row and all("j - i" not in f for f in row), formulas


def test_compare_writes_the_picked_pairs_distance() -> None:
    at = open_page("compare", n="7", i="2", j="5")
    assert_clean(at)
    assert any("(i, j) = (2, 5), j - i = 3" in t for t in texts(at)), texts(at)


# ---- Speed & memory -----------------------------------------------------------------------------


def test_the_speed_memory_note_reads_the_curves_drawn() -> None:
    at = open_page("speed")
    assert_clean(at)
    said = note(at, "At n = ")
    curves = {t["name"]: t for t in chart_spec(at, "speed_memory")["data"] if "x" in t}
    a_k, er = curves["einsum"], curves["skew"]
    n, bytes_a_k = array_of(a_k["x"])[-1], array_of(a_k["y"])[-1]
    bytes_er = array_of(er["y"])[-1]
    assert said.startswith(
        f"At n = {int(n):,} the materialized a^K needs {format_bytes(bytes_a_k)}"
    )
    assert f"{bytes_a_k / bytes_er:,.0f} times the skew's Er ({format_bytes(bytes_er)})" in said
    over = array_of(a_k["x"])[np.flatnonzero(array_of(a_k["y"]) > REQUEST_BUDGET_BYTES)[0]]
    assert f"budget from n = {int(over):,}" in said, said


def test_the_timing_note_reads_the_largest_n_measured() -> None:
    from explorer.stories.speed.notes import timing_note

    rows = [
        {"method": "sdpa", "n": 512, "median_ms": 2.0},
        {"method": "skew", "n": 512, "median_ms": 8.0},
        {"method": "einsum", "n": 512, "median_ms": 40.0},
        {"method": "einsum", "n": 256, "median_ms": 1.0},  # smaller n: not read
    ]
    said = timing_note(rows)
    assert said.startswith("At n = 512, the largest measured, skew is the fastest")
    assert "5.0 times faster than einsum (40 ms)" in said and "4.0 times less than skew" in said
