"""The Predict page through app.py, checked against the models' own forward passes, computed
here independently from the shipped checkpoints."""

from __future__ import annotations

import base64
import html
import io
import math

import numpy as np
import pytest
import torch
from PIL import Image

from explorer.figures.head_reading import read_head
from explorer.figures.letters import text_colours
from explorer.figures.notes import head_short
from explorer.figures.scales import colour_at
from explorer.frame.tex import plain
from explorer.stories.predict import extension, heads, views
from explorer.weights.reading import held_out_passage, shown
from explorer.weights.trained import family_model
from relpos_core.schemes.catalogue import ROPE_SCALINGS, rope_scaling
from relpos_lab.family import load_with_vocabulary
from relpos_lab.family.corpus import held_out_text
from relpos_lab.family.long_context import ROPE_MODEL, scaled_bpc, scaling_config
from relpos_lab.family.registry import scheme_models
from relpos_lab.family.train import bits_per_character, eval_span
from tests.app.conftest import assert_clean, chart_spec, open_page
from tests.app.panels import array_of, trace_pixels, trace_z

TEXT = "The example above shows that the function"


def model(name: str):
    m, vocabulary = load_with_vocabulary(name)
    return m.eval(), vocabulary


@pytest.mark.parametrize("name", ["alibi", "sinusoidal", "xl"])
def test_the_top_ten_are_the_softmax_of_the_models_logits(name: str) -> None:
    at = open_page("predict", text=TEXT, predict_model=name, predict_count="0")
    assert_clean(at)
    bars = chart_spec(at, "predict_top")["data"][0]
    m, vocabulary = model(name)
    with torch.no_grad():
        p = torch.softmax(m(vocabulary.encode(TEXT)[None])[0, -1].double(), -1)
    top = torch.topk(p, 10)
    np.testing.assert_allclose(array_of(bars["x"]), top.values.numpy(), rtol=1e-5, atol=1e-7)
    want = [f"'{shown(vocabulary.decode([int(i)]))}'" for i in top.indices]
    assert list(bars["y"]) == want


def causal_attention(m, ids: torch.Tensor) -> np.ndarray:
    """(layers, heads, n, n): every layer's full causal attention, computed by the layer's own
    scheme (or softmax(q k^T / sqrt(d)) with the future masked, without one)."""
    layers = []
    for block, (q, k, v) in zip(m.blocks, m.attention_inputs(ids), strict=True):
        scheme = block.attention.scheme
        if scheme is None:
            logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            n = logits.shape[-1]
            logits = logits.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf"))
            weights = torch.softmax(logits, -1)
        else:
            weights = scheme(q, k, v, causal=True)[1]
        layers.append(weights[0])
    return torch.stack(layers).detach().numpy()


