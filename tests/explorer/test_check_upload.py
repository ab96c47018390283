"""An uploaded output is read as data, never as code: every accepted format gives its array,
and every hostile or broken file a message naming the problem, in the page's own words, before
anything the file states can size what the server does."""

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

from explorer.stories.check import upload
from explorer.stories.check.upload import (
    MAX_BYTES,
    MAX_MEMBERS,
    MAX_PICKLE,
    UploadProblem,
    read_upload,
    widget_size,
)

ARRAY = np.arange(12, dtype=np.float64).reshape(3, 4)
# A library's advice on loading a file unsafely is never passed on to a visitor.
ADVICE = ("trust", "allow_pickle", "weights_only", "pickle.load", "safe_globals", "Recursion")


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def pt(value: object, **options) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer, **options)
    return buffer.getvalue()


def zipped(members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def pt_with_pickle(data_pkl: bytes) -> bytes:
    """A file in torch.save's zip layout whose data.pkl is ``data_pkl`` (written by hand)."""
    source = zipfile.ZipFile(io.BytesIO(pt({"z": torch.zeros(2)})))
    members = {
        info.filename: data_pkl if info.filename.endswith("data.pkl") else source.read(info)
        for info in source.infolist()
    }
    return zipped(members, zipfile.ZIP_DEFLATED)


def npy_header(header: str, body: bytes = b"") -> bytes:
    """A .npy file of version 1.0 with this header text, padded as numpy pads it."""
    text = header + " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + body


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("out.npy", npy(ARRAY)),
        ("out.npy", npy(np.asfortranarray(ARRAY))),
        ("out.npz", npz(z=ARRAY)),
        ("out.pt", pt(torch.from_numpy(ARRAY))),
        ("out.pt", pt({"z": torch.from_numpy(ARRAY)})),
        ("OUT.SAFETENSORS", save_safetensors({"z": ARRAY})),
        ("out\x00.npy", npy(ARRAY)),  # a hostile client's name: shown as 'out?.npy'
    ],
)
def test_every_format_gives_its_one_array(name: str, data: bytes) -> None:
    np.testing.assert_array_equal(read_upload(name, data), ARRAY)


def test_the_limit_is_the_uploaders_megabyte_at_the_byte() -> None:
    """Streamlit's uploader says "8MB per file" and refuses 8,000,001 bytes ("File must be
    8.0MB or smaller."): so does the page, and 7.9 MiB is 8.3MB there and here."""
    assert MAX_BYTES == 8_000_000
    header = len(npy(np.zeros(0)))  # a 1-D float64 header: the same length for any count
    exact = npy(np.ones((MAX_BYTES - header) // 8))
    assert len(exact) == MAX_BYTES
    assert read_upload("out.npy", exact).size == (MAX_BYTES - header) // 8
    for size in (MAX_BYTES + 1, round(7.9 * 2**20)):
        with pytest.raises(UploadProblem) as raised:
            read_upload("out.npy", exact + bytes(size - MAX_BYTES))
        assert f"is {size:,} bytes ({widget_size(size)}); a file must be 8.0MB (8,000,000 " in (
            str(raised.value)
        )
    assert widget_size(round(7.9 * 2**20)) == "8.3MB"


@pytest.mark.parametrize(
    ("count", "written"),
    [(0, "0.0B"), (500, "500.0B"), (501, "0.5KB"), (8_000_000, "8.0MB"), (8_000_001, "8.0MB"),
     (8_283_750, "8.3MB"), (500_000_001, "0.5GB"), (7.6e12, "7600.0GB")],
)  # fmt: skip
def test_sizes_are_written_as_the_uploader_writes_them(count, written) -> None:
    """Streamlit's file size text (its frontend's getSizeDisplay): a larger unit of 1000 once
    the number passes half of it, one decimal."""
    assert widget_size(count) == written


def lying_header() -> bytes:
    """A safetensors header that claims 8 MB of data the file does not hold."""
    header = json.dumps(
        {"z": {"dtype": "F64", "shape": [1000, 1000], "data_offsets": [0, 8_000_000]}}
    )
    return struct.pack("<Q", len(header)) + header.encode() + bytes(16)


def deep_safetensors(depth: int) -> bytes:
    header = '{"__metadata__": ' + "[" * depth + "]" * depth + "}"
    return struct.pack("<Q", len(header)) + header.encode()


class Payload:
    """A pickle that would run code when loaded."""

    def __reduce__(self):
        return (print, ("this must never run",))


def nested_tuple_key(depth: int) -> bytes:
    """A pickle of {((...(),),): 1}: a key nested ``depth`` tuples deep (its repr recurses)."""
    return b"\x80\x02}" + b")" + b"\x85" * depth + b"K\x01s."


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("out.pkl", pickle.dumps(ARRAY), "the file type must be one of .npy, .npz, .pt, "
         ".safetensors, got '.pkl'"),
        ("out.npy", npy(np.array([Payload()], dtype=object)), "'out.npy': it holds Python "
         "objects (a pickle), not numbers; the page never loads pickles"),
        ("out.npz", npz(z=np.array([Payload()], dtype=object)), "it holds Python objects (a "
         "pickle)"),
        ("out.pt", pt({"z": Payload()}), "'out.pt': it holds Python objects (print) besides "
         "tensors; the page reads tensors only"),
        ("out.npz", npz(z=np.zeros(6 * MAX_BYTES // 8)), "would unpack to 48.0MB; the limit is "
         "32.0MB"),
        ("out.npz", npz(a=ARRAY, b=ARRAY), "it holds 2 arrays (a, b); upload one"),
        ("out.pt", pt({"a": torch.zeros(1), "b": torch.zeros(1)}), "holds 2 arrays (a, b)"),
        ("out.npy", npy(np.array(["a", "b"])), "it holds <U1 values, not numbers"),
        ("out.npy", npy(np.zeros(2, dtype=[("a", "f8")])), "values, not numbers"),
        ("out.safetensors", b"not a safetensors file", "could not be read as .safetensors"),
        ("out.npy", b"garbage!garbage!", "could not be read as .npy (ValueError: the magic "),
        ("cut.npy", npy(ARRAY)[:140], "its header says shape (3, 4) of float64, 96 bytes, but "
         "12 bytes follow it"),
        ("huge.npy", npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (10**6, "
         "10**6), }"), "could not be read as .npy"),
        ("huge.npy", npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, "
         "1000000), }"), "its header says shape (1000000, 1000000) of float64, "
         "8,000,000,000,000 bytes, but 0 bytes follow it"),
        ("deep.npy", npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': " + "(" * 3000
         + ")" * 3000 + "}"), "could not be read as .npy"),
        ("v3.npy", b"\x93NUMPY\x03\x00" + bytes(8), "its .npy format version is (3, 0)"),
        ("lie.safetensors", lying_header(), "could not be read as .safetensors (SafetensorError"),
        ("deep.safetensors", deep_safetensors(50_000), "could not be read as .safetensors"),
        ("old.pt", pt(torch.zeros(2), _use_new_zipfile_serialization=False), "it is not in "
         "torch.save's zip format (the format since PyTorch 1.6)"),
        ("deep.pt", pt_with_pickle(b"\x80\x02" + b"]" * 10**6 + b"a" * (10**6 - 1) + b"."),
         f"its pickle is 2,000,002 bytes; one naming a few tensors is a few hundred, and at most "
         f"{MAX_PICKLE:,} are read"),
        ("deep.pt", pt_with_pickle(b"\x80\x02" + b"]" * 30_000 + b"a" * 29_999 + b"."),
         "the .pt file holds a list, not a tensor"),
        ("key.pt", pt_with_pickle(nested_tuple_key(30_000)), "the .pt file's 'key 0, a tuple' "
         "is not a tensor"),
        ("../../etc/x.npy", b"garbage", "'x.npy' could not be read"),
        ("out\x1b[31m.exe", b"", "'out?[31m.exe': the file type must be one of"),
        ("out.npy\x00.exe", npy(ARRAY), "'out.npy?.exe': the file type must be one of"),
        ("a." + "\u202e" * 10_000, b"", "got '.?????????"),
    ],
)  # fmt: skip
def test_a_bad_upload_gets_a_message_naming_the_problem(name, data, message, capsys) -> None:
    with pytest.raises(UploadProblem) as raised:
        read_upload(name, data)
    text = str(raised.value)
    assert message in text
    assert not any(word.lower() in text.lower() for word in ADVICE), text
    assert len(text) < 400
    assert "this must never run" not in capsys.readouterr().out


