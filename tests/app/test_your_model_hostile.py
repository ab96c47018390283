"""Your model's page given what a hostile visitor sends: configs of the wrong types, one that made
the server build a gigabyte string on every rerun, nesting past Python's recursion, file names
with a NUL or other control characters (which Streamlit's own extension check answered with its
error box), Hub names in other scripts. Each gets a warning that names the problem, the family's
models are drawn meanwhile, and a refused file is read once for the session, not on every rerun
and not again when the same bytes come back."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save

from explorer.stories.your_model import sources
from tests.app.conftest import assert_clean, chart_keys, open_page

T5_NAME = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
WEIGHTS = save({"x": np.ones(2, np.float32)})
RAW = ("That view cannot be drawn", "Something went wrong", "Traceback")


def upload(at, files: list[tuple[str, bytes]]):
    at.segmented_control(key="your_model_from").set_value("your upload").run()
    at.file_uploader(key="your_model_upload").set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    )
    return at.run()


def warned(at) -> str:
    """The page's warnings, markdown escapes removed; the page must have drawn cleanly."""
    assert_clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert not any(words in said for words in RAW), said
    assert {"your_model_t5", "your_model_shaw_tables"} <= chart_keys(at)  # the family's models
    return said


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"rope_theta": "abc", "hidden_size": 64, "num_attention_heads": 4},
         "config.json: rope_theta is the text 'abc'; expected a number in (1, 1e+09]"),
        ({"rope_theta": 0, "hidden_size": 64, "num_attention_heads": 4},
         "config.json: rope_theta is 0"),
        ({"rope_theta": 1e4, "hidden_size": [64], "num_attention_heads": 4},
         "config.json: hidden_size is a list of 1 item"),
        ({"rope_theta": 1e4, "head_dim": 16, "max_position_embeddings": -5},
         "config.json: max_position_embeddings is -5"),
        ({"alibi": True, "n_head": True}, "config.json: n_head is true"),
        ({"model_type": ["llama"]}, "config.json: model_type is a list of 1 item"),
        ({"position": "rope", "scheme_params": [1], "head_dim": 16},
         "config.json: scheme_params is a list of 1 item"),
        ({"rope_theta": 1e4, "head_dim": 16, "rope_scaling": {"factor": float("nan")}},
         "config.json: rope_scaling.factor is NaN"),
    ],
)  # fmt: skip
def test_a_config_of_the_wrong_types_gets_a_warning_that_names_the_field(config, words) -> None:
    files = [("model.safetensors", WEIGHTS), ("config.json", json.dumps(config).encode())]
    said = warned(upload(open_page("your_model", n="8"), files))
    assert f"Your upload could not be read: {words}" in said


@pytest.mark.parametrize(
    "text",
    ["[" * 200_000 + "]" * 200_000, '{"hidden_size": ' + "9" * 5000 + "}"],
    ids=["nested", "digits"],
)
def test_a_config_python_cannot_parse_gets_a_warning(text) -> None:
    at = upload(open_page("your_model", n="8"),
                [("model.safetensors", WEIGHTS), ("config.json", text.encode())])  # fmt: skip
    assert "Your upload could not be read: config.json" in warned(at)


def test_a_refused_upload_is_read_once_for_the_session(monkeypatch) -> None:
    """The config that built a 1 GB string took 10-17 s a rerun (2.2 GB peak) before its fields
    were checked; a refusal is now remembered by the files' name, size and SHA-256."""
    reads = []
    real = sources.from_upload
    monkeypatch.setattr(sources, "from_upload", lambda files: reads.append(1) or real(files))
    config = {"model_type": "llama", "head_dim": 10**9, "partial_rotary_factor": "x"}
    files = [("model.safetensors", WEIGHTS), ("config.json", json.dumps(config).encode())]
    at = upload(open_page("your_model", n="8"), files)
    assert "config.json: head_dim is 1000000000; expected a whole number in [2, 4,096]" in warned(
        at
    )
    at.run()
    at.run()
    assert len(reads) == 1
    at.file_uploader(key="your_model_upload").set_value([])
    at.run()
    upload(at, files)  # the same bytes again: new file ids, one identity
    assert "head_dim is 1000000000" in warned(at)
    assert len(reads) == 1


@pytest.mark.parametrize(
    "name",
    ["m\x00.safetensors", "m.safetensors\x00.exe", "\x1b[31mm.safetensors", "m.safe\ntensors",
     "a\u202egnp.safetensors"],
)  # fmt: skip
def test_a_file_name_with_a_control_character_gets_a_warning_not_streamlits_box(name) -> None:
    data = save({T5_NAME: np.ones((32, 4), np.float32)})
    said = warned(upload(open_page("your_model", n="8"), [(name, data)]))
    assert "a file name with a control character" in said and "rename the file" in said


def test_a_file_of_another_type_is_named_by_the_page() -> None:
    said = warned(upload(open_page("your_model", n="8"), [("model.exe", b"MZ")]))
    assert "upload one weights file" in said and "model.exe" in said


@pytest.mark.parametrize("name", ["t5-smаll", "t5-small٣", "ｔ5-small"])
def test_a_hub_name_in_another_script_gets_the_hubs_rule(name) -> None:
    at = open_page("your_model", n="8")
    at.segmented_control(key="your_model_from").set_value("a Hub model").run()
    at.text_input(key="your_model_hub").input(name).run()
    said = warned(at)
    assert "ASCII letters, digits, '-', '_', '.' and at most one '/'" in said
    odd = next(c for c in name if ord(c) > 127)
    assert f"U+{ord(odd):04X}" in said
