"""Hostile files beyond a config: paths that are not regular files (a named pipe waits for a
writer forever, /dev/zero never ends), sharded indexes that are not what they claim, headers and
state dicts nested past Python's recursion, archives of tens of thousands of members, tensors
numpy cannot hold, tensor views that claim far more values than their file, names that made a
regular expression quadratic, Hub names in other scripts. The command answers each with exit
status 2 and one sentence (1 means "no positions found"); the library with a FileProblem."""

from __future__ import annotations

import io
import json
import os
import re
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from safetensors.numpy import save

from relpos_lab.extract import FileProblem, from_upload
from relpos_lab.extract.__main__ import main
from relpos_lab.extract.hub import HubProblem, from_hub

T5_NAME = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"
ROOT = Path(__file__).resolve().parents[2]


def command(path: Path, tmp_path: Path, capsys) -> tuple[int, str]:
    status = main([str(path), "--out", str(tmp_path / "out.safetensors")])
    return status, capsys.readouterr().err


def separate(path: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """The command in its own process: a path that would block fails the timeout, not the run."""
    return subprocess.run(
        [sys.executable, "-m", "relpos_lab.extract", path, "--out", str(tmp_path / "o.st")],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_and_a_device_are_refused_not_read(tmp_path) -> None:
    pipe = tmp_path / "model.pt"
    os.mkfifo(pipe)
    for path, kind in ((pipe, "a named pipe"), (Path("/dev/zero"), "a device")):
        done = separate(str(path), tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"is {kind}, not a regular file" in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("member", ["model.safetensors", "config.json", "shard.safetensors"])
def test_a_folder_holding_a_named_pipe_is_refused(tmp_path, member, capsys) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    if member == "shard.safetensors":
        index = {"weight_map": {T5_NAME: member}}
        (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    else:
        (folder / "pytorch_model.bin").write_bytes(b"")
    os.mkfifo(folder / member)
    status, said = command(folder, tmp_path, capsys)
    assert status == 2 and f"{member} is a named pipe, not a regular file" in said


@pytest.mark.parametrize(
    ("index", "words"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "has no weight_map"),
        ('{"weight_map": [1]}', "has no weight_map"),
        ('{"weight_map": {"a": 1}}', "has no weight_map of tensor names to shard file names"),
        ('{"weight_map": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests"),
        ('{"weight_map": {"a": "missing.safetensors"}}', "missing.safetensors does not exist"),
        ('{"weight_map": {"a": ".."}}', "is a folder, not a regular file"),
        ('{"weight_map": {"a": "x\\u0000y"}}', "is not a file name"),
    ],
)
def test_an_unreadable_sharded_index_exits_2_with_a_sentence(tmp_path, index, words, capsys):
    folder = tmp_path / "sharded"
    folder.mkdir()
    (folder / "model.safetensors.index.json").write_text(index)
    status, said = command(folder, tmp_path, capsys)
    assert status == 2, said
    assert words in said and "Traceback" not in said
    assert said.count("\n") == 1  # one sentence


def test_the_command_refuses_an_output_it_cannot_write(tmp_path, capsys) -> None:
    weights = tmp_path / "m.safetensors"
    weights.write_bytes(save({T5_NAME: np.ones((32, 4), np.float32)}))
    status = main([str(weights), "--out", str(tmp_path)])  # a folder
    assert status == 2 and "is not a regular file" in capsys.readouterr().err


def header_file(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (header_file(b"[" * 300_000 + b"]" * 300_000), "the header nests deeper than"),
        (header_file(b'{"a": {"shape": ' + b"[" * 50 + b"]" * 50 + b"}}"), "more than 32 levels"),
        (header_file(b'{"a": {"dtype": "F32", "shape": [' + b"9" * 5000 + b"]}}"), "4,300 digits"),
        (header_file(b'{"__metadata__": {"format": "relpos-positions/1", "t5": "'
                     + b"[" * 100_000 + b'"}}'), "metadata 't5' nests deeper"),
    ],
)  # fmt: skip
def test_a_header_nested_or_numbered_past_reading_is_refused(tmp_path, data, words, capsys):
    with pytest.raises(FileProblem, match=words):
        from_upload([("model.safetensors", data)])
    path = tmp_path / "model.safetensors"
    path.write_bytes(data)
    status, said = command(path, tmp_path, capsys)
    assert status == 2 and re.search(words, said) and "Traceback" not in said


def saved_deep(obj: object) -> bytes:
    """torch.save of a structure nested too deep for the default stack (written in a thread with
    a large one), as a hostile file would hold it."""
    out = {}

    def write() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(1_000_000)
        try:
            buffer = io.BytesIO()
            torch.save(obj, buffer)
            out["data"] = buffer.getvalue()
        finally:
            sys.setrecursionlimit(limit)

    size = threading.stack_size(2**29)
    try:
        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(size)
    return out["data"]


def nested(depth: int, make) -> object:
    value = make(None)
    for _ in range(depth):
        value = make(value)
    return value


@pytest.mark.parametrize(
    "payload",
    [
        {"x": nested(50_000, lambda v: [v])},  # a value
        {nested(50_000, lambda v: (v,)): torch.ones(2)},  # a key
        {"config": nested(50_000, lambda v: {"a": v})},  # a family checkpoint's config
    ],
    ids=["value", "key", "config"],
)
def test_a_state_dict_nested_past_recursion_is_refused_in_words(tmp_path, payload, capsys):
    data = saved_deep({**payload, T5_NAME: torch.ones(32, 4)})
    with pytest.raises(FileProblem, match="nests containers more than 32 levels deep"):
        from_upload([("model.pt", data)])
    (tmp_path / "model.pt").write_bytes(data)
    status, said = command(tmp_path / "model.pt", tmp_path, capsys)
    assert status == 2 and "nests containers" in said


def test_an_archive_of_many_members_is_refused_before_it_is_opened(monkeypatch) -> None:
    buffer = io.BytesIO()
    torch.save({T5_NAME: torch.ones(32, 4)}, buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for info in source.infolist():
            archive.writestr(info.filename, source.read(info))
        for i in range(30_000):
            archive.writestr(f"archive/junk/{i}", b"")
    opened = []
    monkeypatch.setattr(zipfile.ZipFile, "__init__", lambda *a, **k: opened.append(a))
    monkeypatch.setattr(torch, "load", lambda *a, **k: opened.append(a))
    with pytest.raises(FileProblem, match="the archive has 30,00[0-9] members"):
        from_upload([("model.pt", out.getvalue())])
    assert not opened


def saved(tensors: dict) -> bytes:
    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("tensor", "words"),
    [
        (torch.ones(32, 4).to_sparse(), "holds a sparse tensor"),
        (torch.ones(32, 4, dtype=torch.complex64), "holds complex numbers"),
        (torch.ones(32, 4, device="meta"), "holds a tensor with no data"),
        (torch.ones(32, 4, dtype=torch.bool), "holds bool values, not numbers"),
    ],
)
def test_a_tensor_numpy_cannot_hold_is_named_in_the_explorers_words(tensor, words) -> None:
    with pytest.raises(FileProblem) as refused:
        from_upload([("model.pt", saved({T5_NAME: tensor}))])
    said = str(refused.value)
    assert words in said
    for advice in ("to_dense", "Use Tensor", "If you trust", "weights_only", "allow_pickle"):
        assert advice not in said


def test_float8_and_bfloat16_tables_are_read_exactly() -> None:
    table = torch.arange(128, dtype=torch.float32).reshape(32, 4) / 8
    for dtype in (torch.bfloat16, torch.float8_e4m3fn):
        found = from_upload([("model.pt", saved({T5_NAME: table.to(dtype)}))])
        np.testing.assert_array_equal(found.t5[0].bias, table.to(dtype).float().numpy())


def test_a_pickle_that_asks_for_code_gets_no_advice_from_torch() -> None:
    class Runs:
        def __reduce__(self):
            return (print, ("ran",))

    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2), "x": Runs()}, buffer)
    with pytest.raises(FileProblem) as refused:
        from_upload([("model.pt", buffer.getvalue())])
    said = str(refused.value)
    assert "it asks for" in said and "Nothing in it was run" in said
    assert "trust" not in said and "weights_only" not in said


