"""One picked pair (i, j), URL-bound, drawn on every figure of every page with its numbers."""

from __future__ import annotations

import pytest

from explorer.frame.params import ViewParams
from explorer.frame.tex import plain
from explorer.weights.example import example_inputs
from tests.app.conftest import PAGES, assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import panel_z

QUERY, KEY, K = 5, 3, 2  # j - i = -2: table row clip(-2, 2) + 2 = 0


def outlines(spec: dict) -> dict[str, set[tuple[float, float, float, float]]]:
    """Axis -> the (x0, x1, y0, y1) of every outline of the picked pair on it."""
    out: dict[str, set] = {}
    for shape in spec["layout"].get("shapes", []):
        if shape.get("name") == "picked pair":
            box = (shape["x0"], shape["x1"], shape["y0"], shape["y1"])
            out.setdefault(shape["xref"], set()).add(box)
    return out


def holds(meta: dict, axis: int, position: int) -> bool:
    low, high = meta["rows" if axis == 0 else "cols"]
    return low <= position <= high


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_outlines_the_pair_where_its_axes_hold_it(page: str) -> None:
    at = open_page(page, n="8", k=str(K), i=str(QUERY), j=str(KEY))
    assert_clean(at)
    expected_anywhere = 0
    for key in chart_keys(at):
        spec = chart_spec(at, key)
        drawn = outlines(spec)
        for trace in spec["data"]:
            meta = trace.get("meta")
            if not isinstance(meta, dict) or "axes" not in meta:
                continue
            ref = trace.get("xaxis", "x")
            clip = meta.get("clip", K)  # a trained table's own k, else the sidebar's
            marks = {"i": QUERY, "j": KEY, "row": max(-clip, min(clip, KEY - QUERY)) + clip}
            within = meta.get("within", {})
            if any(not lo <= marks[s] <= hi for s, (lo, hi) in within.items()):
                marks = {}  # the pair is not in the sequence this panel belongs to
            row, col = (marks.get(symbol) for symbol in meta["axes"])
            row_in = row is not None and holds(meta, 0, row)
            col_in = col is not None and holds(meta, 1, col)
            (r0, r1), (c0, c1) = meta["rows"], meta["cols"]
            if row_in and col_in:  # the cell itself
                want = {(col - 0.5, col + 0.5, row - 0.5, row + 0.5)}
            elif row_in and col is None:  # the row: a table row, a key's row of a^K_i
                want = {(c0 - 0.5, c1 + 0.5, row - 0.5, row + 0.5)}
            elif col_in and row is None:
                want = {(col - 0.5, col + 0.5, r0 - 0.5, r1 + 0.5)}
            else:
                want = set()
            assert drawn.get(ref, set()) == want, (key, ref, meta, drawn.get(ref))
            expected_anywhere += bool(want)
    # basics, rel_shift, skew: their figures index other sequences; long_context: distances,
    # rotary pairs and lengths, never one (i, j)
    if page not in ("basics", "rel_shift", "skew", "long_context"):
        assert expected_anywhere, f"no figure of {page} outlined the pair"


def test_the_table_row_outlined_is_clip_plus_k_on_the_lookup_page() -> None:
    at = open_page("lookup", n="9", k="3", i="1", j="8")  # j - i = 7: beyond k, the edge row
    assert_clean(at)
    spec = chart_spec(at, "tables")
    rows = {(s["y0"] + s["y1"]) / 2 for s in spec["layout"]["shapes"] if s["name"] == "picked pair"}
    assert rows == {min(8 - 1, 3) + 3} == {6}
    index = panel_z(at, "index")
    assert index[1, 8] == 6  # the index table's value at the pair is that row
    text = card(at)  # the table part only: the page has no head, so no logit or weight
    assert r"\operatorname{clip}(7, 3) + 3 = 6" in text and r"\alpha" not in text


def texts(items) -> list[str]:
    """Captions or warnings as shown: markdown's escapes removed."""
    return [item.value.replace("\\", "") for item in items]


def card(at) -> str:
    return " ".join(plain(item.value) for item in at.latex)


