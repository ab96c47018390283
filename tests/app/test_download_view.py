"""A page's download holds the view: every array its charts draw is in one of its CSVs, every
control it shows is in params.json, and its link is the page's own address, no more, no less.
(The address a browser shows is checked against the link in
tests/browser/test_downloads_every_page.py.)"""

from __future__ import annotations

import math
from urllib.parse import parse_qsl, urlsplit

import numpy as np
import pytest

from explorer.frame.navigation import PAGES
from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from tests.app.conftest import assert_clean
from tests.app.downloaded import (
    csv_arrays,
    drawn_arrays,
    found_in,
    open_with_download,
    params_json,
)

# Traces that mark cells of a matrix already in the download rather than carry numbers of
# their own: a grey or hatched overlay of cells a step drops or gets wrong, the text layer
# that writes each cell's distance, a band around a line, an example's marker.
# ("r" alone: the distance written in each cell of a skew step).
OVERLAYS = ("greyed", "dropped", "wrong", "distance", "band", "n = 2048")


def missing_from_download(page: str, **query: str) -> set[str]:
    """The charts' traces whose numbers no CSV of the page's download holds."""
    at, files = open_with_download(page, **query)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]  # every value was one it can take
    tables = csv_arrays(files)
    missing = set()
    for name, values in drawn_arrays(at):
        trace = name.split("] ", 1)[-1]
        if trace == "r" or any(word in trace for word in OVERLAYS):
            continue
        if found_in(values, tables) is None:
            missing.add(name)
    return missing


@pytest.mark.parametrize("page", [page.stem for page in PAGES])
def test_every_array_a_page_draws_is_in_its_download(page: str) -> None:
    missing = missing_from_download(page, n="6")
    assert not missing, f"{page}: drawn but not in the download: {sorted(missing)}"


# page, query: the controls of a part that reruns alone (a fragment) away from their defaults
PART_CONTROLS = [
    ("lookup", {"n": "6", "ak_view": "by query row", "ak_row": "4"}),
    ("lookup", {"n": "6", "ak_channel": "3"}),
    ("logits", {"n": "6", "t2t_step": "product"}),
    ("family", {"n": "6", "profile_head": "head 1", "profile_norm": "false"}),
    ("family", {"n": "6", "profile_part": "position only"}),
]


@pytest.mark.parametrize(("page", "query"), PART_CONTROLS, ids=[p for p, _ in PART_CONTROLS])
def test_what_a_fragment_draws_is_in_the_download(page: str, query: dict) -> None:
    missing = missing_from_download(page, **query)
    assert not missing, f"{page}: drawn but not in the download: {sorted(missing)}"


def test_the_absolute_page_downloads_its_bits_per_character_curves() -> None:
    at, files = open_with_download("absolute")
    tables = csv_arrays(files)
    curves = [values for name, values in drawn_arrays(at) if name.startswith("chart_why")]
    assert len(curves) == 3  # no position, the sinusoid, Shaw
    assert all(found_in(curve, tables) == f"bits_per_character.csv column {c}"
               for c, curve in enumerate(curves))  # fmt: skip


def test_the_basics_page_downloads_the_dot_product_weights() -> None:
    at, files = open_with_download("basics")
    tables = csv_arrays(files)
    dot = tables["dot_scores.csv"]
    weights = np.exp(dot - dot.max(axis=1, keepdims=True))  # softmax over the inputs j
    np.testing.assert_allclose(
        tables["dot_weights.csv"], weights / weights.sum(axis=1, keepdims=True), rtol=1e-5
    )


def test_the_skew_definition_says_it_divides_by_sqrt_d_as_its_values_do() -> None:
    at, files = open_with_download("skew", n="5", k="1")
    assert_clean(at)
    params = ViewParams(n=5, k=1)
    inputs = example_inputs(params)
    q = inputs.q[0, 0].double().numpy()  # head 0, the page's default: (n, d)
    table = inputs.table_k.double().numpy()  # (2k + 1, d)
    d = q.shape[-1]
    want = np.array(
        [[q[i] @ table[min(max(j - i, -1), 1) + 1] / math.sqrt(d) for j in range(5)]
         for i in range(5)]
    )  # fmt: skip
    np.testing.assert_allclose(csv_arrays(files)["definition.csv"], want, rtol=1e-5, atol=1e-6)
    readme = files["README.txt"].decode()
    line = next(line for line in readme.splitlines() if line.startswith("definition.csv"))
    assert f"/ sqrt(d), d = {d}" in line, line


# page, query: each page's own controls away from their defaults
PAGE_CONTROLS = [
    ("skew", {"n": "6", "skew_step": "3 reshaped", "skew_distance": "false"}),
    ("attention", {"n": "6", "attention_more": "the mask"}),
    ("lookup", {"n": "6", "ak_view": "by query row", "ak_row": "4"}),
    ("family", {"n": "6", "profile_head": "head 1", "profile_part": "position only"}),
]


@pytest.mark.parametrize(("page", "query"), PAGE_CONTROLS, ids=[p for p, _ in PAGE_CONTROLS])
def test_the_link_and_params_json_hold_the_page_controls(page: str, query: dict) -> None:
    at, files = open_with_download(page, **query)
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]  # every value was one it can take
    meta = params_json(files)
    link = urlsplit(meta["link"])
    assert link.path == f"/{page}"
    assert sorted(parse_qsl(link.query)) == sorted({**query, "weights": "random"}.items())
    for key in query:
        assert key in meta, key


def test_the_skew_link_names_no_pair_when_none_is_picked() -> None:
    """The page follows a cell of its own choosing; the address holds no i and j, nor does
    the link (params.json says which cell was followed)."""
    at, files = open_with_download("skew", n="6")
    meta = params_json(files)
    query = dict(parse_qsl(urlsplit(meta["link"]).query))
    assert "i" not in query and "j" not in query, meta["link"]
    assert meta["i"] is None and meta["j"] is None
    assert len(meta["followed_cell"]) == 2