def test_views_claiming_more_values_than_their_file_are_refused_before_they_are_read() -> None:
    """A stride-0 view of one value claims (131073, 65536) in a few bytes of file."""
    huge = torch.zeros(1).expand(131_073, 65_536)
    with pytest.raises(FileProblem, match="would hold over 16,777,216 values"):
        from_upload([("model.pt", saved({"relative_position_k.embeddings_table": huge}))])
    many = {f"encoder.block.{i}.relative_attention_bias.weight": torch.zeros(1).expand(32, 4096)
            for i in range(200)}  # fmt: skip
    with pytest.raises(FileProblem, match="would hold over"):
        from_upload([("model.pt", saved(many))])


OLD_T5_KEY = re.compile(  # the expression this layout was matched with, quadratic on long names
    r"(?:^|\.)(?P<stack>encoder|decoder)\.block\.(?P<layer>\d+)\."
    r"(?:.*\.)?(?P<glob>global_)?relative_attention_bias\.weight$"
)
PARTS = st.sampled_from(
    ["encoder", "decoder", "block", "0", "12", "layer", "x", "", "relative_attention_bias",
     "global_relative_attention_bias", "weight"]
)  # fmt: skip


@given(st.lists(PARTS, max_size=10))
def test_t5_names_are_read_as_the_old_expression_read_them(parts) -> None:
    from relpos_lab.extract.finders import t5_name

    name = ".".join(parts)
    match = OLD_T5_KEY.search(name)
    expected = None
    if match:
        expected = (match["stack"], int(match["layer"]), bool(match["glob"]))
    assert t5_name(name) == expected


