"""What a learner reads on the Lookup table and Relative logits pages is true of the data drawn:
never-trained table rows and masked cells drawn blank and explained; typed characters the model
cannot read flagged, and the characters on every heatmap axis; a zoom on its own colour scale;
shares and counts written as they are."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import relpos_core as rc
from explorer.weights.reading import shown
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import UNKNOWN
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of, panel_count, panel_z
from tests.explorer.trained_params import trained_view

TYPED = "naïve café — 東京 😀 <b>x</b> $y$"
MD_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def texts(at, *kinds: str) -> list[str]:
    return [str(el.value) for kind in kinds for el in at.get(kind)]


def unescaped(text: str) -> str:
    """Markdown source as the reader sees it (backslash escapes removed)."""
    return MD_ESCAPED.sub(r"\1", text)


# ---- never-trained rows and masked cells ---------------------------------------------------


def test_lookup_draws_the_rows_a_causal_model_never_trains_blank_and_says_why() -> None:
    k = 2
    at = open_page("lookup", weights="trained", k=str(k))
    assert_clean(at)
    model, _ = load_with_vocabulary("shaw-k2")
    scheme = model.blocks[0].attention.scheme
    ahead = np.arange(2 * k + 1) > k  # rows w_+1..w_+k: keys ahead, never read when causal
    for panel, table in enumerate((scheme.table_k, scheme.table_v)):
        z = panel_z(at, "tables", panel)
        assert (np.isnan(z).all(axis=1) == ahead).all(), np.isnan(z).all(axis=1)
        np.testing.assert_allclose(z[~ahead], table.detach().numpy()[~ahead], rtol=1e-5)
    caption = unescaped(" ".join(texts(at, "caption")))
    assert "a causal model never reads w_+1..w_+2" in caption and "initial random draw" in caption
    n = 8
    channel = panel_z(at, "a_k_channel")
    assert (np.isnan(channel) == np.triu(np.ones((n, n), bool), 1)).all()  # keys ahead: masked
    note = next(t for t in texts(at, "info") if t.startswith(f"k = {k}"))
    back = sum(j - i < -k for i in range(n) for j in range(n))
    assert f"the {back} pairs with j - i < -{k}" in note and "w_+2" not in note.split(";")[0]
    assert "no pair reads w_+1..w_+2" in note


def test_lookup_with_random_weights_draws_every_row() -> None:
    at = open_page("lookup", k="2")
    assert_clean(at)
    for panel in range(panel_count(at, "tables")):
        assert np.isfinite(panel_z(at, "tables", panel)).all()
    assert np.isfinite(panel_z(at, "a_k_channel")).all()
    assert "never trained" not in " ".join(texts(at, "caption"))


def test_logits_draws_the_keys_a_causal_model_never_reads_blank_and_says_why() -> None:
    at = open_page("logits", weights="trained")
    assert_clean(at)
    n = 8
    ahead = np.triu(np.ones((n, n), bool), 1)
    for key in ("logits_heads", "logits_head", "relative_method"):
        for panel in range(panel_count(at, key)):
            z = panel_z(at, key, panel)
            assert (np.isnan(z) == ahead[: len(z), : len(z)]).all(), (key, panel)
    caption = unescaped(" ".join(texts(at, "caption")))
    assert "keys ahead of their query (j > i)" in caption
    assert "a causal model never reads w_+1..w_+2" in caption
    note = " ".join(texts(at, "info"))
    assert "ahead another" not in note and "keys ahead (j > i) are masked" in note
    random = open_page("logits")  # no mask: every cell is drawn
    assert_clean(random)
    for panel in range(panel_count(random, "logits_heads")):
        assert np.isfinite(panel_z(random, "logits_heads", panel)).all()


# ---- typed text ----------------------------------------------------------------------------


def unread_in_text() -> list[str]:
    _, vocabulary = load_with_vocabulary("shaw-k2")
    return [
        c for c, i in zip(TYPED, vocabulary.encode(TYPED).tolist(), strict=True) if i == UNKNOWN
    ]


@pytest.mark.parametrize(
    "page", ["lookup", "logits", "attention", "skew", "rel_shift", "compare", "family", "multihead"]
)
def test_every_page_that_reads_typed_text_flags_the_characters_the_model_cannot_read(
    page: str,
) -> None:
    at = open_page(page, weights="trained", layer="2", text=TYPED)
    assert_clean(at)
    unread = unread_in_text()
    flags = [unescaped(t) for t in texts(at, "warning") if "cannot read" in t]
    assert len(flags) == 1, texts(at, "warning")
    said = re.search(r"characters(?: \((\d+) different\))?: (.*) are outside", flags[0])
    named = said.group(2).split(", ")
    assert f"cannot read {len(unread)} of the {len(TYPED)} characters" in flags[0]
    assert named == list(dict.fromkeys(unread))
    # a character met twice is counted twice and named once: the count of names is said too
    assert said.group(1) == (str(len(named)) if len(named) < len(unread) else None)
    assert "$" not in MD_ESCAPED.sub("", next(t for t in texts(at, "warning") if "cannot" in t))


@pytest.mark.parametrize(
    ("page", "keys"),
    [
        ("logits", ("logits_heads", "logits_head", "relative_method")),
        ("lookup", ("distance", "index", "a_k_channel")),
        ("attention", ("attention_heads", "attention_weights", "attention_output")),
    ],
)
def test_heatmap_axes_of_typed_text_show_its_characters(page: str, keys: tuple[str, ...]) -> None:
    """Each tick names the character at its position, and a 30-character panel names every
    row (plotly's automatic ticks had thinned them to every other), and every column unless
    its figure is too narrow (the Lookup page's two beside each other): then every m-th one,
    evenly from the first, and the axis title says so."""
    at = open_page(page, weights="trained", layer="2", text=TYPED)
    assert_clean(at)
    expected = [html.escape(shown(c), quote=False) for c in TYPED]
    for key in keys:
        layout = chart_spec(at, key)["layout"]
        axes = {name: a for name, a in layout.items() if re.fullmatch(r"[xy]axis\d*", name)}
        for name, axis in axes.items():
            if axis["title"]["text"].startswith("channel"):  # the output's x: numbers
                continue
            values = array_of(axis["tickvals"]).astype(int)
            assert axis["ticktext"] == [expected[v] for v in values], (key, axis["ticktext"])
            step = values[1] - values[0]
            assert values[0] == 0 and (np.diff(values) == step).all() and values[-1] + step >= 30
            if step > 1:
                assert f"(every {step}" in axis["title"]["text"], key
            narrow = key in ("distance", "index") and name.startswith("x")
            assert step == 1 or narrow, (key, name, step)


# ---- scales and numbers --------------------------------------------------------------------


def test_the_lookup_zoom_has_its_own_scale_and_the_note_its_true_share() -> None:
    n, k = 2048, 1
    at = open_page("lookup", n=str(n), k=str(k))
    assert_clean(at)
    spec = chart_spec(at, "lookup_zoom_zoom")
    for panel in range(panel_count(at, "lookup_zoom_zoom")):
        z = panel_z(at, "lookup_zoom_zoom", panel)
        trace = spec["data"][panel]
        bound = float(np.abs(z).max())
        assert (trace["zmin"], trace["zmax"]) == (-bound, bound), (panel, bound)
    zoom_caption = next(t for t in texts(at, "caption") if "every value exact" in t)
    assert "own colour scale" in unescaped(zoom_caption)
    distance = rc.relative_distances(n, n)
    beyond = int((distance.abs() > k).sum())
    note = next(t for t in texts(at, "info") if t.startswith(f"k = {k}"))
    assert f"the {beyond:,} pairs with |j - i| > {k}" in note and f"of all {n * n:,})" in note
    share = re.search(r"\(([\d.]+)% of all", note).group(1)
    decimals = len(share.partition(".")[2])
    assert 0 < float(share) < 100
    assert abs(float(share) - 100 * beyond / n**2) <= 0.5 * 10**-decimals


def test_params_of_these_tests_are_valid() -> None:
    trained_view(text=TYPED)  # the typed text fits the trained model's limits
