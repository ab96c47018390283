"""Each page's "what to notice" line is computed from the figure it sits under."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.figures.notes import band_note, clip_note
from explorer.figures.numbers import percent
from relpos_lab.family import results
from relpos_lab.family.registry import scheme_models
from relpos_lab.family.tables import describe
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import panel_z
from tests.explorer.head_brute import assert_note_reads, brute_reading, parse_head_note


def infos(at) -> list[str]:
    return [info.value for info in at.info]


def plain_infos(at) -> list[str]:
    """The info boxes' text as a learner reads it (markdown escapes removed)."""
    return [text.replace("\\", "") for text in infos(at)]


def head_sentences(note: str) -> list[str]:
    """A note of several heads, one sentence per head: 'Head 0 ... Head 1 ...'."""
    return re.split(r" (?=Head \d+ )", note.replace("\\", ""))


@pytest.mark.parametrize(
    "query",
    [
        {"n": "9", "heads": "4", "mask": "causal"},
        {"n": "12", "heads": "4", "mask": "causal-padding", "pad": "3"},
        {"n": "100", "heads": "4", "k": "3", "mask": "none"},
        {"n": "20", "heads": "4", "weights": "trained", "layer": "1"},
    ],
)
def test_the_attention_note_states_what_the_weights_drawn_show(query: dict) -> None:
    """The note under the head's weights: its pattern, cell, share, rows and entropy are those
    recomputed cell by cell from the chart the page draws (masked cells blank)."""
    at = open_page("attention", **query)
    at.button_group(key="attention_head").set_value(2).run()
    assert_clean(at)
    weights = panel_z(at, "attention_weights", 0).astype(np.float64)
    note = next(text for text in plain_infos(at) if text.startswith("Head 2 "))
    assert_note_reads(note, brute_reading(weights))


def test_a_random_head_over_many_keys_is_said_to_spread_evenly() -> None:
    """/attention?n=100&k=3&heads=2: no distance or key holds a tenth of a row's weight."""
    at = open_page("attention", n="100", k="3", heads="2")
    assert_clean(at)
    weights = panel_z(at, "attention_weights", 0).astype(np.float64)
    brute = brute_reading(weights)
    assert brute["pattern"] == "even" and brute["share"] < 0.1
    note = next(text for text in plain_infos(at) if text.startswith("Head 0 "))
    assert parse_head_note(note)["pattern"] == "even"
    assert_note_reads(note, brute)


def test_the_multihead_note_names_the_fixed_key_trained_head_1_reads() -> None:
    """/multihead?weights=trained: head 1 puts most of rows 1-7 on one key, j = 1."""
    at = open_page("multihead", weights="trained")
    assert_clean(at)
    note = next(text for text in plain_infos(at) if text.startswith("Head 0 "))
    sentences = head_sentences(note)
    assert len(sentences) == 4
    for head, sentence in enumerate(sentences):
        weights = panel_z(at, "multihead_weights", head).astype(np.float64)  # hidden: NaN
        assert sentence.startswith(f"Head {head} ")
        assert_note_reads(sentence, brute_reading(weights))
    head_1 = brute_reading(panel_z(at, "multihead_weights", 1).astype(np.float64))
    assert (head_1["kind"], head_1["at"]) == ("key", 1) and head_1["share"] > 0.8
    key_1 = chart_spec(at, "multihead_weights")["layout"]["xaxis"]["ticktext"][1]
    assert f"one fixed character (j = 1, '{key_1}') whatever the query" in sentences[1]


@pytest.mark.parametrize("mask", ["padding", "causal-padding"])
def test_the_multihead_note_reads_hidden_cells_as_masked(mask: str) -> None:
    at = open_page("multihead", n="8", heads="2", mask=mask, pad="2")
    assert_clean(at)
    sentences = head_sentences(next(t for t in plain_infos(at) if t.startswith("Head 0 ")))
    for head, sentence in enumerate(sentences):
        weights = panel_z(at, "multihead_weights", head).astype(np.float64)
        assert_note_reads(sentence, brute_reading(weights))


def test_the_multihead_note_without_a_mask_on_long_n_says_what_the_drawn_keys_hold() -> None:
    at = open_page("multihead", n="64", mask="none")
    assert_clean(at)
    note = next(t for t in plain_infos(at) if t.startswith("No look"))
    drawn = [np.nansum(panel_z(at, "multihead_weights", h), 1) for h in range(2)]
    low, high = min(d.min() for d in drawn), max(d.max() for d in drawn)
    assert f"between {percent(low)} and {percent(high)} of a row's weight" in note
    assert "over all 64 keys" in note


def test_the_lookup_note_follows_n_and_k() -> None:
    at = open_page("lookup", n="8", k="20")
    assert_clean(at)
    assert clip_note(8, 20) in infos(at)
    assert "rows 0-12 and 28-40 are never read" in clip_note(8, 20)
    at.slider(key="k").set_value(0).run()
    assert clip_note(8, 0) in infos(at)


