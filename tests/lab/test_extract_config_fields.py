"""A config can put any value in any field the finders read: text, a list, NaN, Infinity, true
where a count belongs, 1e308, an integer of thousands of digits, a text of ten million
characters, nesting thousands deep. Each is refused with a sentence that names the file, the
field, the value and what was expected, before it sizes or computes anything; a value of the
right type and range is read as before."""

from __future__ import annotations

import json
import re
import threading
import tracemalloc

import numpy as np
import pytest
from safetensors.numpy import save

from relpos_lab.extract import FileProblem, from_upload

T5_NAME = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
WEIGHTS = save({"x": np.ones(2, np.float32)})  # no position tensor: the config is all there is
T5_WEIGHTS = save({T5_NAME: np.ones((32, 4), np.float32)})
MODEL_BIAS = save({"layers.0.relative_attention_bias.weight": np.ones((32, 4), np.float32)})
FAMILY_T5 = save({"blocks.0.attention.scheme.bias": np.ones((32, 4), np.float32)})

ROPE = {"rope_theta": 10000.0, "hidden_size": 64, "num_attention_heads": 4}
ALIBI = {"alibi": True, "n_head": 4}
MPT = {"attn_config": {"alibi": True}, "n_heads": 4}


def read(config: dict | str, weights: bytes = WEIGHTS):
    text = config if isinstance(config, str) else json.dumps(config)
    return from_upload([("model.safetensors", weights), ("config.json", text.encode())])


