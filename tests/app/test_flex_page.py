"""The Masks and biases page against definitions written out here: the drawn mask against a loop
over (i, j) of each mask's rule, the logits against the scheme's own ``logits``, the weights
against the softmax of the drawn logits over the keys the mask allows, the BlockMask against
counting that loop mask block by block; bad numbers in words; and the downloaded
``flex_attention.py`` run exactly as written, in a Python that reads only torch and numpy, its
output compared with the page's weights times v."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import example_inputs
from explorer.weights.schemes import SchemeConfig, scheme_for
from relpos_core.schemes.catalogue import scheme_names
from relpos_core.schemes.score_mods import has_score_mod
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.downloaded import open_with_download
from tests.app.panels import panel_z, trace_z

N, HEAD = 8, 1
TEXT = "the cat sat. a dog ran! it ends"  # 8 words, 3 sentences
SEGMENTS = (0, 0, 0, 1, 1, 1, 2, 2)


def loop_mask(n: int, masks: dict[str, int | bool], how: str) -> np.ndarray:
    """The masks' rules, cell by cell, combined by ``how`` (the page's definitions)."""
    rules = {
        "causal": lambda i, j: j <= i,
        "window": lambda i, j: i - masks["w"] < j <= i,
        "sinks": lambda i, j: j <= i and (j < masks["s"] or i - j < masks["w"]),
        "prefix": lambda i, j: j < masks["p"] or j <= i,
        "document": lambda i, j: SEGMENTS[i] == SEGMENTS[j],
        "padding": lambda i, j: j < n - masks["pad"],
    }
    picked = [rule for name, rule in rules.items() if masks.get(name)]
    combine = all if how == "and" else any
    out = np.ones((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if picked:
                out[i, j] = combine(rule(i, j) for rule in picked)
    return out


def block_count(allowed: np.ndarray, block: int) -> np.ndarray:
    """0 skipped, 1 partial, 2 full: each tile's allowed cells counted, cells past n hidden
    (FlexAttention pads the last tile with hidden cells)."""
    n = allowed.shape[0]
    tiles = -(-n // block)
    kinds = np.zeros((tiles, tiles), dtype=int)
    for r in range(tiles):
        for c in range(tiles):
            seen = allowed[r * block : (r + 1) * block, c * block : (c + 1) * block].sum()
            kinds[r, c] = 0 if seen == 0 else 2 if seen == block * block else 1
    return kinds


CASES = {  # URL, the loop's masks, how
    "window": ({"flex_window": "true", "flex_w": "3"}, {"window": True, "w": 3}, "and"),
    "sinks": (
        {"flex_window": "false", "flex_sinks": "true", "flex_s": "2", "flex_w": "2"},
        {"sinks": True, "s": 2, "w": 2},
        "and",
    ),
    "prefix or document": (
        {
            "flex_window": "false",
            "flex_prefix": "true",
            "flex_p": "3",
            "flex_document": "true",
            "flex_how": "or",
            "text": TEXT,
        },
        {"prefix": True, "p": 3, "document": True},
        "or",
    ),  # fmt: skip
    "causal, document and padding": (
        {
            "flex_window": "false",
            "flex_causal": "true",
            "flex_document": "true",
            "flex_padding": "true",
            "pad": "1",
            "text": TEXT,
        },
        {"causal": True, "document": True, "padding": True, "pad": 1},
        "and",
    ),  # fmt: skip
}


def softmax_under(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    out = np.full_like(logits, np.nan, dtype=np.float64)
    for i in range(logits.shape[0]):
        row = logits[i, allowed[i]].astype(np.float64)
        if row.size:
            e = np.exp(row - row.max())
            out[i, allowed[i]] = e / e.sum()
    return out


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("scheme", ["alibi", "t5"])
def test_the_drawn_mask_logits_weights_and_blocks_follow_their_definitions(
    case: str, scheme: str
) -> None:
    url, masks, how = CASES[case]
    at = open_page("flex", n=str(N), flex_scheme=scheme, flex_head=str(HEAD), flex_block="2",
                   **url)  # fmt: skip
    assert_clean(at)
    allowed = loop_mask(N, masks, how)
    mask, logits, weights = (panel_z(at, "flex_view", p) for p in (0, 2, 3))
    np.testing.assert_array_equal(mask.astype(bool), allowed)
    assert np.array_equal(np.isfinite(logits), allowed)
    # the logits: the scheme's own definition, at the page's head, where the mask allows
    params = ViewParams(n=N, text=url.get("text", ""))
    built = scheme_for(params, SchemeConfig(scheme))
    inputs = example_inputs(params, scheme)
    with torch.no_grad():
        defined = built.logits(inputs.q, inputs.k, causal=not np.triu(allowed, 1).any())
    expected = np.where(allowed, defined[0, HEAD].numpy(), np.nan)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(weights, softmax_under(logits, allowed), rtol=1e-5, atol=1e-6)
    kinds = trace_z(chart_spec(at, "flex_blocks")["data"][0])
    np.testing.assert_array_equal(kinds.astype(int), block_count(allowed, 2))


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ({"flex_w": "0"}, "window"),
        ({"flex_w": "9"}, "window"),
        ({"flex_window": "false", "flex_sinks": "true", "flex_s": "12"}, "sink"),
        ({"flex_window": "false", "flex_prefix": "true", "flex_p": "20"}, "prefix"),
    ],
)
def test_a_number_outside_a_mask_s_range_is_said_in_words(url: dict, words: str) -> None:
    at = open_page("flex", n=str(N), **url)
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert words in said and url.get("flex_w", url.get("flex_s", url.get("flex_p"))) in said, said
    links = [link.proto.label for link in at.get("page_link")]  # the page ended as a page does
    assert "Previous: Long context" in links, links


def test_a_query_left_with_no_key_is_said_and_drawn_blank_not_nan_in_words() -> None:
    at = open_page("flex", n=str(N), flex_w="1", flex_padding="true", pad="2")
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "2 queries with no key" in said and "query 6, 7" in said, said
    weights = panel_z(at, "flex_view", 3)
    assert np.isnan(weights[6:]).all() and np.isfinite(weights[:6]).sum() == 6


def test_shaw_says_its_value_term_and_rope_that_it_rotates() -> None:
    at = open_page("flex", n=str(N), flex_scheme="shaw")
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "relpos_core.relative_attention" in said and "key term" in said
    at = open_page("flex", n=str(N), flex_scheme="rope")
    assert_clean(at)
    assert "rotate" in " ".join(i.value for i in at.info).lower()


# ---- the download: flex_attention.py run as written ------------------------------------------


def run_download(tmp_path: Path, **url: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Open the page, unzip its download, run flex_attention.py in a fresh isolated Python
    (``-I``: no repository on its path); (its output, the page's weights, v, the files)."""
    at, files = open_with_download("flex", **url)
    assert_clean(at)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-I", "flex_attention.py"], cwd=tmp_path, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "output (1, 2, 8, 8)" in done.stdout, done.stdout
    assert at.code[0].value == files["flex_attention.py"].decode().rstrip("\n")  # printed whole
    output = np.load(tmp_path / "output.npy")
    return output, panel_z(at, "flex_view", 3), np.load(tmp_path / "v.npy"), files


