"""A visitor's uploaded output, read as data and never as code.

Accepted: ``.npy`` and ``.npz`` (numpy, ``allow_pickle=False``), ``.pt`` (``torch.load`` with
``weights_only=True``: tensors only) and ``.safetensors``. A file is refused before it is
parsed when it is larger than ``MAX_BYTES``; an archive (.npz, .pt) when its members would
unpack to more than ``MAX_UNPACKED`` (a zip bomb is a few kB that unpacks to GBs); and after
parsing when it holds not exactly one array of numbers (NaN where the definition is finite is
the checker's to say). Each refusal is an
:class:`UploadProblem` whose message names the problem; nothing here raises anything else.
The bytes live in the visitor's own session (Streamlit's uploader); nothing is written to disk.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from relpos_lab.extract.sources import shown

MAX_MB = 8  # the uploader's cap, and ours
MAX_BYTES = MAX_MB * 2**20
MAX_UNPACKED = 4 * MAX_BYTES  # what an archive may unpack to
FORMATS = ("npy", "npz", "pt", "safetensors")


class UploadProblem(ValueError):
    """An upload the page cannot use, with a message for the visitor."""


def read_upload(name: str, data: bytes) -> np.ndarray:
    """The one array of numbers in the uploaded file ``name`` with bytes ``data``."""
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if suffix not in FORMATS:
        raise UploadProblem(
            f"{shown_name(name)}: the file type must be one of .{', .'.join(FORMATS)}, "
            f"got {'.' + suffix if suffix else 'no extension'}"
        )
    if len(data) > MAX_BYTES:
        raise UploadProblem(
            f"{shown_name(name)} is {len(data) / 2**20:.1f} MB; the limit is {MAX_MB} MB"
        )
    try:
        arrays = READERS[suffix](data)
    except UploadProblem:
        raise
    except Exception as error:  # a malformed file of any sort: say so, in words
        raise UploadProblem(
            f"{shown_name(name)} could not be read as .{suffix} ({type(error).__name__}: "
            f"{str(error).splitlines()[0][:160] if str(error) else 'no detail'})"
        ) from None
    return one_array(name, arrays)


def shown_name(name: str) -> str:
    """The file's name as the page shows it, quoted: its last path part, printable, at most 60
    characters (relpos_lab.extract's ``shown``, the one rule for a visitor's file name)."""
    return f"'{shown(name)}'"


def check_archive(data: bytes) -> None:
    """A zip archive whose members unpack to at most MAX_UNPACKED bytes."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        unpacked = sum(info.file_size for info in archive.infolist())
    if unpacked > MAX_UNPACKED:
        raise UploadProblem(
            f"the archive would unpack to {unpacked / 2**20:.0f} MB; the limit is "
            f"{MAX_UNPACKED // 2**20} MB"
        )


def read_npy(data: bytes) -> dict[str, np.ndarray]:
    return {"array": np.load(io.BytesIO(data), allow_pickle=False)}


def read_npz(data: bytes) -> dict[str, np.ndarray]:
    check_archive(data)
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        return {key: archive[key] for key in archive.files}


def read_pt(data: bytes) -> dict[str, np.ndarray]:
    import torch  # the page has it loaded already

    if zipfile.is_zipfile(io.BytesIO(data)):
        check_archive(data)
    loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    if isinstance(loaded, torch.Tensor):
        loaded = {"tensor": loaded}
    if not isinstance(loaded, dict):
        raise UploadProblem(f"the .pt file holds a {type(loaded).__name__}, not a tensor")
    arrays = {}
    for key, value in loaded.items():
        if not isinstance(value, torch.Tensor):
            raise UploadProblem(f"the .pt file's {str(key)[:40]!r} is not a tensor")
        tensor = value.detach()
        arrays[str(key)] = (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy()
    return arrays


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    from safetensors.numpy import load

    return load(data)


READERS = {"npy": read_npy, "npz": read_npz, "pt": read_pt, "safetensors": read_safetensors}


def one_array(name: str, arrays: dict[str, np.ndarray]) -> np.ndarray:
    """The file's single array of numbers."""
    if len(arrays) != 1:
        keys = ", ".join(list(arrays)[:5])
        raise UploadProblem(
            f"{shown_name(name)} holds {len(arrays)} arrays ({keys or 'none'}); upload one: "
            "your function's output"
        )
    array = next(iter(arrays.values()))
    if array.dtype.kind not in "fiu":
        raise UploadProblem(f"{shown_name(name)} holds {array.dtype} values, not numbers")
    return array