def test_a_small_zip_that_unpacks_big_is_refused_before_it_unpacks() -> None:
    data = zipped({"z.npy": b"\x00" * (40 * 2**20)}, zipfile.ZIP_DEFLATED)  # about 40 kB packed
    assert len(data) < 100_000
    with pytest.raises(UploadProblem, match=r"would unpack to 41\.9MB"):
        read_upload("bomb.npz", data)


def many_members(count: int) -> bytes:
    return zipped({f"{i}.npy": b"" for i in range(count)})


@pytest.mark.parametrize("suffix", ["npz", "pt"])
def test_an_archive_of_many_members_is_refused_by_its_end_record_alone(suffix, monkeypatch) -> None:
    """60,000 empty members (5.6 MB): refused from the end record, before any listing is
    parsed (loading them one by one took 37 s)."""
    data = many_members(60_000)
    assert len(data) < MAX_BYTES

    def no_listing(*args, **kwargs):
        raise AssertionError("the archive's listing was parsed")

    monkeypatch.setattr(upload.zipfile, "ZipFile", no_listing)
    with pytest.raises(UploadProblem) as raised:
        read_upload(f"many.{suffix}", data)
    assert "the archive lists 60,000 members in" in str(raised.value)
    assert f"at most {MAX_MEMBERS} members" in str(raised.value)


def with_end_record(data: bytes, members: int) -> bytes:
    """``data`` whose end record states ``members`` members (a lie when it is fewer)."""
    end = data.rfind(b"PK\x05\x06")
    patched = bytearray(data)
    struct.pack_into("<HH", patched, end + 8, members, members)
    return bytes(patched)


def test_an_end_record_that_understates_its_members_is_refused_by_its_listing() -> None:
    data = with_end_record(many_members(20_000), 1)
    with pytest.raises(UploadProblem, match=r"lists 1 members in [\d,]+ bytes; at most 64 "):
        read_upload("few.npz", data)


def test_a_zip64_record_is_read_too() -> None:
    """torch.save writes a zip64 end record: its count is the one Python's and torch's
    readers use, and it is bounded as the classic one is."""
    data = bytearray(pt({"z": torch.zeros(2)}))
    record = data.rfind(b"PK\x06\x06")
    assert record > 0
    struct.pack_into("<QQ", data, record + 24, 70_000, 70_000)  # this disk, total
    with pytest.raises(UploadProblem, match="lists 70,000 members"):
        read_upload("zip64.pt", bytes(data))


def test_a_deep_key_never_reaches_a_repr() -> None:
    """A tuple key 30,000 deep: its repr raises RecursionError; the page names it by type."""
    key = ()
    for _ in range(30_000):
        key = (key,)
    with pytest.raises(RecursionError):
        str(key)
    with pytest.raises(UploadProblem, match="key 0, a tuple"):
        read_upload("key.pt", pt_with_pickle(nested_tuple_key(30_000)))