def test_the_logits_note_follows_k() -> None:
    at = open_page("logits", n="8", k="3")
    assert_clean(at)
    assert band_note(8, 3) in infos(at)


def test_the_family_length_note_reads_the_measured_curves() -> None:
    at = open_page("family")
    assert_clean(at)
    models = results()["models"]
    change = {m: abs(models[m]["bpc"]["1024"] - models[m]["bpc"]["64"]) for m in scheme_models()}
    flat, worst = min(change, key=change.get), max(change, key=change.get)
    note = next(text for text in infos(at) if text.startswith("From 64 to 1024"))
    assert f"{describe(flat)} changes least" in note and f"{describe(worst)} most" in note


@pytest.mark.parametrize(
    "query",
    [
        {"n": "7", "heads": "2", "compare_a": "shaw", "compare_b": "alibi"},
        {"weights": "trained"},
    ],
)
def test_the_compare_note_reads_both_schemes_weights(query: dict) -> None:
    at = open_page("compare", **query)
    assert_clean(at)
    note = next(text for text in plain_infos(at) if text.startswith("A, "))
    first, second = note.split(" B, ")
    for panel, said in enumerate((first, second)):
        weights = panel_z(at, "compare_weights", panel).astype(np.float64)
        assert_note_reads(said, brute_reading(weights))


def test_the_compare_note_names_the_first_token_trained_rope_reads() -> None:
    """/compare?weights=trained: RoPE's head 0 puts most of a row's weight on key j = 0."""
    at = open_page("compare", weights="trained")
    assert_clean(at)
    rope = brute_reading(panel_z(at, "compare_weights", 1).astype(np.float64))
    assert (rope["kind"], rope["at"], rope["pattern"]) == ("key", 0, "key")
    note = next(text for text in plain_infos(at) if text.startswith("A, "))
    assert "B, RoPE: head 0 puts " in note
    key_0 = chart_spec(at, "compare_weights")["layout"]["xaxis"]["ticktext"][0]  # its label
    assert f"the first character (j = 0, '{key_0}') whatever the query" in note.split(" B, ")[1]


def test_the_skew_note_reads_the_trained_models_relative_logits() -> None:
    import numpy as np

    from relpos_lab.family import load
    from tests.app.test_trained_views import model_forward

    text = "print(len(words))"
    at = open_page("skew", weights="trained", k="4", layer="1", text=text)
    assert_clean(at)
    q = model_forward("shaw-k4", text)[1]["q"][0, 0].numpy()  # layer 1, head 0: (n, d)
    table = load("shaw-k4").blocks[1].attention.scheme.table_k.detach().numpy()
    n = len(text)
    by_distance = {  # q_i · w^K_clip(j - i, 4) over the causal pairs, per distance
        r: np.mean([q[i] @ table[max(-4, min(4, r)) + 4] for i in range(n) if 0 <= i + r <= i])
        for r in range(-(n - 1), 1)
    }
    high = max(by_distance, key=by_distance.get)
    note = next(text for text in infos(at) if "relative logit is largest" in text)
    assert f"largest at j - i = {high} " in note.replace("\\", "")


@pytest.mark.parametrize("query", [{"n": "700", "k": "4"}, {"n": "64", "k": "4"}])
def test_the_t2t_intro_gives_the_sizes_its_steps_trace(query):
    """The intro's n_q and n_k are the queries and keys of the tensors drawn under it."""
    at = open_page("logits", **query)
    assert_clean(at)
    intro = next(m.value for m in at.markdown if "tensor of shape (A, B, R, C)" in m.value)
    q_shape = next(c.value for c in at.caption if "queries Q" in c.value).replace("\\", "")
    b, h, n_q, d = (
        int(x) for x in re.search(r"shape \((\d+), (\d+), (\d+), (\d+)\)", q_shape).groups()
    )
    start, stop = 0, min(int(query["n"]), 512)
    if n_q < stop - start or int(query["n"]) > 512:
        assert f"n_q = {n_q} and n_k = {stop - start}" in intro, intro
    else:
        assert "n_q =" not in intro, intro  # every query over every key: nothing to say


@pytest.mark.parametrize("n", ["40", "2048"])
def test_the_distance_caption_spans_what_its_panel_draws(n):
    """'j - i spans ±X' first names the distances of the positions the panel shows."""
    from tests.app.panels import panel_positions

    at = open_page("lookup", n=n, k="1")
    assert_clean(at)
    rows, cols = panel_positions(at, "distance", 0)
    caption = next(c.value for c in at.caption if "spans" in c.value).replace("\\", "")
    said = re.search(r"j - i spans ±(\d+)", caption)
    assert said and int(said.group(1)) == max(rows, cols) - 1, caption
