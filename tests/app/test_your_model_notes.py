"""Your model's notes and marks, true at every setting: each head's shape and near share read
again from the lines drawn (softmax of the drawn bias over the keys the reading query sees, as
the note says), the buckets the family's T5 never trained found again with transformers' own
bucketing and seen still at their initial values, the bucket numbers above the chart apart from
each other, and the picked pair (i, j) marked on every figure with the values drawn there."""

from __future__ import annotations

import doctest
import re

import numpy as np
import pytest
import torch

from explorer.stories.your_model import bucket_labels, figures, text
from relpos_lab.family import results
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of

transformers = pytest.importorskip("transformers")
REACH = 2  # |r| <= 2 is near, as the note says


def plain(parts) -> str:
    return " ".join(p.value for p in parts).replace("\\", "")


def lines(at, key: str = "your_model_t5") -> dict[int, tuple[np.ndarray, np.ndarray, str]]:
    """head -> (x, y, legend name) of the T5 chart as drawn."""
    out = {}
    for trace in chart_spec(at, key)["data"]:
        head = int(trace["name"].split()[1])
        out[head] = (array_of(trace["x"]).astype(int), array_of(trace["y"]), trace["name"])
    return out


def shape_by_definition(x: np.ndarray, y: np.ndarray, causal: bool) -> tuple[str, float]:
    """The shape the docs define, from a drawn line: the reading query's softmax of the bias."""
    n = int(-x.min()) + 1  # distances start at -(n - 1); a decoder's far future is not drawn
    i = n - 1 if causal else (n - 1) // 2
    seen = (x >= -i) & (x <= (0 if causal else n - 1 - i))
    r, w = x[seen], np.exp(y[seen] - y[seen].max())
    w /= w.sum()
    near = np.abs(r) <= REACH
    s = w[near].sum()
    if near.all():
        return "every key near", s
    favour = (s / near.sum()) / max((1 - s) / (~near).sum(), 1e-300)
    back, ahead = w[r < 0].sum(), w[r > 0].sum()
    if s >= 0.5 and favour >= 2:
        return "local", s
    if s >= 0.1 and favour >= 2:
        return "near and far", s
    if not causal and back / (back + ahead) >= 0.9:
        return "looks back", s
    if not causal and ahead / (back + ahead) >= 0.9:
        return "looks ahead", s
    return ("long-range" if s < 0.5 else "few far keys"), s


def percent_of(words: str) -> float:
    return float(words.rstrip("%")) / 100


def family_untrained() -> list[int]:
    """Buckets of the family's T5 that no distance of a training window reaches, by
    transformers' own _relative_position_bucket (causal: r <= 0; 32 buckets, 128)."""
    length = results()["training"]["context"]
    bucket = transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket
    trained = bucket(torch.arange(-(length - 1), 1), bidirectional=False, num_buckets=32,
                     max_distance=128)  # fmt: skip
    every = bucket(torch.arange(-4096, 1), bidirectional=False, num_buckets=32, max_distance=128)
    return sorted(set(every.tolist()) - set(trained.tolist()))


@pytest.mark.parametrize("n", ["2", "8", "64", "2048", "4096"])
def test_each_heads_shape_and_share_are_those_of_the_lines_drawn(n: str) -> None:
    at = open_page("your_model", n=n, k="1")
    assert_clean(at)
    said = plain(at.markdown)
    shares = []
    for head, (x, y, name) in lines(at).items():
        shape, s = shape_by_definition(x, y, causal=True)  # the family's T5 is a decoder
        words = re.fullmatch(rf"head {head} · (.+) \(([\d.]+%) within \|r\| ≤ 2\)", name)
        assert words, name
        assert words[1] == shape, (name, s)
        assert percent_of(words[2]) == pytest.approx(s, abs=0.006)
        assert re.search(rf"{re.escape(shape)}: heads? [\d, ]*\b{head}\b", said), said
        shares.append(s)
    low, high = re.search(r"puts ([\d.]+%)(?: to ([\d.]+%))? of its weight within", said).groups()
    assert percent_of(low) == pytest.approx(min(shares), abs=0.006)
    assert percent_of(high or low) == pytest.approx(max(shares), abs=0.006)
    assert f"the bias drawn at n = {n}: " in said and f"which sees {int(n):,} keys" in said
    for shape, rule in text.SHAPE_RULES.items():  # each rule said only for a shape drawn
        assert (f"{shape}: {rule}" in said) == (f"{shape}: head" in said)


