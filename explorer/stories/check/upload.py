"""A visitor's uploaded output, read as data and never as code.

Accepted: ``.npy`` and ``.npz`` (read here from the header, never unpickled), ``.pt``
(``torch.load`` with ``weights_only=True``: tensors only) and ``.safetensors``. Every size
that a file states is bounded before anything is sized by it:

- the file: at most ``MAX_BYTES``, in the uploader's own megabyte (see ``MB``);
- an archive (.npz and .pt are zip files): its end record read first, refused past
  ``MAX_MEMBERS`` members or a listing past ``MAX_LISTING`` bytes (tens of thousands of empty
  members took 37 s to load one by one), then past ``MAX_UNPACKED`` unpacked (a zip bomb);
- a .pt's pickle: at most ``MAX_PICKLE`` bytes (a deep nesting of lists is tiny packed);
- a .npy header: its shape times its item size must be the bytes that follow it.

Each refusal is an :class:`UploadProblem` in the page's own words (a library's own advice,
"if you trust the file...", is never passed on); nothing here raises anything else. The bytes
live in the visitor's own session (Streamlit's uploader); nothing is written to disk.
"""

from __future__ import annotations

import io
import math
import pickle
import re
import struct
import zipfile

import numpy as np

from relpos_lab.extract.sources import shown

MAX_MB = 8  # the uploader's cap (its max_upload_size) and ours, in the uploader's megabyte
# Streamlit's uploader counts 1000 bytes to its kB and 1000 kB to its MB (1024 only in a
# browser on Windows): its "8MB per file" refuses 8,000,001 bytes, and so does the page.
MB = 1000 * 1000
MAX_BYTES = MAX_MB * MB
MAX_UNPACKED = 4 * MAX_BYTES  # what an archive may unpack to
MAX_MEMBERS = 64  # torch.save of one tensor writes 7 members, np.savez one per array
MAX_LISTING = 64 * 1024  # the archive's central directory, in bytes
MAX_PICKLE = 64 * 1024  # a .pt's data.pkl: a few hundred bytes name one tensor
FORMATS = ("npy", "npz", "pt", "safetensors")
ADVICE = re.compile(r"trust|allow_pickle|weights_only|pickle\.load|unsafe|safe_globals", re.I)


class UploadProblem(ValueError):
    """An upload the page cannot use, with a message for the visitor."""


def widget_size(count: float, digits: int = 1) -> str:
    """A byte count as Streamlit's uploader writes it: ``8.0MB``, ``0.6KB`` (a larger unit
    once the number passes 500 of this one).

    >>> widget_size(8_000_000), widget_size(8_283_750), widget_size(MAX_BYTES, 0)
    ('8.0MB', '8.3MB', '8MB')
    """
    units, index = ("GB", "MB", "KB", "B"), 3
    while index and count > 500:
        count, index = count / 1000, index - 1
    return f"{count:.{digits}f}{units[index]}"


LIMIT_TEXT = f"{widget_size(MAX_BYTES, 0)} ({MAX_BYTES:,} bytes)"


def read_upload(name: str, data: bytes) -> np.ndarray:
    """The one array of numbers in the uploaded file ``name`` with bytes ``data``."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix not in FORMATS:
        got = f"'.{shown(suffix)[:12]}'" if suffix else "no extension"
        raise UploadProblem(
            f"{shown_name(name)}: the file type must be one of .{', .'.join(FORMATS)}, got {got}"
        )
    if len(data) > MAX_BYTES:
        raise UploadProblem(
            f"{shown_name(name)} is {len(data):,} bytes ({widget_size(len(data))}); a file "
            f"must be {widget_size(MAX_BYTES)} ({MAX_BYTES:,} bytes) or smaller"
        )
    try:
        arrays = READERS[suffix](data)
    except UploadProblem as problem:
        raise UploadProblem(f"{shown_name(name)}: {problem}") from None
    except Exception as error:  # a malformed file of any sort: say so, in words
        raise UploadProblem(
            f"{shown_name(name)} could not be read as .{suffix} ({detail(error)})"
        ) from None
    return one_array(name, arrays)


def shown_name(name: str) -> str:
    """The file's name as the page shows it, quoted: its last path part, printable, at most 60
    characters (relpos_lab.extract's ``shown``, the one rule for a visitor's file name)."""
    return f"'{shown(name)}'"


def detail(error: BaseException) -> str:
    """A reader's failure in a few words: its type and first line, unless the line gives the
    library's advice on loading the file unsafely, which is not the visitor's way forward."""
    text = str(error).strip().splitlines()[0][:160] if str(error).strip() else ""
    if isinstance(error, RecursionError):
        return "it is nested too deeply to read"
    if not text or ADVICE.search(text):
        return type(error).__name__
    return f"{type(error).__name__}: {text}"


def archive_end(data: bytes) -> tuple[int, int]:
    """(members, listing bytes) that a zip's end records state, the largest of the classic
    record and of the zip64 record wherever a reader may look for it (Python's zipfile just
    before the locator, torch's reader at the locator's offset), read before any listing."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65535))
    if end < 0 or end + 22 > len(data):
        raise UploadProblem("it is not a zip archive (no end record), as .npz and .pt files are")
    members, listing = struct.unpack_from("<HI", data, end + 10)
    locator = end - 20
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        (offset,) = struct.unpack_from("<Q", data, locator + 8)
        for record in (locator - 56, offset):
            if 0 <= record <= len(data) - 56 and data[record : record + 4] == b"PK\x06\x06":
                count, size = struct.unpack_from("<QQ", data, record + 32)
                members, listing = max(members, count), max(listing, size)
    return members, listing