@pytest.mark.parametrize("name", ["rope", "nope", "shaw"])
def test_the_last_characters_attention_is_each_layers_own(name: str) -> None:
    """Row (layer, head) equals the last row of that layer's full causal attention."""
    at = open_page("predict", text=TEXT, predict_model=name, predict_count="0")
    assert_clean(at)
    got = trace_z(chart_spec(at, "predict_attention")["data"][0])
    m, vocabulary = model(name)
    want = causal_attention(m, vocabulary.encode(TEXT)[None])[:, :, -1]
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)
    assert np.allclose(got.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("name", ["t5", "sinusoidal"])
def test_every_heads_map_is_that_heads_attention_with_its_reading(name: str) -> None:
    """Map (layer, head) of the grid holds that head's causal weights on the text (blank above
    the diagonal), titled with its layer and head and the reading of those weights."""
    at = open_page("predict", text=TEXT, predict_model=name, predict_count="0")
    assert_clean(at)
    spec = chart_spec(at, "predict_heads")
    m, vocabulary = model(name)
    want = causal_attention(m, vocabulary.encode(TEXT)[None])
    layers, heads, n, _ = want.shape
    maps = [t for t in spec["data"] if t["type"] == "heatmap"]
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert len(maps) == len(titles) == layers * heads
    for index, trace in enumerate(maps):
        layer, head = divmod(index, heads)
        got = trace_z(trace)
        future = np.triu(np.ones((n, n), dtype=bool), 1)
        assert np.isnan(got[future]).all()
        np.testing.assert_allclose(got[~future], want[layer, head][~future], rtol=1e-4, atol=1e-6)
        reading = head_short(read_head(np.where(future, np.nan, want[layer, head])))
        assert titles[index].startswith(f"<b>layer {layer}, head {head}</b>")
        assert reading in titles[index], (titles[index], reading)
    note = next(i.value for i in at.info if "heads on these" in i.value).replace("\\", "")
    assert f"Of {name}'s {layers * heads} heads on these {n} characters" in note


def test_the_grid_reads_the_texts_first_256_characters_as_images() -> None:
    """Past 128 characters each map is a PNG, and the grid reads the first GRID_MAX characters
    of a longer text (the same rows as the whole text's, the models being causal)."""
    at = open_page("predict", n="400", predict_model="alibi", predict_count="0")
    assert_clean(at)
    spec = chart_spec(at, "predict_heads")
    images = [t for t in spec["data"] if t["type"] == "image"]
    assert len(images) == 12
    assert trace_pixels(images[0]).shape[:2] == (256, 256)
    line = next(c.value for c in at.caption if "first 256 characters" in c.value)
    assert "alibi" in line
    clickable = [t for t in spec["data"] if t.get("name") == "map"]
    assert len(clickable) == 12  # one marker as large as each map: a click opens it
    shape = next(c.value for c in at.caption if "Under each map" in c.value)
    assert shape.replace("\\", "").startswith("shape (3, 4, 256, 256)")
    # one more character read changes none of the grid's rows: the view is not computed again
    assert heads.heads_view("alibi", held_out_passage()[:401]) is heads.heads_view(
        "alibi", held_out_passage()[:400]
    )


@pytest.mark.parametrize(
    ("name", "page", "controls"),
    [
        ("shaw", "attention.py", {"weights": "trained", "layer": 2, "k": 8, "attention_head": 1}),
        ("rope", "family.py", {"weights": "trained", "layer": 2, "scheme": "rope",
                               "family_head": 1}),
        ("nope", None, None),
        ("sinusoidal", None, None),
    ],
)  # fmt: skip
def test_a_map_opens_the_page_that_draws_that_head(name, page, controls) -> None:
    link = heads.head_link(name, 2, 1)
    assert link == (None if page is None else (page, controls))
    at = open_page("predict", text=TEXT, predict_model=name, predict_count="0")
    caption = next(c.value for c in at.caption if "Under each map" in c.value)
    assert ("Click a map" in caption) == (page is not None)


@pytest.mark.parametrize("length", ["64", "256"])
def test_the_running_mean_ends_at_the_length_tables_bits(length: str) -> None:
    """Each model's curve ends at ``bits_per_character`` (what the eval command averages) on
    the same held-out window; the coloured passage is the chosen model's own bits."""
    at = open_page("predict", predict_length=length, predict_count="0")
    assert_clean(at)
    curves = {t["name"]: array_of(t["y"]) for t in chart_spec(at, "predict_running")["data"]}
    assert len(curves) == len(scheme_models())  # the baselines and one model per scheme
    for label, curve in curves.items():
        name = label.rsplit("(", 1)[1].rstrip(")")
        m, _ = model(name)
        want = bits_per_character(m, eval_span(int(length)), int(length))
        assert math.isclose(float(curve[-1]), want, rel_tol=1e-5), (name, curve[-1], want)
    bits = trace_z(chart_spec(at, "predict_bits")["data"][0]).ravel()
    alibi = curves[next(label for label in curves if label.endswith("(alibi)"))]
    np.testing.assert_allclose(np.nanmean(bits), alibi[-1], rtol=1e-5)


def test_a_long_passage_writes_its_characters_as_one_image_over_the_map() -> None:
    """At 1,024 characters the cells' letters are an image laid over the heatmap: every cell
    with a character has ink, a character looks the same wherever it is in the same colour and
    unlike another one; the heatmap keeps each character for its hover. At 256 plotly.js
    writes them itself."""
    at = open_page("predict", predict_length="1024", predict_count="0")
    assert_clean(at)
    spec = chart_spec(at, "predict_bits")
    heatmap = spec["data"][0]
    assert heatmap.get("texttemplate") is None
    passage = [shown(c) for c in held_out_text()[1:1025]]  # the span's first is context only
    hover = [c for row in heatmap["text"] for c in row]
    assert hover == [html.escape(c, quote=False) for c in passage]
    (image,) = spec["layout"]["images"]
    assert (image["xref"], image["yref"], image["sizex"], image["sizey"]) == ("x", "y", 64, 16)
    header, data = image["source"].split(",", 1)
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"))
    height, width = pixels.shape[0] // 16, pixels.shape[1] // 64
    z = trace_z(heatmap)
    ink = text_colours(colour_at("sequential", np.clip(z / heatmap["zmax"], 0, 1)))
    seen: dict[tuple, np.ndarray] = {}
    for t, char in enumerate(passage):
        row, col = divmod(t, 64)
        crop = pixels[row * height : (row + 1) * height, col * width : (col + 1) * width]
        assert (crop[..., 3] > 0).any(), (t, char)
        key = (char, tuple(ink[row, col]))
        if key in seen:
            np.testing.assert_array_equal(crop, seen[key], err_msg=f"{t} {char!r}")
        seen[key] = crop
    white = {char: crop for (char, colour), crop in seen.items() if colour[0] == 255}
    assert len(white) > 20 and all(
        not np.array_equal(white[a], white[b]) for a in white for b in white if a < b
    )
    short = chart_spec(
        open_page("predict", predict_length="256", predict_count="0"), "predict_bits"
    )
    assert short["data"][0]["texttemplate"] == "%{text}" and not short["layout"].get("images")


def test_a_link_draws_the_same_characters_and_another_seed_others() -> None:
    query = {"predict_model": "rope", "predict_count": "30", "predict_temperature": "1.2",
             "predict_top_k": "20", "predict_seed": "7"}  # fmt: skip
    texts = []
    for seed in ("7", "7", "8"):
        at = open_page("predict", **{**query, "predict_seed": seed})
        assert_clean(at)
        written = chart_spec(at, "predict_written")["data"][0]
        texts.append("".join(c for row in written["text"] for c in row))
    assert texts[0] == texts[1] and texts[0] != texts[2]
    assert len(texts[0].replace("", "")) >= 30


def test_unread_characters_are_flagged_and_random_weights_change_nothing() -> None:
    at = open_page("predict", text="naïve café 東京", weights="random", predict_count="0")
    assert_clean(at)
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "outside the model's vocabulary" in warning
    assert "does not apply here" in at.caption[0].value
    source = next(c.value for c in at.caption if "reads" in c.value).replace("\\", "")
    assert "sentence" in source
    at = open_page("predict", n="300", predict_count="0")
    source = next(c.value for c in at.caption if "reads" in c.value).replace("\\", "")
    assert "300 held-out characters" in source and held_out_passage()[290:300].strip()[:3]


def test_the_attention_behind_a_written_character_is_the_forward_that_drew_it() -> None:
    """Character t was drawn from the last position's logits on the text and the t characters
    written before it; the step chart is that forward pass's last row, every layer and head,
    and the written chart outlines character t."""
    query = {"text": TEXT, "predict_model": "xl", "predict_count": "30", "predict_char": "12"}
    at = open_page("predict", **query)
    assert_clean(at)
    written = chart_spec(at, "predict_written")
    chars = views.generate("xl", TEXT, 30, 0.8, 10, 0).text  # the raw characters drawn
    shown_chars = "".join(c for row in written["data"][0]["text"] for c in row)
    assert shown_chars == "".join(shown(c) for c in chars)
    m, vocabulary = model("xl")
    read = TEXT + chars[:12]
    got = trace_z(chart_spec(at, "predict_step")["data"][0])
    want = causal_attention(m, vocabulary.encode(read)[None])[:, :, -1]
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)
    with torch.no_grad():
        p = torch.softmax(m(vocabulary.encode(read)[None])[0, -1].double() / 0.8, -1)
    assert chars[12] in {vocabulary.decode([int(i)]) for i in torch.topk(p, 10).indices}
    (outline,) = [s for s in written["layout"]["shapes"] if s["type"] == "rect"]
    assert (outline["x0"] + outline["x1"]) / 2 == 12 and (outline["y0"] + outline["y1"]) / 2 == 0
    caption = next(c.value for c in at.caption if "Character 12 of the generation" in c.value)
    assert f"last of the {len(read)} characters" in caption.replace("\\", "")