def test_the_issues_two_heads_read_as_their_weights_say() -> None:
    """At n = 2048 no head with under half its weight near is local; at n = 8 head 0 with 65%
    near (the issue's two examples) is local."""
    long = lines(open_page("your_model", n="2048"))
    for x, y, name in long.values():
        assert "local" not in name and shape_by_definition(x, y, True)[1] < 0.01
    x, y, name = lines(open_page("your_model", n="8"))[0]
    assert shape_by_definition(x, y, True)[1] > 0.6 and " · local (" in name


def test_the_buckets_never_trained_are_marked_and_hold_their_initial_values() -> None:
    untrained = family_untrained()
    assert untrained == [27, 28, 29, 30, 31]
    at = open_page("your_model", n="2048")
    said = plain(at.markdown)
    assert "Buckets 27-31 were never trained: no distance under the training length 64" in said
    x, y, _ = lines(at)[0]
    bucket = transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket(
        torch.from_numpy(x), bidirectional=False, num_buckets=32, max_distance=128
    ).numpy()
    spec = chart_spec(at, "your_model_t5")
    low, high = spec["layout"]["xaxis"]["range"]
    marked = [s for s in spec["layout"]["shapes"] if s.get("fillcolor") == figures.UNTRAINED]
    shown = (x >= low) & (x <= high)
    expected = figures.runs(x[shown], np.isin(bucket[shown], untrained))
    assert [(s["x0"], s["x1"]) for s in marked] == [
        (max(a - 0.5, low), min(b + 0.5, high)) for a, b in expected
    ]
    assert any(a["text"] == "never trained" for a in spec["layout"]["annotations"])
    # the claim under the mark: those buckets kept a bias near 0 (torch's initial values for an
    # embedding are N(0, 1) scaled down by the model), far above the trained far buckets
    for _, y, _ in lines(at).values():
        far_trained = y[(bucket >= 16) & ~np.isin(bucket, untrained)].min()
        assert np.abs(y[np.isin(bucket, untrained)]).max() < 0.25 < -far_trained - 1
    # the weight the note says goes to them, from the lines drawn
    reading = re.search(r"puts ([\d.]+%) to ([\d.]+%) of its weight on distances in them", said)
    shares = []
    for _, y, _ in lines(at).values():
        seen = x <= 0
        w = np.exp(y[seen] - y[seen].max())
        shares.append((w * np.isin(bucket[seen], untrained)).sum() / w.sum())
    assert percent_of(reading[1]) == pytest.approx(min(shares), abs=0.001)
    assert percent_of(reading[2]) == pytest.approx(max(shares), abs=0.001)
    assert "sees no distance in them" in plain(open_page("your_model", n="8").markdown)


@pytest.mark.parametrize("n", [2048, 4096])
@pytest.mark.parametrize("screen", ["phone", "wide"])
def test_bucket_numbers_never_overlap_in_the_range_the_chart_allows(n, screen) -> None:
    """Every pair of numbers is as far apart, in pixels of the narrowest plot, as half their
    widths and a gap; the axis cannot be zoomed out past the range they were placed for."""
    at = open_page("your_model", n=str(n))
    spec = chart_spec(at, "your_model_t5")
    axis = spec["layout"]["xaxis"]
    assert (axis["minallowed"], axis["maxallowed"]) == tuple(axis["range"])
    from explorer.stories.your_model.sources import family_positions
    from explorer.stories.your_model.views import family_training_length, t5_view

    view = t5_view(family_positions().t5[0], n, family_training_length())
    low, high = axis["range"]
    plot_px = figures.PHONE_PLOT_PX if screen == "phone" else figures.WIDE_PLOT_PX
    placed = figures.bucket_labels(view.spans, low, high, plot_px)
    assert len(placed) >= 8  # the near buckets and the far ones both named
    per_unit = plot_px / (high - low)
    for (b1, x1), (b2, x2) in zip(placed, placed[1:], strict=False):
        room = bucket_labels.LABEL_CHAR_PX * (len(str(b1)) + len(str(b2)))
        room += 2 * bucket_labels.LABEL_GAP_PX
        assert (x2 - x1) * per_unit >= room / 2 - 1e-9
    drawn = [a for a in spec["layout"]["annotations"] if a["text"].isdigit()]
    wide = figures.bucket_labels(view.spans, low, high, figures.WIDE_PLOT_PX)
    assert [(int(a["text"]), a["x"]) for a in drawn] == [(b, pytest.approx(x)) for b, x in wide]
    caption = plain(at.caption)
    assert f"{len(drawn)} of their bucket numbers above the plot, where they fit" in caption


