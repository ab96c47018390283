"""The Hub reader against a loopback server that answers range requests as the Hub does: it
reads the header and the position tensors' bytes only, finds what a local read finds, and refuses
a server that ignores ranges, a redirect to another host, a bad name, a header past its budget;
without a network it says so in words."""

from __future__ import annotations

import json
import struct
import urllib.error

import numpy as np
import pytest

from relpos_lab.extract import FileProblem, from_path
from relpos_lab.extract.hub import HubProblem, from_hub
from scripts.measure_hub_read import write_layout
from tests.lab.ranged_server import RangedServer

pytest.importorskip("transformers")


@pytest.fixture()
def served(tmp_path):
    servers = []

    def serve(ranges: bool = True) -> RangedServer:
        servers.append(RangedServer(tmp_path, ranges))
        return servers[-1]

    yield serve
    for server in servers:
        server.close()


def test_a_t5_small_layout_is_read_in_kilobytes_not_its_242_mb(tmp_path, served) -> None:
    written = write_layout(tmp_path / "acme" / "t5-small-layout")
    file = tmp_path / "acme" / "t5-small-layout" / "model.safetensors"
    server = served()
    positions, received = from_hub("acme/t5-small-layout", host=server.url)
    (length,) = struct.unpack("<Q", file.read_bytes()[:8])
    config = (tmp_path / "acme" / "t5-small-layout" / "config.json").stat().st_size
    tensors = sum(a.nbytes for a in written.values())
    assert received == config + 8 + length + tensors  # config, length, header, two tables
    assert received < 30_000 < 240_000_000 < file.stat().st_size
    assert [s.label for s in positions.t5] == ["encoder, layer 0", "decoder, layer 0"]
    for stack in positions.t5:
        name = f"{stack.stack}.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
        np.testing.assert_array_equal(stack.bias, written[name])
    local = from_path(tmp_path / "acme" / "t5-small-layout")
    assert local.summary() == positions.summary()


def test_a_sharded_checkpoint_reads_only_the_shard_with_the_bias(tmp_path, served) -> None:
    from safetensors.numpy import save_file

    folder = tmp_path / "acme" / "sharded"
    folder.mkdir(parents=True)
    bias = np.arange(64, dtype=np.float32).reshape(16, 4)
    name = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
    save_file({name: bias}, folder / "model-00001-of-00002.safetensors")
    save_file(
        {"lm_head.weight": np.zeros((4096, 64), np.float32)},
        folder / "model-00002-of-00002.safetensors",
    )
    index = {"weight_map": {name: "model-00001-of-00002.safetensors",
                            "lm_head.weight": "model-00002-of-00002.safetensors"}}  # fmt: skip
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    (folder / "config.json").write_text(json.dumps({"relative_attention_num_buckets": 16}))
    server = served()
    positions, received = from_hub("acme/sharded", host=server.url)
    np.testing.assert_array_equal(positions.t5[0].bias, bias)
    assert received < 2_000  # the second shard (1 MB) never read


def test_a_server_that_ignores_ranges_is_refused(tmp_path, served) -> None:
    write_layout(tmp_path / "acme" / "m")
    server = served(ranges=False)
    with pytest.raises(HubProblem, match="ignored the range request"):
        from_hub("acme/m", host=server.url)
    assert server.sent < 300_000_000  # a whole-file answer is cut at the bytes asked for


@pytest.mark.parametrize("name", ["../etc/passwd", "a/b/c", "", "x" * 200, "name with space",
                                  "https://evil.example/m", "a/..", "-lead"])  # fmt: skip
def test_only_a_hub_name_is_taken(name) -> None:
    with pytest.raises(HubProblem, match="model name must be a Hub name"):
        from_hub(name, host="http://127.0.0.1:9")


def test_a_missing_model_and_no_network_get_words(tmp_path, served, monkeypatch) -> None:
    server = served()
    with pytest.raises(HubProblem, match="has neither model.safetensors"):
        from_hub("acme/absent", host=server.url)

    def offline(*args, **kwargs):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr("urllib.request.OpenerDirector.open", offline)
    with pytest.raises(HubProblem, match="cannot reach huggingface.co .* needs a network"):
        from_hub("t5-small")


def test_a_redirect_off_the_hub_is_refused() -> None:
    from relpos_lab.extract.hub import HUB, Fetch

    fetch = Fetch(HUB, 1.0)
    assert fetch.allowed("https://huggingface.co/t5-small/resolve/main/model.safetensors")
    assert fetch.allowed("https://cdn-lfs-us-1.hf.co/repos/ab/cd")
    assert not fetch.allowed("https://huggingface.co.evil.example/x")
    assert not fetch.allowed("http://169.254.169.254/latest/meta-data")


def test_a_header_larger_than_the_budget_is_not_read(tmp_path, served) -> None:
    folder = tmp_path / "acme" / "huge"
    folder.mkdir(parents=True)
    with (folder / "model.safetensors").open("wb") as handle:
        handle.write(struct.pack("<Q", 64 * 2**20))
        handle.truncate(8 + 64 * 2**20)
    server = served()
    with pytest.raises(FileProblem, match="header claims|would take over"):
        from_hub("acme/huge", host=server.url)
    assert server.sent < 2**20