@pytest.mark.parametrize("scheme", [s for s in scheme_names() if has_score_mod(s)] + ["none"])
def test_the_downloaded_program_runs_and_gives_the_page_s_numbers(tmp_path, scheme) -> None:  # noqa: ANN001
    output, weights, v, files = run_download(
        tmp_path, n=str(N), flex_scheme=scheme, flex_head=str(HEAD), flex_w="3"
    )
    page = np.nan_to_num(weights) @ v[0, HEAD]  # z_i = sum_j alpha_ij v_j with the drawn weights
    np.testing.assert_allclose(output[0, HEAD], page, rtol=1e-5, atol=1e-6)


def test_the_downloaded_program_with_combined_masks_and_its_closed_tensors(tmp_path) -> None:  # noqa: ANN001
    output, weights, v, files = run_download(
        tmp_path, n=str(N), flex_scheme="t5", flex_head=str(HEAD), flex_window="false",
        flex_sinks="true", flex_s="1", flex_w="2", flex_document="true", flex_how="or",
        text=TEXT, flex_block="4",
    )  # fmt: skip
    source = files["flex_attention.py"].decode()
    assert (
        "BLOCK_SIZE = 4" in source and "segments = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2]" in source
    )
    assert "bias.npy" in files  # T5's table travels beside the file
    page = np.nan_to_num(weights) @ v[0, HEAD]
    np.testing.assert_allclose(output[0, HEAD], page, rtol=1e-5, atol=1e-6)
