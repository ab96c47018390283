"""The Your model page through app.py: with nothing uploaded it draws the family's T5 and Shaw
models, equal to the trained schemes' own position terms; an uploaded T5 checkpoint in the layout
save_pretrained writes is drawn equal to T5's own compute_bias; its download holds t5_bias.csv;
a bad upload gets a message and the family's models; one visitor's upload is theirs alone."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from unittest import mock

import numpy as np
import pytest
import torch
from streamlit.runtime.media_file_manager import MediaFileManager

from relpos_lab.family import load
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page
from tests.app.panels import array_of, panel_z
from tests.lab.test_extract import tiny_t5

transformers = pytest.importorskip("transformers")


def upload(at, files: list[tuple[str, bytes]]):
    at.segmented_control(key="your_model_from").set_value("your upload").run()
    at.file_uploader(key="your_model_upload").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    )
    return at.run()


def test_with_nothing_uploaded_the_family_models_are_drawn_as_they_compute() -> None:
    at = open_page("your_model", n="12")
    assert_clean(at)
    assert {"your_model_t5", "your_model_matrix", "your_model_shaw_tables"} <= chart_keys(at)
    scheme = load("t5").blocks[0].attention.scheme
    q = torch.zeros(1, scheme.heads, 12, scheme.head_dim)
    bias = scheme.position_terms(q, q, causal=True, query_offset=0)["bias"][0]  # (h, n, n)
    drawn = panel_z(at, "your_model_matrix")  # head 0, the causal mask blank
    expected = np.where(np.tril(np.ones((12, 12), bool)), bias[0].detach().numpy(), np.nan)
    np.testing.assert_allclose(drawn, expected, rtol=1e-6, equal_nan=True)
    # the lines: head h's bias at distance r is the matrix's diagonal r, for every head
    lines = chart_spec(at, "your_model_t5")["data"]
    for trace in lines:
        head = int(trace["name"].split()[1])
        x, y = array_of(trace["x"]), array_of(trace["y"])
        for r, value in zip(x, y, strict=True):
            if r <= 0:  # the causal part: every cell of diagonal r holds this value
                assert np.allclose(np.diagonal(bias[head].detach().numpy(), int(r)), value)
    assert "trained" in " ".join(c.value for c in at.caption)


def test_an_uploaded_t5_is_drawn_as_t5_computes_and_downloads_every_distance(tmp_path) -> None:
    model = tiny_t5(tmp_path)
    files = [(p.name, p.read_bytes()) for p in (tmp_path / "model.safetensors",
                                                tmp_path / "config.json")]  # fmt: skip
    at = upload(open_page("your_model", n="16"), files)
    assert_clean(at)
    assert "**Weights: your upload** 'model.safetensors'" in " ".join(
        c.value for c in at.caption
    ).replace("\\", "")
    at.selectbox(key="your_model_stack").set_value("encoder, layer 0").run()
    at.segmented_control(key="your_model_head").set_value(2).run()
    with torch.no_grad():
        expected = model.encoder.block[0].layer[0].SelfAttention.compute_bias(16, 16)[0, 2]
    np.testing.assert_allclose(panel_z(at, "your_model_matrix"), expected.numpy(), rtol=1e-6)
    # the download the page's button delivers: t5_bias.csv, every stack, head and distance
    built = []
    real = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):  # the button's own callable, for a click
        built.append(data_callable)
        return real(self, data_callable, *args, **kwargs)

    with mock.patch.object(MediaFileManager, "add_deferred", keep):
        at.run()
    archive = zipfile.ZipFile(io.BytesIO(built[-1]()))
    rows = list(csv.reader(io.StringIO(archive.read("t5_bias.csv").decode())))
    assert rows[0] == ["stack", "layer", "head", "distance", "bucket", "bias"]
    assert len(rows) - 1 == 2 * 4 * 31  # two stacks, four heads, r = -15..15
    attention = {"encoder": model.encoder.block[0].layer[0].SelfAttention,
                 "decoder": model.decoder.block[0].layer[0].SelfAttention}  # fmt: skip
    with torch.no_grad():
        full = {stack: a.compute_bias(16, 16)[0] for stack, a in attention.items()}  # (h, n, n)
    for stack, layer, head, distance, bucket, bias in rows[1:]:
        r = int(distance)
        assert layer == "0" and -15 <= r <= 15
        expected_bucket = attention[stack]._relative_position_bucket(
            torch.tensor(r), bidirectional=stack == "encoder", num_buckets=8, max_distance=12
        )
        assert int(bucket) == int(expected_bucket)
        if stack == "encoder" or r <= 0:  # a cell at distance r: query max(0, -r), key + r
            i = max(0, -r)
            assert float(bias) == pytest.approx(float(full[stack][int(head), i, i + r]), rel=1e-6)


def test_a_pickle_gets_a_message_and_the_family_models(tmp_path) -> None:
    class Runs:
        def __reduce__(self):
            return (print, ("ran",))

    buffer = io.BytesIO()
    torch.save({"x": Runs()}, buffer)
    at = upload(open_page("your_model"), [("model.pt", buffer.getvalue())])
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "not a weights-only state dict: it asks for" in warnings and "print" in warnings
    assert "Nothing in it was run" in warnings and "\x1b" not in warnings
    assert "your_model_t5" in chart_keys(at)  # the family's, drawn instead
    assert "trained" in " ".join(c.value for c in at.caption)


def test_one_visitors_upload_is_not_seen_by_another(tmp_path) -> None:
    tiny_t5(tmp_path)
    files = [(p.name, p.read_bytes()) for p in (tmp_path / "model.safetensors",
                                                tmp_path / "config.json")]  # fmt: skip
    mine = upload(open_page("your_model"), files)
    assert "encoder, layer 0" in json.dumps([m.value for m in mine.markdown]).replace("\\", "")
    theirs = open_page("your_model", your_model_from="your upload")
    assert_clean(theirs)
    assert "encoder, layer 0" not in json.dumps([m.value for m in theirs.markdown]).replace(
        "\\", ""
    )
    assert "trained" in " ".join(c.value for c in theirs.caption)


def test_without_a_network_the_hub_says_so_in_words(monkeypatch) -> None:
    import urllib.error

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr("urllib.request.OpenerDirector.open", offline)
    at = open_page("your_model", your_model_from="a Hub model", your_model_hub="t5-small")
    assert_clean(at)
    warning = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "t5-small: this server cannot reach huggingface.co" in warning
    assert "needs a network" in warning


@pytest.mark.parametrize("n", ["1", "2"])
def test_the_smallest_lengths_draw_and_say_true_things(n) -> None:
    at = open_page("your_model", n=n)
    assert_clean(at)
    said = next(m.value for m in at.markdown if m.value.startswith("Shapes read")).replace("\\", "")
    assert f"which sees {n} key{'s' * (n != '1')}, puts 100% of its weight within |r| <= 2" in said
    assert "every key near: heads 0, 1, 2, 3" in said  # no key lies beyond |r| <= 2
    assert "local" not in said and "long-range" not in said


def test_alibi_and_rope_configs_draw_their_own_sections(tmp_path) -> None:
    bloom = transformers.BloomConfig(hidden_size=48, n_head=6, n_layer=1, vocab_size=40)
    transformers.BloomModel(bloom).save_pretrained(tmp_path / "bloom")
    files = [(p.name, p.read_bytes()) for p in sorted((tmp_path / "bloom").iterdir())]
    at = upload(open_page("your_model", n="10"), files)
    assert_clean(at)
    from relpos_core.schemes import alibi_slopes

    slopes = alibi_slopes(6).numpy()
    for head, trace in enumerate(chart_spec(at, "your_model_alibi")["data"]):
        x, y = array_of(trace["x"]), array_of(trace["y"])
        np.testing.assert_allclose(y, -slopes[head] * np.abs(x), rtol=1e-12)
    llama = transformers.LlamaConfig(hidden_size=64, intermediate_size=64, num_attention_heads=4,
                                     num_key_value_heads=4, num_hidden_layers=1, vocab_size=40,
                                     max_position_embeddings=96)  # fmt: skip
    transformers.LlamaForCausalLM(llama).save_pretrained(tmp_path / "llama")
    files = [(p.name, p.read_bytes()) for p in sorted((tmp_path / "llama").iterdir())]
    assert "generation_config.json" in [name for name, _ in files]  # left aside
    at = upload(open_page("your_model", n="10"), files)
    assert_clean(at)
    wavelength = array_of(chart_spec(at, "your_model_rope")["data"][0]["y"])
    np.testing.assert_allclose(wavelength, 2 * np.pi * 10000.0 ** (np.arange(0, 16, 2) / 16))
    said = " ".join(c.value for c in at.caption).replace("\\", "")
    turns = int((wavelength <= 9).sum())  # a full turn within the largest distance, n - 1
    assert f"{turns} of 8 rotary pairs turn full circle within the largest distance" in said