def test_the_picked_pair_is_marked_on_every_family_figure_with_its_values() -> None:
    at = open_page("your_model", n="12", i="9", j="4", k="1")
    assert_clean(at)
    d = -5
    spec = chart_spec(at, "your_model_t5")
    lines_at = [s for s in spec["layout"]["shapes"] if s.get("name") == "picked distance"]
    assert [(s["x0"], s["x1"]) for s in lines_at] == [(d, d)]
    caption = plain(at.caption)
    drawn = {head: y[x == d][0] for head, (x, y, _) in lines(at).items()}
    said = re.search(r"At the pair's j - i = -5, bucket (\d+): (.+?) \(logit units\)", caption)
    assert int(said[1]) == 5  # a causal T5's bucket of -5: its exact buckets are |r|
    for head, value in drawn.items():
        assert f"head {head} {value:.3g}" in said[2]
    # the matrix: cell (9, 4) outlined, and its value said
    matrix = chart_spec(at, "your_model_matrix")["layout"]["shapes"]
    boxes = [s for s in matrix if s.get("name") == "picked pair"]
    assert boxes and all((s["x0"], s["y0"]) == (3.5, 8.5) for s in boxes)
    assert f"The picked pair (9, 4) is outlined: its cell holds {drawn[0]:.4g}" in caption
    # Shaw's tables: the row of the checkpoint's own k = 8 (not the sidebar's k = 1), r = -5
    tables = chart_spec(at, "your_model_shaw_tables")["layout"]["shapes"]
    rows = {(s["y0"], s["y1"]) for s in tables if s.get("name") == "picked pair"}
    assert rows == {(-5 + 8 - 0.5, -5 + 8 + 0.5)}
    assert "reads row r = -5 of this layer's tables (its k = 8" in caption
    norms = chart_spec(at, "your_model_shaw_norms")
    assert [s["x0"] for s in norms["layout"]["shapes"] if s.get("name") == "picked distance"] == [d]
    for trace in norms["data"]:
        x, y = array_of(trace["x"]), array_of(trace["y"])
        name = trace["name"].split("_")[0].lstrip("|")
        assert f"|{name}_-5| = {y[x == d][0]:.3g}" in caption


def test_a_far_pair_widens_the_lines_and_is_placed_beyond_the_matrix() -> None:
    at = open_page("your_model", n="2048", i="2000", j="10")
    assert_clean(at)
    axis = chart_spec(at, "your_model_t5")["layout"]["xaxis"]
    assert axis["range"][0] <= -1990.5
    caption = plain(at.caption)
    assert "j - i = -1990 lies beyond this matrix" in caption
    assert "bucket 31, never trained" in caption


