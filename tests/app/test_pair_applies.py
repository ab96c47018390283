"""A picked pair shows only what the page uses, and its marks and words agree: no row of Shaw's
table where the page draws none, no row of the worked example's K for a pair the example does
not hold, the trained tables' own row on Length generalization, and the dotted diagonal named."""

from __future__ import annotations

from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page

PAIR = {"i": "3", "j": "1"}  # j - i = -2


def sidebar_text(at) -> str:
    return " ".join(c.value.replace("\\", "") for c in at.sidebar.caption)


def page_text(at) -> str:
    return " ".join(c.value.replace("\\", "") for c in at.main.caption)


def shapes(at, key: str, name: str) -> list[dict]:
    layout = chart_spec(at, key)["layout"]
    return [s for s in layout.get("shapes", []) if s.get("name") == name]


def test_a_page_without_shaws_table_gives_no_table_row() -> None:
    at = open_page("multihead", **PAIR)  # its model has no position: k does not apply
    assert_clean(at)
    text = sidebar_text(at)
    assert "j - i = -2" in text and "table row" not in text, text
    at = open_page("lookup", k="2", **PAIR)  # Shaw's table: its row clip(-2, 2) + 2 = 0
    assert_clean(at)
    assert "table row clip(-2, 2) + 2 = 0" in sidebar_text(at)


def test_the_worked_example_marks_a_pair_only_if_it_holds_it() -> None:
    at = open_page("basics", **PAIR)  # the example has 3 queries: i = 3 is not one of them
    assert_clean(at)
    examples = sorted(key for key in chart_keys(at) if key.startswith("example_"))
    assert examples
    assert {key: shapes(at, key, "picked pair") for key in examples} == {k: [] for k in examples}
    assert "its cell is not on the worked example" in page_text(at)
    at = open_page("basics", i="1", j="2")  # on the example: key 2's row of K is outlined
    assert_clean(at)
    assert shapes(at, "example_k", "picked pair")
    assert "its cell is outlined on the worked example" in page_text(at)


def test_the_trained_tables_outline_the_pairs_row() -> None:
    at = open_page("trained", **PAIR)
    assert_clean(at)
    for key in ("trained_w_k", "trained_w_v", "trained_cos_k", "trained_cos_v"):
        spec = chart_spec(at, key)
        rows = int(str(spec["data"][0]["z"]["shape"]).split(",")[0])  # 2k + 1 distances
        k = (rows - 1) // 2  # the model's own clip distance, not the sidebar's
        row = max(-k, min(k, -2)) + k
        centres = {(s["y0"] + s["y1"]) / 2 for s in shapes(at, key, "picked pair")}
        assert centres == {row}, (key, centres)
    assert f"clip(-2, {k}) + {k} = {row}" in page_text(at)


def test_the_dotted_diagonal_is_named_where_it_is_drawn() -> None:
    at = open_page("lookup", **PAIR)
    assert_clean(at)
    assert any(shapes(at, key, "picked distance") for key in chart_keys(at))
    named = "the dotted diagonal is j - i = -2, the cells at the pair's distance"
    assert named in sidebar_text(at) and named in page_text(at)
    at = open_page("multihead", **PAIR)
    assert_clean(at)
    assert named in sidebar_text(at) and named in page_text(at)
    at = open_page("speed", **PAIR)  # no heatmap of pairs: nothing to name
    assert_clean(at)
    assert "dotted" not in sidebar_text(at)


def test_no_sidebar_writes_shaws_table_shape_for_a_page_without_it() -> None:
    """The sidebar's summary gives n and the head width: a table (2k+1, d) belongs to Shaw's
    pages, which draw it with its shape under it."""
    for page in ("rel_shift", "family", "multihead", "predict"):
        at = open_page(page, n="12")
        assert_clean(at)
        text = sidebar_text(at)
        assert "head dim d =" in text and "tables (2k+1" not in text, (page, text)