def test_a_picked_character_past_a_shorter_generation_moves_into_it() -> None:
    """A link past the generation is refused in words; a picked character the generation is
    then cut short of moves to its last one."""
    at = open_page("predict", text=TEXT, predict_count="20", predict_char="150")
    assert_clean(at)
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "URL parameter predict_char: must be" in warning and "'150'" in warning
    assert any("Character 0 of the generation" in c.value for c in at.caption)
    at = open_page("predict", text=TEXT, predict_count="40", predict_char="30")
    at.slider(key="predict_count").set_value(20).run()
    assert_clean(at)
    moved = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "written character t 30 was" in moved and "moved to 19" in moved, moved
    assert any("Character 19 of the generation" in c.value for c in at.caption)


def naive_generation(name: str, prompt: str, count: int, temperature: float, top_k: int, seed: int):
    """Each character drawn from a full forward pass over (the last 512 of) the text so far."""
    m, vocabulary = model(name)
    ids = vocabulary.encode(prompt)
    generator = torch.Generator().manual_seed(seed)
    chars, probs = [], []
    for _ in range(count):
        with torch.no_grad():
            logits = m(ids[-views.CONTEXT_MAX :][None])[0, -1].double() / temperature
        logits[0] = -math.inf  # the unknown id is never drawn
        cut = torch.topk(logits, top_k)
        p = torch.softmax(cut.values, -1)
        pick = int(torch.multinomial(p, 1, generator=generator))
        chars.append(vocabulary.decode([int(cut.indices[pick])]))
        probs.append(float(p[pick]))
        ids = torch.cat([ids, cut.indices[pick : pick + 1]])
    return "".join(chars), np.asarray(probs)


