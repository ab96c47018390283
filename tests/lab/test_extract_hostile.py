"""Every bad upload gets a message that names the problem, and nothing in it is ever run: a
pickle with code in it, a truncated file, a header that lies about its offsets, a file over the
cap, a tensor of the wrong shape, an archive that unpacks to far more than it weighs."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import numpy as np
import pytest
import torch
from safetensors.numpy import save

from relpos_lab.extract import MAX_UPLOAD_MB, FileProblem, from_upload

T5_NAME = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"


def safetensors_bytes(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


class Runs:
    """Unpickling this calls ``exec``: what a malicious checkpoint does."""

    def __reduce__(self):
        return (exec, ("import pathlib; pathlib.Path(__import__('os').environ['MARK']).touch()",))


def test_a_pickle_with_code_is_refused_and_never_run(tmp_path, monkeypatch) -> None:
    mark = tmp_path / "ran"
    monkeypatch.setenv("MARK", str(mark))
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2), "payload": Runs()}, buffer)
    with pytest.raises(FileProblem, match="not a weights-only state dict"):
        from_upload([("model.pt", buffer.getvalue())])
    assert not mark.exists()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\x00" * 5, "too short"),
        (struct.pack("<Q", 10**9) + b"{}", "header claims 1000000000 bytes"),
        (struct.pack("<Q", 4) + b"[1,2", "not JSON"),
        (safetensors_bytes([1]), "not a JSON object"),  # type: ignore[arg-type]
        (safetensors_bytes({T5_NAME: {"dtype": "F32", "shape": [8, 4]}}), "lacks dtype"),
        (
            safetensors_bytes(
                {T5_NAME: {"dtype": "PY", "shape": [8, 4], "data_offsets": [0, 128]}}, b"\x00" * 128
            ),
            "not a known one",
        ),  # fmt: skip
        # a header that lies: more bytes claimed than the file has ("a 2 GB file")
        (
            safetensors_bytes(
                {T5_NAME: {"dtype": "F32", "shape": [2**27, 4], "data_offsets": [0, 2**31]}}
            ),
            "past the end",
        ),  # fmt: skip
        # offsets that do not hold the shape
        (
            safetensors_bytes(
                {T5_NAME: {"dtype": "F32", "shape": [8, 4], "data_offsets": [0, 64]}}, b"\x00" * 64
            ),
            "needs 128",
        ),  # fmt: skip
        # two tensors over the same bytes
        (
            safetensors_bytes(
                {
                    "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                    "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]},
                },
                b"\x00" * 24,
            ),
            "overlap",
        ),  # fmt: skip
    ],
)
def test_a_damaged_or_lying_safetensors_file_gets_a_message(data, words) -> None:
    with pytest.raises(FileProblem, match=words):
        from_upload([("model.safetensors", data)])


def test_a_truncated_file_is_refused() -> None:
    data = save({T5_NAME: np.ones((8, 4), np.float32)})
    with pytest.raises(FileProblem, match="truncated"):
        from_upload([("model.safetensors", data[:-10])])


def test_a_file_over_the_cap_is_refused_before_it_is_read() -> None:
    data = b"\x00" * (MAX_UPLOAD_MB * 2**20 + 1)
    with pytest.raises(FileProblem, match=f"the limit is {MAX_UPLOAD_MB} MB"):
        from_upload([("model.safetensors", data)])


def test_an_archive_that_unpacks_to_far_more_is_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("model/data/0", b"\x00" * (2 * MAX_UPLOAD_MB * 2**20 + 1))
    assert len(buffer.getvalue()) < 2**20
    with pytest.raises(FileProblem, match="would unpack to"):
        from_upload([("model.pt", buffer.getvalue())])


@pytest.mark.parametrize(
    ("tensors", "words"),
    [
        ({T5_NAME: np.ones((8, 4, 2), np.float32)}, "a T5 bias is \\(num_buckets, heads\\)"),
        ({T5_NAME: np.ones((7, 4), np.float32)}, "num_buckets must be even"),
        ({"relative_position_k.embeddings_table": np.ones((4, 8), np.float32)},
         "\\(2k \\+ 1, d\\)"),
        ({"relative_position_k.embeddings_table": np.ones((5, 8), np.float32),
          "relative_position_v.embeddings_table": np.ones((7, 8), np.float32)}, "differ"),
        ({T5_NAME: np.full((8, 4), np.nan, np.float32)}, "NaN"),
    ],
)  # fmt: skip
def test_a_tensor_of_the_wrong_shape_or_values_is_named(tensors, words) -> None:
    with pytest.raises(FileProblem, match=words):
        from_upload([("model.safetensors", save(tensors))])


def test_an_upload_needs_one_weights_file() -> None:
    data = save({T5_NAME: np.ones((8, 4), np.float32)})
    for files in ([], [("a.exe", b"MZ")], [("a.safetensors", data), ("b.safetensors", data)]):
        with pytest.raises(FileProblem, match="upload one weights file"):
            from_upload(files)
    with pytest.raises(FileProblem, match="config.json is not JSON"):
        from_upload([("a.safetensors", data), ("config.json", b"{nope")])


def test_an_extracted_file_whose_metadata_lies_is_refused() -> None:
    metadata = {"format": "relpos-positions/1", "t5": json.dumps([{"tensor": "t5/x/0"}])}
    with pytest.raises(FileProblem, match="lacks|malformed"):
        from_upload([("p.safetensors", save({"w": np.ones(2, np.float32)}, metadata=metadata))])
    bad_rope = {"format": "relpos-positions/1", "rope": json.dumps({"base": -1, "head_dim": 3})}
    with pytest.raises(FileProblem, match="RoPE needs"):
        from_upload([("p.safetensors", save({"w": np.ones(2, np.float32)}, metadata=bad_rope))])