def test_an_upload_says_its_trained_buckets_cannot_be_known_until_told(tmp_path) -> None:
    from tests.app.test_your_model_page import upload
    from tests.lab.test_extract import tiny_t5

    tiny_t5(tmp_path)
    files = [(p.name, p.read_bytes()) for p in (tmp_path / "model.safetensors",
                                                tmp_path / "config.json")]  # fmt: skip
    at = upload(open_page("your_model", n="40"), files)
    assert_clean(at)
    assert "Which buckets were trained cannot be known from a checkpoint" in plain(at.caption)
    spec = chart_spec(at, "your_model_t5")
    assert not [s for s in spec["layout"]["shapes"] if s.get("fillcolor") == figures.UNTRAINED]
    assert "never trained" not in plain(at.markdown)
    bucket = transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket
    every = set(bucket(torch.arange(-40, 41), True, 8, 12).tolist())  # the encoder's
    for length in (4, 6, 13):
        at.number_input(key="your_model_trained").set_value(length).run()
        assert_clean(at)
        said = plain(at.markdown)
        trained = set(bucket(torch.arange(-(length - 1), length), True, 8, 12).tolist())
        never = sorted(every - trained)
        if not never:
            assert "every bucket these distances use was trained" in said
            continue
        many = len(never) > 1
        assert (
            f"Bucket{'s' * many} {text.ranges(never)} {'were' if many else 'was'} never trained: "
            f"no distance under the training length {length}"
        ) in said
        spec = chart_spec(at, "your_model_t5")
        assert [s for s in spec["layout"]["shapes"] if s.get("fillcolor") == figures.UNTRAINED]


def test_alibi_and_rope_mark_the_pair_and_say_true_things_at_the_edges(tmp_path) -> None:
    from tests.app.test_your_model_page import upload

    bloom = transformers.BloomConfig(hidden_size=48, n_head=6, n_layer=1, vocab_size=40)
    transformers.BloomModel(bloom).save_pretrained(tmp_path / "bloom")
    files = [(p.name, p.read_bytes()) for p in sorted((tmp_path / "bloom").iterdir())]
    at = upload(open_page("your_model", n="10", i="7", j="3"), files)
    assert_clean(at)
    spec = chart_spec(at, "your_model_alibi")
    assert [s["x0"] for s in spec["layout"]["shapes"] if s.get("name") == "picked distance"] == [-4]
    caption = plain(at.caption)
    for head, trace in enumerate(spec["data"]):
        x, y = array_of(trace["x"]), array_of(trace["y"])
        assert f"head {head} {y[x == -4][0]:.3g}" in caption
    at = upload(open_page("your_model", n="1"), files)
    assert "At n = 1 the only distance is r = 0, where every head's bias is 0." in plain(at.caption)
    assert "-0" not in plain(at.caption)
    llama = transformers.LlamaConfig(hidden_size=64, intermediate_size=64, num_attention_heads=4,
                                     num_key_value_heads=4, num_hidden_layers=1, vocab_size=40,
                                     max_position_embeddings=96)  # fmt: skip
    transformers.LlamaForCausalLM(llama).save_pretrained(tmp_path / "llama")
    files = [(p.name, p.read_bytes()) for p in sorted((tmp_path / "llama").iterdir())]
    for n, (i, j) in (("2", (1, 0)), ("8", (0, 7)), ("2048", (2047, 0)), ("4096", (5, 5))):
        at = upload(open_page("your_model", n=n, i=str(i), j=str(j)), files)
        assert_clean(at)
        spec = chart_spec(at, "your_model_rope")
        wavelength = array_of(spec["data"][0]["y"])
        said = plain(at.caption)
        turns = int((wavelength <= int(n) - 1).sum())  # a full turn needs |j - i| >= wavelength
        assert f"{turns} of 8 rotary pairs turn full circle within the largest distance" in said
        d = j - i
        picked = [s for s in spec["layout"]["shapes"] if s.get("name") == "picked distance"]
        if d == 0:
            assert not picked and "At the pair's j - i = 0 no rotary pair turns." in said
            continue
        assert [s["y0"] for s in picked] == [abs(d)]
        angle = 2 * np.pi * d / wavelength
        assert f"pair 0 by {angle[0]:.4g} rad" in said
        assert f"{int((wavelength <= abs(d)).sum())} of 8 turn full circle or more" in said


@pytest.mark.parametrize("module", ["bucket_labels", "text"])
def test_the_worked_examples_hold(module) -> None:
    outcome = doctest.testmod({"bucket_labels": bucket_labels, "text": text}[module])
    assert outcome.attempted > 0 and outcome.failed == 0
