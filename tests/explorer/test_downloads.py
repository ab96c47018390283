"""explorer.downloads: one zip per view, CSVs with labels, the parameters and a README."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import numpy as np
import pytest

from explorer.downloads import Labelled, csv_text, file_name, position_labels, zip_bytes
from explorer.params import ViewParams


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
        "README.txt",
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


def test_a_window_is_labelled_with_its_real_positions() -> None:
    params = ViewParams(n=1000, win=300)
    assert position_labels(params, *params.window)[:2] == ["300", "301"]
    meta = json.loads(read_zip(zip_bytes("lookup", params, {}))["params.json"])
    assert meta["window"] == [300, 812] and meta["link"] == "/lookup?n=1000&win=300&weights=random"