# (what the file holds, the field named, the value as the sentence gives it, what is expected)
HOSTILE = [
    ({**ROPE, "rope_theta": "abc"}, "rope_theta", "the text 'abc'", r"a number in \(1, 1e\+09\]"),
    ({**ROPE, "rope_theta": float("nan")}, "rope_theta", "NaN", "a number in"),
    ({**ROPE, "rope_theta": float("inf")}, "rope_theta", "Infinity", "a number in"),
    ({**ROPE, "rope_theta": True}, "rope_theta", "true", "a number in"),
    ({**ROPE, "rope_theta": [10000]}, "rope_theta", "a list of 1 item", "a number in"),
    ({**ROPE, "rope_theta": 0}, "rope_theta", "0", r"a number in \(1, 1e\+09\]"),  # not 10000
    ({**ROPE, "rope_theta": 1e308}, "rope_theta", "1e\\+308", "a number in"),
    ({"rotary_emb_base": "1e4", "head_dim": 16}, "rotary_emb_base", "the text '1e4'", "a number"),
    ({**ROPE, "hidden_size": "64"}, "hidden_size", "the text '64'", r"a whole number in \[1, "),
    ({**ROPE, "hidden_size": 64.5}, "hidden_size", "64.5", "a whole number"),
    ({**ROPE, "hidden_size": True}, "hidden_size", "true", "a whole number"),
    ({**ROPE, "hidden_size": 10**400}, "hidden_size", "an integer of 401 digits", "a whole"),
    ({**ROPE, "hidden_size": 2}, "hidden_size", "2", "giving 2 to 4096 dimensions per head"),
    ({"rope_theta": 1e4, "d_model": [64], "heads": 4}, "d_model", "a list of 1 item", "whole"),
    ({**ROPE, "head_dim": 10**9}, "head_dim", "1000000000", r"a whole number in \[2, 4,096\]"),
    ({**ROPE, "head_dim": False}, "head_dim", "false", "a whole number"),
    ({**ROPE, "num_attention_heads": 0}, "num_attention_heads", "0", r"\[1, 4,096\]"),
    ({**ROPE, "num_attention_heads": "4"}, "num_attention_heads", "the text '4'", "a whole"),
    ({**ROPE, "partial_rotary_factor": "x"}, "partial_rotary_factor", "the text 'x'",
     r"a number in \(0, 1\]"),
    ({**ROPE, "partial_rotary_factor": 2}, "partial_rotary_factor", "2", r"\(0, 1\]"),
    ({**ROPE, "partial_rotary_factor": 1e-9}, "partial_rotary_factor", "1e-09", "rotates a pair"),
    ({**ROPE, "rotary_pct": float("-inf")}, "rotary_pct", "-Infinity", r"\(0, 1\]"),
    ({**ROPE, "max_position_embeddings": -5}, "max_position_embeddings", "-5", r"\[1, "),
    ({**ROPE, "max_position_embeddings": "2k"}, "max_position_embeddings", "the text '2k'",
     "a whole number"),
    ({**ROPE, "rope_scaling": [4]}, "rope_scaling", "a list of 1 item", "an object"),
    ({**ROPE, "rope_scaling": {"factor": "x" * 900_000}}, "rope_scaling.factor",
     "a text of 900,000 characters beginning 'xxxx", "a finite number, a short text"),
    ({**ROPE, "rope_scaling": {"factor": float("nan")}}, "rope_scaling.factor", "NaN", "finite"),
    ({**ROPE, "rope_scaling": {"factor": {"deeper": 1}}}, "rope_scaling.factor",
     "an object of 1 field", "a finite number"),
    ({**ROPE, "rope_scaling": {f"k{i}": 1 for i in range(40)}}, "rope_scaling",
     "an object of 40 fields", "at most 32 fields"),
    ({"model_type": ["llama"]}, "model_type", "a list of 1 item", "a text of at most 200"),
    ({"model_type": "llama" * 180_000}, "model_type", "a text of 900,000 characters", "a text"),
    ({**ALIBI, "alibi": "yes"}, "alibi", "the text 'yes'", "true or false"),
    ({**ALIBI, "n_head": 1e308}, "n_head", "1e\\+308", r"a whole number in \[1, 4,096\]"),
    ({**ALIBI, "n_head": 10**4000}, "n_head", "an integer of 4,001 digits", "a whole number"),
    ({**MPT, "attn_config": {"alibi": True, "alibi_bias_max": "8"}}, "attn_config.alibi_bias_max",
     "the text '8'", r"a number in \(0, 64\]"),
    ({**MPT, "attn_config": {"alibi": True, "alibi_bias_max": float("inf")}},
     "attn_config.alibi_bias_max", "Infinity", r"\(0, 64\]"),
    ({**ALIBI, "attn_config": "alibi"}, "attn_config", "the text 'alibi'", "an object"),
    ({"position": "rope", "scheme_params": [1, 2], "head_dim": 16}, "scheme_params",
     "a list of 2 items", "an object of named fields"),
    ({"position": "rope", "scheme_params": {"base": "x"}, "head_dim": 16}, "scheme_params.base",
     "the text 'x'", "a number in"),
    ({"position": "rope", "scheme_params": {"base": 0}, "head_dim": 16}, "scheme_params.base",
     "0", "a number in"),
    ({"position": "alibi", "scheme_params": None, "heads": True}, "heads", "true", "a whole"),
]  # fmt: skip
T5_HOSTILE = [
    ({"relative_attention_num_buckets": "32"}, "relative_attention_num_buckets",
     "the text '32'", r"a whole number in \[2, 4,096\]"),
    ({"relative_attention_num_buckets": 32.5}, "relative_attention_num_buckets", "32.5", "whole"),
    ({"relative_attention_max_distance": float("nan")}, "relative_attention_max_distance", "NaN",
     "a whole number"),
    ({"relative_attention_max_distance": 1e308}, "relative_attention_max_distance", "1e\\+308",
     r"a whole number in \[1, "),
    ({"relative_attention_max_distance": True}, "relative_attention_max_distance", "true",
     "a whole number"),
    ({"relative_attention_max_distance": -128}, "relative_attention_max_distance", "-128",
     "a whole number"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "field", "value", "expected"), HOSTILE + T5_HOSTILE)
def test_a_field_of_the_wrong_type_or_range_is_named(config, field, value, expected) -> None:
    weights = T5_WEIGHTS if (config, field, value, expected) in T5_HOSTILE else WEIGHTS
    with pytest.raises(FileProblem) as refused:
        read(config, weights)
    said = str(refused.value)
    assert said.startswith(f"config.json: {field} is "), said
    assert len(said) < 300, said  # never the whole of a long value
    shown, _, wanted = said.removeprefix(f"config.json: {field} is ").partition("; expected ")
    assert re.match(value, shown), said
    assert re.search(expected, wanted), said


