"""The extractor on checkpoints in the layouts people publish, written by the code that writes them
(transformers' save_pretrained, torch.save of a state dict): every position parameter it finds
equals the file's tensor, and what the explorer draws of it equals the definition people run
(transformers' T5Attention.compute_bias, BLOOM's build_alibi_tensor, its RoPE frequencies)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from relpos_core import by_distance as bd
from relpos_core.layer import RelativeMultiHeadAttention
from relpos_lab.extract import FileProblem, from_path, from_upload, to_bytes
from relpos_lab.extract.__main__ import main

transformers = pytest.importorskip("transformers")

N = 24  # beyond every tiny model's max_distance below: log buckets and the last bucket show


def tiny_t5(folder: Path, cls=None, config_cls=None, **options) -> torch.nn.Module:
    config_cls = config_cls or transformers.T5Config
    config = config_cls(d_model=32, d_ff=64, d_kv=8, num_heads=4, num_layers=2, vocab_size=40,
                        relative_attention_num_buckets=8, relative_attention_max_distance=12,
                        **options)  # fmt: skip
    torch.manual_seed(0)
    model = (cls or transformers.T5Model)(config).eval()
    with torch.no_grad():  # T5 initialises the bias at one value per head: make every cell its own
        for name, p in model.named_parameters():
            if "relative_attention_bias" in name:
                p.copy_(torch.randn_like(p))
    model.save_pretrained(folder)
    return model


def test_a_t5_checkpoint_gives_both_stacks_and_the_bias_t5_computes(tmp_path) -> None:
    model = tiny_t5(tmp_path)
    assert (tmp_path / "model.safetensors").is_file() and (tmp_path / "config.json").is_file()
    found = from_path(tmp_path)
    assert [(s.stack, s.layer, s.bidirectional) for s in found.t5] == [
        ("encoder", 0, True),
        ("decoder", 0, False),
    ]
    attention = {
        "encoder": model.encoder.block[0].layer[0].SelfAttention,
        "decoder": model.decoder.block[0].layer[0].SelfAttention,
    }
    for stack in found.t5:
        layer = attention[stack.stack]
        np.testing.assert_array_equal(
            stack.bias, layer.relative_attention_bias.weight.detach().numpy()
        )
        assert (stack.num_buckets, stack.max_distance) == (8, 12)
        _, by_r = bd.t5_bias_by_distance(torch.from_numpy(stack.bias), N, stack.bidirectional, 12)
        drawn = bd.matrix_from_distances(by_r, N)  # (h, n, n)
        with torch.no_grad():
            expected = layer.compute_bias(N, N)[0]  # T5's own (1, h, n, n)
        torch.testing.assert_close(drawn.float(), expected, rtol=0, atol=0)


def test_every_block_of_umt5_and_longt5s_global_bias_are_stacks_of_their_own(tmp_path) -> None:
    tiny_t5(tmp_path / "umt5", transformers.UMT5Model, transformers.UMT5Config)
    found = from_path(tmp_path / "umt5")
    assert [s.label for s in found.t5] == [
        "encoder, layer 0", "encoder, layer 1", "decoder, layer 0", "decoder, layer 1"
    ]  # fmt: skip
    tiny_t5(tmp_path / "longt5", transformers.LongT5Model, transformers.LongT5Config,
            encoder_attention_type="transient-global")  # fmt: skip
    stacks = {s.stack for s in from_path(tmp_path / "longt5").t5}
    assert stacks == {"encoder", "encoder (global)", "decoder"}


def test_without_a_config_t5s_defaults_are_assumed_and_said(tmp_path) -> None:
    tiny_t5(tmp_path)
    data = (tmp_path / "model.safetensors").read_bytes()
    found = from_upload([("model.safetensors", data)])
    assert {s.max_distance for s in found.t5} == {128}
    assert any("128 assumed" in note for note in found.notes)


def shaw_model() -> torch.nn.Module:
    """Two layers of the widely copied relative attention layer (relpos_core.layer writes the
    same names), inside a model as people nest it."""
    torch.manual_seed(1)
    return torch.nn.ModuleDict(
        {"layers": torch.nn.ModuleList([RelativeMultiHeadAttention(16, 2, 3) for _ in range(2)])}
    )


def test_shaw_tables_of_the_copied_layer_come_out_as_saved(tmp_path) -> None:
    model = shaw_model()
    torch.save(model.state_dict(), tmp_path / "model.pt")
    found = from_path(tmp_path / "model.pt")
    assert [s.layer for s in found.shaw] == [0, 1]
    for layer, saved in zip(found.shaw, model["layers"], strict=True):
        np.testing.assert_array_equal(
            layer.key, saved.relative_position_k.embeddings_table.detach()
        )
        np.testing.assert_array_equal(
            layer.value, saved.relative_position_v.embeddings_table.detach()
        )
        assert layer.k == 3
    # what the page reads at each distance: row k + clip(r, k), as Shaw's definition
    table = torch.from_numpy(found.shaw[0].key)
    for r, row in zip(range(-(N - 1), N), bd.table_by_distance(table, N), strict=True):
        assert torch.equal(row, table[max(-3, min(3, r)) + 3])


def test_alibi_slopes_equal_blooms_own(tmp_path) -> None:
    config = transformers.BloomConfig(hidden_size=48, n_head=6, n_layer=1, vocab_size=40)
    transformers.BloomModel(config).save_pretrained(tmp_path)
    found = from_path(tmp_path)
    assert found.alibi is not None and found.alibi.heads == 6
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    alibi = build_alibi_tensor(torch.ones(1, 2), 6, torch.float64)  # (h, 1, 2): slope h at key 1
    from relpos_core.schemes import alibi_slopes

    np.testing.assert_allclose(alibi_slopes(6).numpy(), alibi[:, 0, 1].numpy(), rtol=1e-12)


def test_rope_config_gives_the_frequencies_transformers_uses(tmp_path) -> None:
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=64, num_attention_heads=4,
                                      num_key_value_heads=4, num_hidden_layers=1, vocab_size=40,
                                      rope_theta=5000.0, max_position_embeddings=96)  # fmt: skip
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    rope = from_path(tmp_path).rope
    assert (rope.base, rope.head_dim, rope.max_positions) == (5000.0, 16, 96)
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from explorer.stories.your_model.views import rope_view

    inverse, _ = ROPE_INIT_FUNCTIONS["default"](config, "cpu")
    np.testing.assert_allclose(rope_view(rope, 96).wavelength, 2 * np.pi / inverse.double().numpy(),
                               rtol=1e-6)  # fmt: skip


def test_the_extracted_file_round_trips_and_is_small(tmp_path) -> None:
    tiny_t5(tmp_path / "t5")
    torch.save(shaw_model().state_dict(), tmp_path / "shaw.pt")
    for source in (tmp_path / "t5", tmp_path / "shaw.pt"):
        found = from_path(source)
        data = to_bytes(found)
        assert len(data) < 8 * 1024
        back = from_upload([("positions.safetensors", data)])
        assert back.source == "positions.safetensors"
        assert back.notes[0] == f"extracted from {found.source}"
        assert back.summary() == [*found.summary()[: -len(found.notes) or None], *back.notes]
        for a, b in zip(back.t5, found.t5, strict=True):
            np.testing.assert_array_equal(a.bias, b.bias)
            assert (a.stack, a.layer, a.bidirectional, a.max_distance) == (
                b.stack, b.layer, b.bidirectional, b.max_distance
            )  # fmt: skip
        for a, b in zip(back.shaw, found.shaw, strict=True):
            np.testing.assert_array_equal(a.key, b.key)
            np.testing.assert_array_equal(a.value, b.value)


def test_the_command_writes_only_the_positions_and_says_what_it_found(tmp_path, capsys) -> None:
    tiny_t5(tmp_path / "t5")
    out = tmp_path / "positions.safetensors"
    assert main([str(tmp_path / "t5"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "encoder, layer 0: 8 buckets x 4 heads" in printed and "wrote" in printed
    names = set(load_file(out))
    assert names == {"t5/encoder/0", "t5/decoder/0"}
    # a checkpoint with nothing to find: exit 1 and the list of what was looked for
    torch.save({"w": torch.ones(2)}, tmp_path / "plain.pt")
    assert main([str(tmp_path / "plain.pt"), "--out", str(tmp_path / "x.safetensors")]) == 1
    assert "relative_attention_bias" in capsys.readouterr().err
    (tmp_path / "broken.safetensors").write_bytes(b"\x10" + b"\x00" * 7 + b"{")
    assert main([str(tmp_path / "broken.safetensors"), "--out", str(out)]) == 2


def test_a_config_that_disagrees_with_the_tensor_is_refused_by_name(tmp_path) -> None:
    tiny_t5(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["relative_attention_num_buckets"] = 16
    files = [("model.safetensors", (tmp_path / "model.safetensors").read_bytes()),
             ("config.json", json.dumps(config).encode())]  # fmt: skip
    with pytest.raises(FileProblem, match="relative_attention_num_buckets = 16"):
        from_upload(files)


@pytest.mark.parametrize(
    "scaling",
    [
        {"rope_type": "linear", "factor": 4.0},
        {"type": "linear", "factor": 2.0},  # the older spelling of the same key
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32},
        {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 32},
    ],
)  # fmt: skip
def test_a_configs_rope_scaling_is_drawn_as_transformers_applies_it(tmp_path, scaling) -> None:
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=64, num_attention_heads=4,
                                      num_key_value_heads=4, num_hidden_layers=1, vocab_size=40,
                                      max_position_embeddings=128,
                                      rope_scaling=scaling)  # fmt: skip
    config.save_pretrained(tmp_path)
    transformers.LlamaForCausalLM(config).save_pretrained(tmp_path)
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    from explorer.stories.your_model.views import rope_view

    kind = scaling.get("rope_type", scaling.get("type"))
    inverse, _ = ROPE_INIT_FUNCTIONS[kind](config, "cpu")
    view = rope_view(from_path(tmp_path).rope, 128)
    np.testing.assert_allclose(view.wavelength, 2 * np.pi / inverse.double().numpy(), rtol=1e-5)
    assert view.scaling == f"after the config's rope_scaling ({kind})"


def test_a_rope_scaling_the_page_cannot_apply_is_left_out_and_said() -> None:
    from explorer.stories.your_model.views import rope_view
    from relpos_lab.extract import Rope

    view = rope_view(Rope(10000.0, 16, json.dumps({"rope_type": "longrope", "factor": 4})), 64)
    np.testing.assert_allclose(view.wavelength, 2 * np.pi * 10000.0 ** (np.arange(0, 16, 2) / 16))
    assert view.scaling.startswith("without the config's rope_scaling")
