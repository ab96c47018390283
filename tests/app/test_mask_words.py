"""What the pages say about masked cells is true of what they draw: random weights open without
a mask (the trained view is causal), and then no caption says that masked cells are blank."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.figures.numbers import percent
from tests.app.conftest import PAGES, assert_clean, open_page
from tests.app.panels import panel_z

MASKED_WORDS = ("Masked cells are blank", "Grey cells are masked", "masked cells are blank")


def shown_text(at) -> str:
    parts = [*at.caption, *at.markdown, *at.info]
    return " ".join(p.value.replace("\\", "") for p in parts)


@pytest.mark.parametrize("page", PAGES)
def test_no_word_of_masked_cells_without_a_mask(page: str) -> None:
    at = open_page(page, weights="random")
    assert_clean(at)
    assert at.radio(key="mask").value == "none"
    text = shown_text(at)
    assert not [w for w in MASKED_WORDS if w in text], text


def test_the_attention_page_says_why_there_is_no_mask() -> None:
    at = open_page("attention", weights="random")
    assert_clean(at)
    text = shown_text(at)
    assert "no cell is blank" in text and "the trained models are causal" in text
    at = open_page("attention", weights="random", mask="causal")
    assert_clean(at)
    assert "Masked cells are blank (grey)" in shown_text(at)


# ---- under the causal mask and padding: n = 2, 8, 2048; d_model = 8, 8 heads (d = 1), k = 1 --

SMALL = {"d_model": "8", "heads": "8", "k": "1", "weights": "random"}


def said(at, start: str) -> str:
    parts = [p.value.replace("\\", "") for p in (*at.caption, *at.info)]
    found = [p for p in parts if start in p]
    assert len(found) == 1, (start, parts)
    return found[0]


def window_shares(mask: str, n: int, win: int) -> tuple[float, float]:
    """Least and most share of a row's weight, head 0, on the window's keys (512 wide), from
    the whole (n, n) attention computed here."""
    import torch

    import relpos_core as rc
    from explorer.frame.params import ViewParams
    from explorer.weights.example import example_inputs

    params = ViewParams(n=n, k=1, d_model=8, heads=8, mask=mask, win=win)
    inputs = example_inputs(params)
    with torch.no_grad():
        weights = rc.relative_attention(
            inputs.q[:, :1], inputs.k[:, :1], inputs.v[:, :1], inputs.table_k, inputs.table_v,
            mask=inputs.mask, causal=inputs.causal, method="einsum", trace=True,
        ).weights[0, 0].double()  # fmt: skip
    rows = weights[win : win + 512]
    share = rows[:, win : win + 512].sum(-1) / rows.sum(-1)
    return float(share.min()), float(share.max())


@pytest.mark.parametrize(
    ("mask", "keys"),
    [
        ("causal", "keys 0 to i, i + 1 of them (1 to 512 for rows 0-511)"),
        ("padding", "the 2,046 keys that are not padding"),
        ("causal-padding", "keys 0 to i that are not padding (1 to 512 for rows 0-511)"),
    ],
)
def test_the_attention_window_says_which_keys_each_row_sees(mask: str, keys: str) -> None:
    at = open_page("attention", **SMALL, n="2048", mask=mask)
    assert_clean(at)
    window = said(at, "Each of the window's query rows")
    assert f"in the window or not: {keys}." in window and "softmax needs them all" not in window
    inside = said(at, "The weights drawn are the window's keys only")
    low, high = window_shares(mask, 2048, 0)
    if percent(low) == percent(high):  # one number, never "between 100% and 100%"
        assert f"each row puts {percent(low)} of its weight" in inside and "between" not in inside
    else:
        assert f"between {percent(low)} and {percent(high)} of its weight" in inside
    if mask != "padding":  # under the causal mask the first window holds every key its rows see
        assert low == high == 1.0 and "every key its rows see lies in the window" in inside


def test_a_later_window_under_the_causal_mask_gives_the_shares_it_holds() -> None:
    at = open_page("attention", **SMALL, n="2048", mask="causal", win="1000")
    assert_clean(at)
    window = said(at, "Each of the window's query rows")
    assert "keys 0 to i, i + 1 of them (1001 to 1512 for rows 1000-1511)" in window
    low, high = window_shares("causal", 2048, 1000)
    assert low < high < 1.0
    inside = said(at, "The weights drawn are the window's keys only")
    assert f"between {percent(low)} and {percent(high)} of its weight" in inside


@pytest.mark.parametrize("mask", ["padding", "causal-padding"])
def test_when_every_key_is_padding_no_figure_names_a_weight(mask: str) -> None:
    at = open_page("attention", **SMALL, n="2", mask=mask)  # pad 2 of 2
    assert_clean(at)
    words = shown_text(at)
    assert "largest weight shown" not in words
    assert "Every cell is blank: every key is padding, so no query has a weight." in words
    assert "no logit enters a softmax" in words
    assert "Head 0: every key is hidden from every query drawn" in words
    assert "2 key(s)" not in words and "the last 2 keys are padding" in words
    at = open_page("multihead", **SMALL, n="2", mask=mask)
    assert_clean(at)
    words = shown_text(at)
    assert "largest weight shown" not in words and "Every key is hidden: no weight to draw" in words
    assert "0 in every row, which sees no key" in words


@pytest.mark.parametrize(("mask", "n"), [("causal", "2048"), ("none", "2048"), ("causal", "8")])
def test_the_multihead_floor_names_the_keys_it_is_computed_from(mask: str, n: str) -> None:
    """The weights scale's floor is 1/(10 K), K the keys each drawn query is computed against:
    the last axis of the weights' shape (32 under the look-ahead mask at any n >= 32)."""
    at = open_page("multihead", **SMALL, n=n, mask=mask)
    assert_clean(at)
    caption = said(at, "Hidden cells (the mask's 1s)" if mask != "none" else "No cell is hidden")
    keys = int(re.search(r"shape \(1, 8, \d+, (\d+)\)", caption).group(1))
    assert keys == {"causal": min(int(n), 32), "none": int(n)}[mask]
    assert f"from {1 / (10 * keys):.2g} = 1/(10 · {keys}), {keys} the keys" in caption
    assert "1/(10 n)" not in caption


def test_the_multihead_notes_under_padding_count_the_keys_seen() -> None:
    at = open_page("multihead", **SMALL, n="2048", mask="padding")
    assert_clean(at)
    note = said(at, "No look-ahead mask")
    assert "over the 2,046 keys that are not padding (keys 2046-2047 are)" in note
    drawn = [np.nansum(panel_z(at, "multihead_weights", h), 1) for h in range(8)]
    low, high = min(d.min() for d in drawn), max(d.max() for d in drawn)
    assert f"hold between {percent(low)} and {percent(high)} of a row's weight" in note
    at = open_page("multihead", **SMALL, n="2048", mask="causal-padding")
    assert "the padded keys, from 2046 on, lie past them" in said(at, "h = 8 heads")


@pytest.mark.parametrize(("n", "drawn"), [("1", "The one position"), ("2", "Both positions")])
def test_the_multihead_captions_read_well_at_one_channel_a_head(n: str, drawn: str) -> None:
    at = open_page("multihead", **SMALL, n=n, mask="causal")
    assert_clean(at)
    words = shown_text(at)
    assert f"{drawn} drawn" in words and "All 1 " not in words and "All 2 " not in words
    assert "head m gets column m of Q" in words and "1m + 0" not in words
    assert "channel m is head m's" in words