def open_archive(data: bytes) -> zipfile.ZipFile:
    """The zip archive in ``data``, refused by its member count, its listing and its unpacked
    size, in that order: each bound is checked before the next step reads more."""
    members, listing = archive_end(data)
    if members > MAX_MEMBERS or listing > MAX_LISTING:
        raise UploadProblem(
            f"the archive lists {members:,} members in {listing:,} bytes; at most "
            f"{MAX_MEMBERS} members in {MAX_LISTING:,} bytes are read (one array is a few)"
        )
    archive = zipfile.ZipFile(io.BytesIO(data))
    infos = archive.infolist()
    unpacked = sum(info.file_size for info in infos)
    if len(infos) > MAX_MEMBERS:
        raise UploadProblem(f"the archive holds {len(infos):,} members; at most {MAX_MEMBERS}")
    if unpacked > MAX_UNPACKED:
        raise UploadProblem(
            f"the archive would unpack to {widget_size(unpacked)}; the limit is "
            f"{widget_size(MAX_UNPACKED)}"
        )
    return archive


def read_npy(data: bytes) -> dict[str, np.ndarray]:
    """The array of a .npy file, from its header and the bytes after it (never unpickled)."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    if version not in ((1, 0), (2, 0)):
        raise UploadProblem(f"its .npy format version is {version}; 1.0 and 2.0 are read")
    read_header = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }[version]
    shape, fortran, dtype = read_header(stream)
    if dtype.hasobject:
        raise UploadProblem(
            "it holds Python objects (a pickle), not numbers; the page never loads pickles"
        )
    if dtype.kind not in "fiu" or dtype.fields is not None or dtype.shape:
        raise UploadProblem(f"it holds {dtype} values, not numbers")
    count = math.prod(shape)
    start = stream.tell()
    if count * dtype.itemsize != len(data) - start:
        raise UploadProblem(
            f"its header says shape {tuple(shape)} of {dtype}, {count * dtype.itemsize:,} "
            f"bytes, but {len(data) - start:,} bytes follow it"
        )
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=start)
    return {"array": flat.reshape(shape, order="F" if fortran else "C").copy()}


def read_npz(data: bytes) -> dict[str, np.ndarray]:
    """The .npz's one array: its members are named from the listing, and the one read as a
    .npy file (np.savez writes one member ``<name>.npy`` per array)."""
    with open_archive(data) as archive:
        names = [info.filename for info in archive.infolist()]
        if len(names) != 1:
            keys = ", ".join(shown(n.removesuffix(".npy"))[:20] for n in names[:5])
            raise UploadProblem(
                f"it holds {len(names)} arrays ({keys or 'none'}); upload one: your function's "
                "output"
            )
        (array,) = read_npy(archive.read(names[0])).values()
    return {names[0].removesuffix(".npy"): array}


def read_pt(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a file torch.save wrote (its zip format, PyTorch 1.6 on)."""
    import torch  # the page has it loaded already

    if not data.startswith(b"PK"):
        raise UploadProblem(
            "it is not in torch.save's zip format (the format since PyTorch 1.6); save it "
            "again with a current torch, or as .npy"
        )
    with open_archive(data) as archive:
        pickles = [i for i in archive.infolist() if i.filename.endswith("data.pkl")]
        if any(info.file_size > MAX_PICKLE for info in pickles):
            size = max(info.file_size for info in pickles)
            raise UploadProblem(
                f"its pickle is {size:,} bytes; one naming a few tensors is a few hundred, and "
                f"at most {MAX_PICKLE:,} are read"
            )
    try:
        loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        named = re.search(r"GLOBAL ([\w.]+)", str(error))
        what = f" ({named[1]})" if named else ""
        raise UploadProblem(
            f"it holds Python objects{what} besides tensors; the page reads tensors only"
        ) from None
    if isinstance(loaded, torch.Tensor):
        loaded = {"tensor": loaded}
    if not isinstance(loaded, dict):
        raise UploadProblem(f"the .pt file holds a {type(loaded).__name__}, not a tensor")
    arrays = {}
    for index, (key, value) in enumerate(loaded.items()):
        # a key is shown by its type unless it is a name (a nested tuple's repr recurses)
        name = shown(key)[:40] if isinstance(key, str) else f"key {index}, a {type(key).__name__}"
        if not isinstance(value, torch.Tensor):
            raise UploadProblem(f"the .pt file's {name!r} is not a tensor")
        tensor = value.detach()
        name = name if name not in arrays else f"{name} ({index})"  # cut names may meet
        arrays[name] = (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy()
    return arrays


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    from safetensors.numpy import load

    return load(data)


READERS = {"npy": read_npy, "npz": read_npz, "pt": read_pt, "safetensors": read_safetensors}


def one_array(name: str, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The file's single array of numbers."""
    if len(arrays) != 1:
        keys = ", ".join(shown(k)[:20] for k in list(arrays)[:5])
        raise UploadProblem(
            f"{shown_name(name)} holds {len(arrays)} arrays ({keys or 'none'}); upload one: "
            "your function's output"
        )
    array = next(iter(arrays.values()))
    if array.dtype.kind not in "fiu":
        raise UploadProblem(f"{shown_name(name)} holds {array.dtype} values, not numbers")
    return array