def test_the_numbers_are_the_values_the_figures_draw() -> None:
    query = {"n": "8", "k": str(K), "heads": "2", "i": str(QUERY), "j": str(KEY)}
    params = ViewParams(n=8, k=K, heads=2, weights="random")
    at = open_page("attention", **query)
    assert_clean(at)
    weight = float(panel_z(at, "attention_weights")[QUERY, KEY])
    logit = float(panel_z(at, "attention_logits")[QUERY, KEY])
    text = card(at)
    assert rf"\sum_{{j'}} \exp(e_{{{QUERY},j'}})}} = {weight:.4g}" in text
    assert f"= {logit:.4g}" in text  # e_ij = content + relative, as the logits panel draws it
    at = open_page("logits", **query)
    assert_clean(at)
    content = float(panel_z(at, "logits_head", 0)[QUERY, KEY])
    relative = float(panel_z(at, "logits_head", 1)[QUERY, KEY])
    text = card(at)
    assert f"= {content:.4g} + " in text and (
        f"+ {relative:.4g} =" in text or f"+ ({relative:.4g}) =" in text
    )
    # a^K_ij written out is the table row the pair reads
    table = example_inputs(params).table_k[KEY - QUERY + K].numpy()
    comma = r",\allowbreak "  # a phone may break the line there
    assert f"w^K_{{{KEY - QUERY}}} = ({table[0]:.3g}{comma}{table[1]:.3g}{comma}" in text


def test_a_hidden_pair_says_so_instead_of_a_weight() -> None:
    at = open_page("attention", n="8", mask="causal", i="2", j="6")
    assert_clean(at)
    assert any(
        "key 6 comes after query 2: the causal mask hides it" in c.value.replace("\\", "")
        for c in at.caption
    )
    assert r"\alpha_{2,6}" not in card(at)


@pytest.mark.parametrize(
    "raw, shown", [("abc", "'abc'"), ("100000", "'100000'"), ("-1", "'-1'"), ("2.5", "'2.5'")]
)
def test_a_bad_pair_in_the_url_is_named_and_left_unpicked(raw: str, shown: str) -> None:
    at = open_page("lookup", n="8", i=raw, j="2")
    assert not at.exception and not at.error
    warned = [w.value.replace("\\", "") for w in at.warning]
    assert any(
        f"URL parameter i: must be empty or an integer in [0, 7], got {shown}; using no pick" in w
        for w in warned
    ), warned
    assert at.number_input(key="i").value is None
    assert not any(outlines(chart_spec(at, key)) for key in chart_keys(at))


def test_the_pair_survives_a_change_of_page_and_follows_n() -> None:
    at = open_page("lookup", n="8", i=str(QUERY), j=str(KEY))
    at.switch_page("../../../pages/attention.py").run()
    assert_clean(at)
    assert (at.number_input(key="i").value, at.number_input(key="j").value) == (QUERY, KEY)
    assert outlines(chart_spec(at, "attention_heads"))
    at.slider(key="n").set_value(4).run()  # i = 5 no longer exists: it moves, and says so
    assert_clean(at)
    assert at.number_input(key="i").value == 3
    assert any("query i 5 was above the new maximum 3; moved to 3" in c for c in texts(at.caption))


def test_a_pair_outside_the_window_moves_it_on_request_or_says_why_not() -> None:
    at = open_page("attention", n="1024", i="900", j="880")
    assert_clean(at)
    assert any("Outside the window 0-511" in c.value for c in at.caption)
    assert not outlines(chart_spec(at, "attention_heads"))
    at.button(key="pair_window").click().run()
    assert_clean(at)
    # centred on the pair (890 - 256 = 634) as far as the sequence allows: the last start, 512
    assert at.slider(key="win").value == 512
    shapes = outlines(chart_spec(at, "attention_heads"))
    # a 512-wide panel draws a cell under a pixel: a cross through row i and column j
    assert (512 - 0.5, 1023 + 0.5, 900 - 0.5, 900 + 0.5) in shapes["x"]  # window 512-1023
    assert (880 - 0.5, 880 + 0.5, 512 - 0.5, 1023 + 0.5) in shapes["x"]
    zoom = chart_spec(at, "attention_zoom_zoom")  # the exact values centred on the pair
    assert outlines(zoom)["x"] == {(880 - 0.5, 880 + 0.5, 900 - 0.5, 900 + 0.5)}
    far = open_page("attention", n="2048", i="1900", j="10")
    assert any("1890 apart: no window of 512 positions shows both" in c.value for c in far.caption)


def test_the_scheme_profile_marks_the_picked_distance() -> None:
    at = open_page("family", n="16", i="9", j="4")
    assert_clean(at)
    spec = chart_spec(at, "family_profile")
    lines = [s for s in spec["layout"]["shapes"] if s.get("name") == "picked distance"]
    assert lines and all(s["x0"] == s["x1"] == 4 - 9 for s in lines)
    assert any("distance j - i = -5" in c for c in texts(at.caption))


def test_the_skew_story_follows_the_sidebar_pair() -> None:
    at = open_page("skew", n="6", k="1", i="4", j="1")
    assert_clean(at)
    assert r"q_{4} \cdot w^K_{-1}" in card(at)
    assert not any("Following (i, j)" in c.value for c in at.caption)
