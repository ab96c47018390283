"""A PyTorch state dict (.pt, .pth, .bin) read as data: ``torch.load(weights_only=True)``, which
builds tensors and plain containers only, never an object's code, after the archive's member
count and unpacked size are checked (an upload's); each tensor becomes a numpy array or a
FileProblem in this package's words (torch's and numpy's own advice, "If you trust the file" or
"Use Tensor.to_dense()", is about code the visitor does not hold).
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import BinaryIO

import numpy as np

from relpos_lab.extract.fields import MAX_DEPTH, too_deep
from relpos_lab.extract.finders import find_positions
from relpos_lab.extract.positions import Positions
from relpos_lab.extract.safetensors_file import FileProblem

MAX_MEMBERS = 10_000  # a state dict's archive: one member per tensor's storage, and five more
DIRECTORY_ENTRY = b"PK\x01\x02"  # every central-directory entry a zip reader reads begins so
WIDENED = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def check_archive(data: bytes, max_unpacked: int) -> None:
    """Refuse an uploaded archive of too many members, counted by their directory entries'
    signature (a count no lying end record can lower) before the directory is parsed, then
    one that would unpack to over ``max_unpacked`` bytes."""
    members = data.count(DIRECTORY_ENTRY)
    if members > MAX_MEMBERS:
        raise FileProblem(
            f"the archive has {members:,} members; a state dict's has one per tensor, and at "
            f"most {MAX_MEMBERS:,} are read"
        )
    if not zipfile.is_zipfile(io.BytesIO(data)):
        return  # a state dict in torch's older, unzipped format
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, EOFError):
        raise FileProblem("the file is a damaged zip archive, not a PyTorch state dict") from None
    if unpacked > max_unpacked:
        raise FileProblem(
            f"the archive would unpack to {unpacked / 2**20:.0f} MB; the limit is "
            f"{max_unpacked // 2**20} MB"
        )


def load_state_dict(source: bytes | BinaryIO, max_unpacked: int | None = None) -> object:
    """What ``torch.load(weights_only=True)`` builds from ``source``, or a FileProblem. An
    upload's bytes have their archive checked first (``max_unpacked``)."""
    import torch

    if isinstance(source, bytes):
        if max_unpacked is not None:
            check_archive(source, max_unpacked)
        source = io.BytesIO(source)
    try:
        return torch.load(source, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle.UnpicklingError for any object that is not weights
        named = re.search(r"GLOBAL ([\w.]+)", str(error)[:4000])
        why = (
            f"it asks for {named[1][:80]}, which only running code from the file could build"
            if named
            else "it is damaged, nested too deeply, or not a PyTorch file"
        )
        raise FileProblem(
            f"the file is not a weights-only state dict: {why}. Nothing in it was run. Upload "
            "a .safetensors file, or a state dict of tensors (torch.save(model.state_dict()))"
        ) from None


def key_name(key: object) -> str | None:
    """A state dict key as a tensor name: text, or a small integer (a tuple or a 5,000-digit
    integer names no position tensor, and writing either out can fail)."""
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool) and key.bit_length() <= 64:
        return str(key)
    return None


def as_array(name: str, tensor) -> np.ndarray:
    """A tensor's values as numpy, or a FileProblem naming what it holds instead."""
    import torch

    tensor = tensor.detach()
    kind = (
        "a sparse tensor" if tensor.layout != torch.strided
        else "a quantized tensor" if tensor.is_quantized
        else "a tensor with no data (on the meta device)" if tensor.device.type == "meta"
        else "complex numbers" if tensor.is_complex()
        else ""
    )  # fmt: skip
    if kind:
        raise FileProblem(f"{name[:100]} holds {kind}; a position table is a plain real tensor")
    if str(tensor.dtype).removeprefix("torch.") in WIDENED:  # numpy has no such type
        tensor = tensor.float()
    try:
        return tensor.cpu().numpy()
    except (TypeError, RuntimeError):
        raise FileProblem(
            f"{name[:100]} holds {str(tensor.dtype).removeprefix('torch.')} values, which are "
            "not read as numbers here"
        ) from None


def from_state_dict(source: str, loaded: object, config: dict) -> Positions:
    """Positions in what ``torch.load(weights_only=True)`` returned."""
    import torch

    if not isinstance(loaded, dict):
        raise FileProblem(f"the file holds a {type(loaded).__name__}, not a state dict")
    if too_deep(loaded, MAX_DEPTH):  # nothing below may recurse into it (str, repr, hash)
        raise FileProblem(
            f"the file nests containers more than {MAX_DEPTH} levels deep; a state dict nests "
            "two or three (a checkpoint with its optimizer a few more)"
        )
    config_name = "config.json"
    if not config and isinstance(loaded.get("config"), dict):
        config, config_name = loaded["config"], "the checkpoint's config"  # a family checkpoint
    for key in ("state_dict", "model", "module"):
        if isinstance(loaded.get(key), dict):
            loaded = loaded[key]
            break
    tensors = {}
    for key, value in loaded.items():
        name = key_name(key)
        if name is None:
            continue
        if isinstance(value, torch.Tensor):
            tensors[name] = value
        elif isinstance(value, dict):  # one level of nesting: {"encoder": {...}}
            for inner, tensor in value.items():
                if key_name(inner) is not None and isinstance(tensor, torch.Tensor):
                    tensors[f"{name}.{key_name(inner)}"] = tensor

    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    return find_positions(
        source, shapes, lambda name: as_array(name, tensors[name]), config, config_name
    )
