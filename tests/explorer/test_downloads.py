"""explorer.frame.downloads: one zip per view, CSVs with labels, the parameters, the view as one
offline web page (explorer.frame.offline_view) and a README."""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from explorer.frame.csv_tables import Labelled, csv_text
from explorer.frame.downloads import file_name, position_labels, view_link, zip_bytes
from explorer.frame.offline_view import ShownFigure, view_html
from explorer.frame.params import ViewParams


def read_zip(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def test_file_name_carries_the_parameters() -> None:
    assert file_name("logits", ViewParams()) == "relpos_logits_n8_k2_d16_h2_seed0_mask-none.zip"
    typed = file_name("attention", ViewParams(text="the cat sat", k=3), {"attention_head": 1})
    assert typed == "relpos_attention_n3_k3_d16_h2_seed0_mask-none_text-the-cat-sat_head1.zip"


def test_csv_has_a_header_row_row_labels_and_blank_masked_cells() -> None:
    values = np.array([[1.5, np.nan], [0.25, -2.0]], dtype=np.float32)
    text = csv_text(Labelled(values, rows=["0 the", "1 cat"], cols=["0 the", "1 cat"],
                             corner="query i \\ key j"))  # fmt: skip
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [
        ["query i \\ key j", "0 the", "1 cat"],
        ["0 the", "1.5", ""],
        ["1 cat", "0.25", "-2"],
    ]


def test_labels_that_could_run_as_formulas_get_a_quote_and_commas_are_quoted() -> None:
    """OWASP's CSV injection advice: a cell starting with = + - @, a tab or a carriage return
    is read as a formula by spreadsheets, so it gets a leading single quote; numbers stay."""
    labels = ["=SUM(A1)", "+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx", "a,b", "plain"]
    text = csv_text(Labelled(np.zeros((8, 3)), rows=labels, cols=["-3", "+4", "1e-2"]))
    rows = list(csv.reader(io.StringIO(text)))
    want = ["'=SUM(A1)", "'+1+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "a,b", "plain"]
    assert [r[0] for r in rows[1:]] == want
    assert rows[0] == ["row \\ column", "-3", "+4", "1e-2"]  # numbers are not formulas
    for row in rows:
        assert not row[0].startswith(("=", "+", "-", "@", "\t", "\r"))


def test_a_typed_token_that_looks_like_a_formula_is_written_as_text() -> None:
    params = ViewParams(text="=cmd|' /C calc'!A0 @x -y the")
    files = read_zip(zip_bytes("logits", params, {}))
    rows = list(csv.reader(io.StringIO(files["tokens.csv"])))
    assert [r[0] for r in rows[1:]] == ["'=cmd|'", "/C", "calc'!A0", "'@x", "'-y", "the"]
    assert [r[1] for r in rows[1:]] == ["0", "1", "2", "3", "4", "5"]
    assert files["tokens.csv"].splitlines()[1] == "\"'=cmd|'\",0"


def test_labels_must_fit_the_array() -> None:
    with pytest.raises(ValueError, match="do not fit"):
        csv_text(Labelled(np.zeros((2, 2)), rows=["a"]))


def test_zip_holds_every_array_the_tokens_the_parameters_and_a_readme() -> None:
    params = ViewParams(text="the cat sat", heads=2)
    logits = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    labels = position_labels(params)
    data = zip_bytes(
        "logits",
        params,
        {"logits": Labelled(logits, "e_ij per head", rows=labels, cols=labels,
                            corner="query i \\ key j", split="head"),
         "index": np.array([[2, 3], [1, 2]])},
        {"logits_head": 1},
    )  # fmt: skip
    files = read_zip(data)
    assert set(files) == {
        "logits_head0.csv", "logits_head1.csv", "index.csv", "tokens.csv", "params.json",
        "README.txt", "view.html",
    }  # fmt: skip
    head1 = list(csv.reader(io.StringIO(files["logits_head1.csv"])))
    assert head1[0] == ["query i \\ key j", "0 the", "1 cat", "2 sat"]
    np.testing.assert_array_equal(np.array(head1[1:])[:, 1:].astype(float), logits[1])
    assert files["index.csv"].splitlines() == ["row \\ column,0,1", "0,2,3", "1,1,2"]
    assert files["tokens.csv"].splitlines()[1:] == ["the,0", "cat,1", "sat,2"]
    meta = json.loads(files["params.json"])
    assert meta["text"] == "the cat sat" and meta["length"] == 3 and meta["logits_head"] == 1
    assert meta["link"] == "/logits?text=the+cat+sat&weights=random&logits_head=1"
    for name in ("logits_head0.csv", "index.csv", "tokens.csv", "params.json"):
        assert any(line.startswith(name) for line in files["README.txt"].splitlines())


def test_the_parts_are_read_when_the_zip_is_built() -> None:
    """A fragment's rerun replaces its part after the button was drawn: the zip built on the
    click holds the part's arrays of that moment, after the page's own."""
    parts: dict[str, dict[str, np.ndarray]] = {"a_k": {"a_K_channel0": np.zeros((2, 2))}}
    page = {"index": np.array([[2, 3], [1, 2]])}
    parts["a_k"] = {"a_K_channel1": np.ones((2, 2))}  # the fragment ran again
    files = read_zip(zip_bytes("lookup", ViewParams(n=2), page, parts=parts))
    assert {"index.csv", "a_K_channel1.csv"} <= set(files)
    assert "a_K_channel0.csv" not in files
    assert files["a_K_channel1.csv"].splitlines()[1:] == ["0,1,1", "1,1,1"]
    readme = files["README.txt"].splitlines()
    assert any(line.startswith("a_K_channel1.csv") for line in readme)


def test_a_window_is_labelled_with_its_real_positions() -> None:
    params = ViewParams(n=1000, win=300)
    assert position_labels(params, *params.window)[:2] == ["300", "301"]
    meta = json.loads(read_zip(zip_bytes("lookup", params, {}))["params.json"])
    assert meta["window"] == [300, 812] and meta["link"] == "/lookup?n=1000&win=300&weights=random"


# ---- view.html: the view as one web page that opens offline --------------------------------


def two_figures() -> list[ShownFigure]:
    heat = go.Figure(go.Heatmap(z=np.arange(6, dtype=np.float32).reshape(2, 3)))
    heat.update_layout(title="e_ij of head 0")
    bars = go.Figure(go.Bar(x=["-1", "0", "+1"], y=[0.125, 0.5, 0.375], name="share per distance"))
    return [
        ShownFigure("chart_logits", heat, formula=r"e_{ij} < \sqrt{d}", caption="shape (2, 3)"),
        ShownFigure("chart_shares", bars, caption="a & b"),
    ]


def parameters_shown(page: str) -> dict:
    block = re.search(r'<pre id="parameters">(.*?)</pre>', page, re.DOTALL)
    assert block is not None
    return json.loads(html.unescape(block.group(1)))


def test_the_view_page_holds_plotly_js_once_before_the_first_chart() -> None:
    page = view_html(title="Relative logits", about="", parameters={}, link="/logits",
                     figures=two_figures())  # fmt: skip
    plotly_js = get_plotlyjs()
    assert page.count(plotly_js) == 1
    assert page.index(plotly_js) < page.index("Plotly.newPlot(")
    assert page.count("Plotly.newPlot(") == 2
    assert re.search(r"<script[^>]*\bsrc=", page) is None  # nothing fetched: it opens offline
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_the_view_page_holds_every_figures_data_formula_and_caption() -> None:
    figures = two_figures()
    page = view_html(title="Relative logits", about="", parameters={}, link="/logits",
                     figures=figures)  # fmt: skip
    z = np.arange(6, dtype=np.float32).tobytes()  # numpy travels as base64 typed arrays
    assert f'"bdata":"{base64.b64encode(z).decode()}"' in page
    assert '"y":[0.125,0.5,0.375]' in page and '"name":"share per distance"' in page
    assert "<h3>e_ij of head 0</h3>" in page and "<h3>shares</h3>" in page  # untitled: its key
    assert r"e_{ij} &lt; \sqrt{d}" in page and "a &amp; b" in page  # escaped, as text
    assert page.index("chart_logits") < page.index("chart_shares")  # the page's order


def test_the_view_page_holds_the_parameters_and_the_link_back() -> None:
    params = ViewParams(text="<b>the</b> cat", k=1)
    meta = json.loads(read_zip(zip_bytes("logits", params, {}))["params.json"])
    link = "https://relpos.example.app" + meta["link"]
    page = view_html(title="Relative logits", about="the content term", parameters=meta,
                     link=link, figures=[])  # fmt: skip
    assert parameters_shown(page) == meta
    href = re.search(r'<a href="([^"]*)">', page)
    assert href is not None and html.unescape(href.group(1)) == link
    assert "&amp;text=" in href.group(1) and "<b>the</b>" not in page  # escaped, not markup
    assert "Plotly.newPlot(" not in page and get_plotlyjs()[:200] not in page  # no chart, no js


def test_the_zip_holds_the_view_page_with_the_pages_charts_and_its_address() -> None:
    params = ViewParams(n=4)
    figures = {shown.key: shown for shown in two_figures()}
    files = read_zip(
        zip_bytes(
            "logits", params, {"index": np.eye(4)}, figures=figures, app_url="http://127.0.0.1:8501"
        )  # fmt: skip
    )
    meta = json.loads(files["params.json"])
    assert meta["url"] == "http://127.0.0.1:8501/logits?n=4&weights=random"
    page = files["view.html"]
    assert page.count("Plotly.newPlot(") == 2 and parameters_shown(page) == meta
    assert "<title>Relative logits</title>" in page  # the navigation's title
    assert {"index.csv", "tokens.csv", "params.json", "README.txt", "view.html"} == set(files)
    assert any(line.startswith("view.html: the page's 2 chart") for line in
               files["README.txt"].splitlines())  # fmt: skip
    assert meta["url"] in files["README.txt"]


def test_labels_that_do_not_fit_fail_while_the_page_runs_not_on_the_click() -> None:
    """A page that passed a count where labels belong (the Basics page did) broke only its
    download, silently: the check now fails when the Labelled is made."""
    with pytest.raises(TypeError, match="sequence of labels"):
        Labelled(np.zeros((2, 3)), cols=16)
    with pytest.raises(ValueError, match="2 cols labels do not fit shape"):
        Labelled(np.zeros((2, 3)), cols=["a", "b"])
    with pytest.raises(ValueError, match="3 rows labels"):
        Labelled(np.zeros((4, 2, 3)), rows=["a", "b", "c"], split="head")
    Labelled(np.zeros((4, 2, 3)), rows=["a", "b"], cols=["x", "y", "z"], split="head")
    Labelled(np.zeros(3), rows=["a", "b", "c"], cols=["value"])  # 1-D: one column


def test_a_shared_control_at_its_default_is_left_out_of_the_link() -> None:
    """Pages without shared parameters (Length generalization) name the weights in the link only
    when the address does: the app leaves a default out of its URL."""
    assert view_link(None, {"weights": "trained", "trained_seed": 3}, "trained") == (
        "/trained?trained_seed=3"
    )
    assert view_link(None, {"weights": "random"}, "trained") == "/trained?weights=random"


def test_every_chart_goes_through_the_helper_that_records_it_for_the_download() -> None:
    """A chart drawn with st.plotly_chart itself would be missing from view.html."""
    root = Path(__file__).resolve().parents[2]
    sources = [*root.glob("pages/*.py"), *root.glob("explorer/**/*.py"), root / "app.py"]
    direct = [
        path.relative_to(root).as_posix()
        for path in sources
        if path.name != "draw.py" and "st.plotly_chart(" in path.read_text()
    ]
    assert len(sources) > 20 and direct == []