@pytest.mark.parametrize(
    ("name", "prompt", "count"),
    [("alibi", TEXT, 40), ("sinusoidal", held_out_passage()[:500], 24)],  # 500 + 24 > 512
)
def test_generation_reads_each_character_once_and_draws_what_a_full_pass_draws(
    name: str, prompt: str, count: int
) -> None:
    gen = views.generate(name, prompt, count, 0.8, 10, 3)
    text, probs = naive_generation(name, prompt, count, 0.8, 10, 3)
    assert gen.text == text
    np.testing.assert_allclose(gen.probs, probs, rtol=1e-4)


@pytest.mark.parametrize("rope_type", [s.rope_type for s in ROPE_SCALINGS])
def test_an_extended_ropes_bits_are_the_length_tables_with_that_scaling(rope_type: str) -> None:
    """The added curve's bits are what ``python -m relpos_lab.family long`` scores for the
    RoPE model with ``rope_type`` at s = 256 / 64 = 4, on the same window; the model every
    visitor shares is left as it was."""
    m, _ = model(ROPE_MODEL)
    span = eval_span(256)
    before = bits_per_character(m, span, 256)
    bits = extension.extended_bits(256, rope_type)
    want = scaled_bpc(m, span, 256, scaling_config(rope_type, 4, m.config.context))
    assert math.isclose(float(bits.mean()), want, rel_tol=1e-5), (rope_type, bits.mean(), want)
    assert abs(want - before) > 0.01  # the scaling changed what the model predicts
    shared, _ = family_model(ROPE_MODEL)
    assert math.isclose(bits_per_character(shared, span, 256), before, rel_tol=1e-6)


@pytest.mark.parametrize(("rope_type", "length"), [("yarn", "256"), ("dynamic", "64")])
def test_the_extension_adds_one_curve_and_a_note_that_reads_it(rope_type, length) -> None:
    at = open_page("predict", predict_length=length, predict_count="0", predict_extension=rope_type)
    assert_clean(at)
    curves = {t["name"]: array_of(t["y"]) for t in chart_spec(at, "predict_running")["data"]}
    assert len(curves) == len(scheme_models()) + 1  # and RoPE's extended
    rope = float(next(c for label, c in curves.items() if label.endswith(f"({ROPE_MODEL})"))[-1])
    extended = next(label for label in curves if "+" in label)
    factor = max(1, int(length) // 64)
    assert extended.endswith(f"s = {factor}"), extended
    end = float(curves[extended][-1])
    infos = [i.value.replace("\\", "") for i in at.info]  # as a learner reads them
    note = next(i for i in infos if "zero-shot" in i or "changes nothing" in i)
    assert f"{end:.3f}" in note and f"{rope:.3f}" in note, note
    if factor == 1:  # within the training length every rule is the identity
        assert math.isclose(end, rope, rel_tol=1e-6) and "changes nothing" in note
    else:
        assert ("recovers part" in note) == (end < rope), note
    assert "predict_extension" in at.query_params
    formulas = [plain(item.value) for item in at.latex]  # the rule beside the running mean
    assert any(rope_scaling(rope_type).rule in f for f in formulas), formulas


@pytest.mark.parametrize(
    ("rope_type", "length"),
    [("none", "1024"), ("linear", "256"), ("yarn", "128"), ("llama3", "256")],
)
def test_the_loss_note_reads_every_curve_drawn(rope_type: str, length: str) -> None:
    """The curve the note says rises most, and the one that moves least, are those of the
    chart, the extended model's counted when it is drawn (YaRN at 128 and Llama 3 at 256 move
    least of all)."""
    at = open_page("predict", predict_length=length, predict_count="0", predict_extension=rope_type)
    assert_clean(at)
    curves = {t["name"]: array_of(t["y"]) for t in chart_spec(at, "predict_running")["data"]}
    change = {name: float(c[-1] - c[63]) for name, c in curves.items()}  # from 64 to the end
    worst = max(change, key=change.get)
    least = min(change, key=lambda name: abs(change[name]))
    note = next(i.value.replace("\\", "") for i in at.info if "rises most" in i.value)
    said_worst, said_least = note.split("'s mean rises most")[0], note.split("'s moves least")[0]
    assert said_worst.split(f" to {length}, ")[1] in worst, (note, worst)
    assert said_least.rsplit("; ", 1)[1] in least, (note, least)
    assert f"{curves[worst][-1]:.2f}" in note
