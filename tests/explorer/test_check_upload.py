"""An uploaded output is read as data, never as code: every accepted format gives its array,
and every hostile or broken file a message naming the problem."""

from __future__ import annotations

import io
import json
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch
from safetensors.numpy import save as save_safetensors

from explorer.stories.check.upload import MAX_BYTES, UploadProblem, read_upload

ARRAY = np.arange(12, dtype=np.float64).reshape(3, 4)


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def pt(value: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("out.npy", npy(ARRAY)),
        ("out.npz", npz(z=ARRAY)),
        ("out.pt", pt(torch.from_numpy(ARRAY))),
        ("out.pt", pt({"z": torch.from_numpy(ARRAY)})),
        ("OUT.SAFETENSORS", save_safetensors({"z": ARRAY})),
    ],
)
def test_every_format_gives_its_one_array(name: str, data: bytes) -> None:
    np.testing.assert_array_equal(read_upload(name, data), ARRAY)


def lying_header() -> bytes:
    """A safetensors header that claims 8 MB of data the file does not hold."""
    header = json.dumps(
        {"z": {"dtype": "F64", "shape": [1000, 1000], "data_offsets": [0, 8_000_000]}}
    )
    return struct.pack("<Q", len(header)) + header.encode() + bytes(16)


class Payload:
    """A pickle that would run code when loaded."""

    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("out.pkl", pickle.dumps(ARRAY), "the file type must be one of .npy, .npz, .pt, "
         ".safetensors, got .pkl"),
        ("out.npy", npy(np.array([Payload()], dtype=object)), "could not be read as .npy "
         "(ValueError: Object arrays cannot be loaded when allow_pickle=False"),
        ("out.pt", pt({"z": Payload()}), "could not be read as .pt (UnpicklingError"),
        ("out.npy", b"\x00" * (MAX_BYTES + 1), "is 8.0 MB; the limit is 8 MB"),
        ("out.npz", npz(z=np.zeros(6 * MAX_BYTES // 8)), "would unpack to 48 MB; the limit is "
         "32 MB"),
        ("out.npz", npz(a=ARRAY, b=ARRAY), "holds 2 arrays (a, b); upload one"),
        ("out.npy", npy(np.array(["a", "b"])), "holds <U1 values, not numbers"),
        ("out.safetensors", b"not a safetensors file", "could not be read as .safetensors"),
        ("out.npy", b"garbage", "could not be read as .npy"),
        ("cut.npy", npy(ARRAY)[:140], "could not be read as .npy (ValueError: EOF"),
        ("lie.safetensors", lying_header(), "could not be read as .safetensors (SafetensorError"),
        ("../../etc/x.npy", b"garbage", "'x.npy' could not be read"),
        ("out\x1b[31m.exe", b"", "'out?[31m.exe': the file type must be one of"),
    ],
)  # fmt: skip
def test_a_bad_upload_gets_a_message_naming_the_problem(name, data, message, capsys) -> None:
    with pytest.raises(UploadProblem) as raised:
        read_upload(name, data)
    assert message in str(raised.value)
    assert "this must never run" not in capsys.readouterr().out


def test_a_small_zip_that_unpacks_big_is_refused_before_it_unpacks() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("z.npy", b"\x00" * (40 * 2**20))  # 40 MB of zeros: about 40 kB packed
    assert len(buffer.getvalue()) < 100_000
    with pytest.raises(UploadProblem, match="would unpack to 40 MB"):
        read_upload("bomb.npz", buffer.getvalue())