def test_a_long_name_in_a_header_is_read_in_linear_time() -> None:
    """8 MB of 'encoder.block.0.' with no bias at its end: the expression above backtracked
    from every one of its 500,000 starts (hours); read part by part it is a split."""
    from relpos_lab.extract.finders import t5_name

    name = "encoder.block.0." * 500_000 + "xrelative_attention_bias.weight"
    assert t5_name(name) is None
    assert t5_name("encoder.block.٣.relative_attention_bias.weight") is None  # not an ASCII digit


@pytest.mark.parametrize(
    "name",
    [
        "t5-smаll",  # a Cyrillic а
        "t5-small٣",  # an Arabic-Indic three
        "ｔ5-small",  # a fullwidth t
        "google/flan-t5-baseΑ",  # a Greek capital alpha
        "t5-small\n",  # `$` matched before a final newline
        "t5\u200bsmall",  # a zero-width space
        "a/b/c",
        "--x",
        "a--b",
        "a..b",
        "x" * 97,
    ],
)
def test_a_hub_name_outside_the_hubs_rule_is_refused_before_any_request(name) -> None:
    with pytest.raises(HubProblem, match="model name must be a Hub name") as refused:
        from_hub(name, host="http://127.0.0.1:9")  # nothing listens: a request would say so
    if any(ord(c) > 127 or c == "\n" for c in name):
        odd = next(c for c in name if ord(c) > 127 or c == "\n")
        assert f"U+{ord(odd):04X}" in str(refused.value)


@pytest.mark.parametrize("name", ["t5-small", "google/flan-t5-base", "a_b.c-d", "X/" + "y" * 96])
def test_a_name_the_hub_allows_passes(name) -> None:
    from relpos_lab.extract.hub import check_name

    check_name(name)
