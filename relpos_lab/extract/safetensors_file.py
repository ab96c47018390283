"""A .safetensors file read as data: its header first, then only the tensors asked for.

The format: 8 bytes (little-endian u64 N), N bytes of JSON header mapping each tensor's name to
its dtype, shape and [begin, end) byte offsets in the data that follows (an optional
``__metadata__`` maps strings to strings). Nothing here runs code from the file. Every claim the
header makes is checked before a byte of data is read: the offsets lie inside the file, do not
overlap, and hold exactly shape x itemsize bytes. Reading goes through ``read(start, stop)``, so
the same code serves a file on disk, an upload in memory and an HTTP range read.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

MAX_HEADER = 16 * 2**20  # a 100 GB checkpoint's header is a few MB
DTYPES = {  # safetensors' names -> numpy dtypes (BF16 is read as its bits, then widened)
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
    "BOOL": np.bool_,
}  # fmt: skip

Reader = Callable[[int, int], bytes]  # read(start, stop) -> the bytes [start, stop)


class FileProblem(ValueError):
    """A file that is not what it claims to be, with a message naming the problem."""


@dataclass(frozen=True)
class Entry:
    """One tensor the header declares: its dtype name, shape and byte range in the file."""

    dtype: str
    shape: tuple[int, ...]
    start: int  # absolute offsets in the file
    stop: int


@dataclass(frozen=True)
class Header:
    entries: dict[str, Entry]
    metadata: dict[str, str]
    size: int  # the file's size in bytes


def read_header(read: Reader, size: int) -> Header:
    """The checked header of a safetensors file of ``size`` bytes."""
    if size < 8:
        raise FileProblem(f"the file is {size} bytes: too short for a safetensors header")
    (length,) = struct.unpack("<Q", read(0, 8))
    if length > min(MAX_HEADER, size - 8):
        raise FileProblem(
            f"the header claims {length} bytes but the file has {size - 8} after its first 8 "
            f"(and a header may take at most {MAX_HEADER // 2**20} MB)"
        )
    from relpos_lab.extract.fields import load_json  # it names its problems as FileProblem

    raw = load_json(read(8, 8 + length), "the header")
    if not isinstance(raw, dict):
        raise FileProblem("the header is not a JSON object")
    metadata = raw.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise FileProblem("the header's __metadata__ must map names to strings")
    base = 8 + length
    entries = {name: entry(name, info, base, size) for name, info in raw.items()}
    spans = sorted((e.start, e.stop, name) for name, e in entries.items())
    for (_, stop, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < stop:
            raise FileProblem(f"the header's tensors {first!r} and {second!r} overlap")
    return Header(entries, dict(metadata), size)


def entry(name: str, info: object, base: int, size: int) -> Entry:
    """One header entry, checked: a known dtype, a shape of naturals, offsets that fit it."""
    if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
        raise FileProblem(f"the header's entry {name[:80]!r} lacks dtype, shape or data_offsets")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype not in DTYPES:
        raise FileProblem(f"tensor {name[:80]!r} has dtype {str(dtype)[:20]!r}, not a known one")
    naturals = (isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in shape)
    if not isinstance(shape, list) or len(shape) > 8 or not all(naturals):
        raise FileProblem(f"tensor {name[:80]!r} has shape {str(shape)[:40]}, not a list of sizes")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in offsets)
    ):
        raise FileProblem(f"tensor {name[:80]!r} has data_offsets {str(offsets)[:40]}")
    begin, end = offsets
    need = math.prod(shape) * np.dtype(DTYPES[dtype]).itemsize
    if not 0 <= begin <= end or end - begin != need:
        raise FileProblem(
            f"tensor {name[:80]!r}: its offsets {begin}-{end} hold {end - begin} bytes, but "
            f"{dtype} {tuple(shape)} needs {need}"
        )
    if base + end > size:
        raise FileProblem(
            f"tensor {name[:80]!r} ends at byte {base + end}, past the end of the file "
            f"({size} bytes): the file is truncated or its header lies"
        )
    return Entry(dtype, tuple(shape), base + begin, base + end)


def read_tensor(read: Reader, item: Entry) -> np.ndarray:
    """The tensor ``item`` as a numpy array (BF16 widened to float32, exactly)."""
    data = read(item.start, item.stop)
    if len(data) != item.stop - item.start:
        raise FileProblem(f"got {len(data)} bytes of a tensor of {item.stop - item.start}")
    array = np.frombuffer(data, dtype=np.dtype(DTYPES[item.dtype]).newbyteorder("<"))
    if item.dtype == "BF16":  # bfloat16 is the top half of a float32
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.reshape(item.shape).astype(array.dtype.newbyteorder("="))


def bytes_reader(data: bytes) -> Reader:
    """read(start, stop) over bytes in memory."""
    view = memoryview(data)
    return lambda start, stop: bytes(view[start:stop])