@pytest.mark.parametrize(
    ("weights", "config", "field"),
    [
        (MODEL_BIAS, {"is_decoder": "no"}, "is_decoder"),
        (FAMILY_T5, {"position": "t5", "scheme_params": {"num_buckets": "32"}},
         "scheme_params.num_buckets"),
        (FAMILY_T5, {"position": "t5", "scheme_params": {"max_distance": [128]}},
         "scheme_params.max_distance"),
    ],
)  # fmt: skip
def test_the_t5_layouts_own_fields_are_checked_too(weights, config, field) -> None:
    with pytest.raises(FileProblem, match=f"^config.json: {field} is "):
        read(config, weights)


def test_fields_of_the_right_type_are_read_as_before() -> None:
    config = {**ROPE, "rope_theta": 500000.0, "max_position_embeddings": 2048.0,
              "partial_rotary_factor": 0.5, "rope_scaling": None, "head_dim": None}  # fmt: skip
    rope = read(config).rope
    assert (rope.base, rope.head_dim, rope.max_positions, rope.scaling) == (500000.0, 8, 2048, None)
    longrope = {"type": "longrope", "long_factor": [1.0] * 48, "short_factor": [1.0] * 48}
    assert json.loads(read({**ROPE, "rope_scaling": longrope}).rope.scaling) == longrope
    alibi = read({**MPT, "attn_config": {"alibi": True, "alibi_bias_max": 16}}).alibi
    assert (alibi.heads, alibi.max_bias) == (4, 16.0)
    t5 = read({"relative_attention_num_buckets": 32, "relative_attention_max_distance": 64},
              T5_WEIGHTS).t5[0]  # fmt: skip
    assert (t5.num_buckets, t5.max_distance) == (32, 64)


def test_a_config_without_a_base_says_which_it_assumed() -> None:
    found = read({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4})
    assert found.rope.base == 10000.0
    assert "no rope_theta in config.json: the usual 10000 assumed" in found.notes
    said = read({"alibi": True}).notes
    assert any("says ALiBi but gives no head count" in note for note in said)


def test_the_gigabyte_config_is_refused_before_anything_is_sized() -> None:
    """head_dim 10^9 times a text share built a 1 GB string (int(head_dim * share)); a rerun of
    the page took 10-17 s and the server 2.2 GB. Now the head size is checked first."""
    config = {"model_type": "llama", "head_dim": 10**9, "partial_rotary_factor": "x"}
    tracemalloc.start()
    try:
        with pytest.raises(FileProblem, match="head_dim is 1000000000"):
            read(config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


@pytest.mark.parametrize("depth", [40, 5_000, 200_000])
def test_a_config_nested_past_reading_is_refused_in_words(depth) -> None:
    text = '{"rope_scaling": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(FileProblem, match="config.json nests (more than 32 levels|deeper than)"):
        read(text)


def test_an_integer_python_will_not_convert_is_refused_in_words() -> None:
    with pytest.raises(FileProblem, match="config.json holds an integer of over 4,300 digits"):
        read('{"hidden_size": ' + "9" * 5000 + "}")


def test_a_deep_config_is_refused_even_near_the_recursion_limit() -> None:
    """The page calls the parser some frames deep already: still a sentence."""
    said = []

    def deep(level: int) -> None:
        if level:
            return deep(level - 1)
        try:
            read("[" * 900 + "]" * 900)
        except FileProblem as problem:
            said.append(str(problem))

    thread = threading.Thread(target=deep, args=(100,))
    thread.start()
    thread.join()
    assert said and "nests" in said[0]


def test_a_checkpoints_own_config_is_read_field_by_field() -> None:
    """A state dict's config (this library's family checkpoints carry one) has no 1 MB cap: a
    text of ten million characters is named by its length."""
    import io

    import torch

    buffer = io.BytesIO()
    config = {"model_type": "x" * 10**7, "rope_theta": 1e4}
    torch.save({"config": config, "state_dict": {"w": torch.ones(2)}}, buffer)
    with pytest.raises(FileProblem) as refused:
        from_upload([("model.pt", buffer.getvalue())])
    assert str(refused.value) == (
        "the checkpoint's config: model_type is a text of 10,000,000 characters beginning "
        "'xxxxxxxxxxxxxxxxxxxx'; expected a text of at most 200 characters"
    )
