"""Checkpoints from a path (the command) or from uploaded bytes (the page), read as data.

Weights come as .safetensors (only the header and the position tensors are read) or as a
PyTorch state dict (.pt, .pth, .bin), loaded with ``torch.load(weights_only=True)``: tensors and
plain containers only, never an object's code. A config is config.json beside the weights, one
uploaded with them, or the ``config`` a family checkpoint of this library carries.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import numpy as np

from relpos_lab.extract.finders import find_positions, read_extracted
from relpos_lab.extract.positions import FORMAT, Positions
from relpos_lab.extract.safetensors_file import (
    FileProblem,
    Header,
    Reader,
    bytes_reader,
    read_header,
    read_tensor,
)

MAX_UPLOAD_MB = 32  # an upload's cap: a small model's whole checkpoint, or any extracted file
MAX_UPLOAD = MAX_UPLOAD_MB * 2**20
MAX_UNPACKED = 2 * MAX_UPLOAD  # what a zipped state dict may unpack to
MAX_CONFIG = 2**20
WEIGHTS = ("safetensors", "pt", "pth", "bin")


def suffix_of(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def from_safetensors(source: str, read: Reader, size: int, config: dict) -> Positions:
    header = read_header(read, size)
    return positions_in_header(source, header, read, config)


def positions_in_header(source: str, header: Header, read: Reader, config: dict) -> Positions:
    shapes = {name: e.shape for name, e in header.entries.items()}

    def get(name: str) -> np.ndarray:
        return read_tensor(read, header.entries[name])

    if header.metadata.get("format") == FORMAT:
        return read_extracted(source, shapes, get, header.metadata)
    return find_positions(source, shapes, get, config)


def from_state_dict(source: str, loaded: object, config: dict) -> Positions:
    """Positions in what ``torch.load(weights_only=True)`` returned."""
    import torch

    if not isinstance(loaded, dict):
        raise FileProblem(f"the file holds a {type(loaded).__name__}, not a state dict")
    if not config and isinstance(loaded.get("config"), dict):
        config = loaded["config"]  # a family checkpoint of this library
    for key in ("state_dict", "model", "module"):
        if isinstance(loaded.get(key), dict):
            loaded = loaded[key]
            break
    tensors = {}
    for key, value in loaded.items():
        if isinstance(value, torch.Tensor):
            tensors[str(key)] = value
        elif isinstance(value, dict):  # one level of nesting: {"encoder": {...}}
            tensors.update({f"{key}.{k}": v for k, v in value.items() if torch.is_tensor(v)})

    def get(name: str) -> np.ndarray:
        tensor = tensors[name].detach()
        return (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy()

    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    return find_positions(source, shapes, get, config)


def load_state_dict(data: bytes | Path) -> object:
    import torch

    opened = io.BytesIO(data) if isinstance(data, bytes) else data
    if zipfile.is_zipfile(opened):
        with zipfile.ZipFile(opened) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if isinstance(data, bytes) and unpacked > MAX_UNPACKED:
            raise FileProblem(
                f"the archive would unpack to {unpacked / 2**20:.0f} MB; the limit is "
                f"{MAX_UNPACKED // 2**20} MB"
            )
    source = io.BytesIO(data) if isinstance(data, bytes) else str(data)
    try:
        return torch.load(source, map_location="cpu", weights_only=True)
    except Exception as error:  # pickle.UnpicklingError for any object that is not weights
        named = re.search(r"GLOBAL ([\w.]+)", str(error))
        why = (
            f"it asks for {named[1][:80]}, which only running code from the file could build"
            if named
            else "it is damaged or not a PyTorch file"
        )
        raise FileProblem(
            f"the file is not a weights-only state dict: {why}. Nothing in it was run. Upload "
            "a .safetensors file, or a state dict of tensors (torch.save(model.state_dict()))"
        ) from None


def parse_config(data: bytes) -> dict:
    if len(data) > MAX_CONFIG:
        raise FileProblem(f"config.json is {len(data) / 2**20:.1f} MB; a config is under 1 MB")
    try:
        config = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FileProblem(f"config.json is not JSON ({error})") from None
    if not isinstance(config, dict):
        raise FileProblem("config.json is not a JSON object")
    return config


def from_upload(files: list[tuple[str, bytes]]) -> Positions:
    """Positions in uploaded files: one weights file and, optionally, its config.json (other
    .json files of a model's folder, a tokenizer's or a generation config, are left aside)."""
    configs = [(n, d) for n, d in files if shown(n).lower() == "config.json"]
    weights = [(n, d) for n, d in files if suffix_of(n) in WEIGHTS]
    other = [n for n, _ in files if suffix_of(n) not in (*WEIGHTS, "json")]
    if other or len(weights) != 1 or len(configs) > 1:
        raise FileProblem(
            "upload one weights file (." + ", .".join(WEIGHTS) + ") and, if you have it, its "
            f"config.json; got {', '.join(shown(n) for n, _ in files) or 'nothing'}"
        )
    name, data = weights[0]
    if len(data) > MAX_UPLOAD:
        raise FileProblem(
            f"{shown(name)} is {len(data) / 2**20:.1f} MB; the limit is {MAX_UPLOAD_MB} MB"
        )
    config = parse_config(configs[0][1]) if configs else {}
    if suffix_of(name) == "safetensors":
        return from_safetensors(shown(name), bytes_reader(data), len(data), config)
    return from_state_dict(shown(name), load_state_dict(data), config)


def shown(name: str) -> str:
    """A file's name as the page shows it: its last part, printable, at most 60 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isprintable() else "?" for c in base)[:60]


def file_reader(path: Path) -> Reader:
    def read(start: int, stop: int) -> bytes:
        with path.open("rb") as handle:
            handle.seek(start)
            return handle.read(stop - start)

    return read


def from_path(path: Path) -> Positions:
    """Positions in a checkpoint on disk: a weights file, or a directory as ``save_pretrained``
    writes it (config.json with model.safetensors, its sharded index, or pytorch_model.bin)."""
    folder = path if path.is_dir() else path.parent
    config_file = folder / "config.json"
    config = parse_config(config_file.read_bytes()) if config_file.is_file() else {}
    if path.is_dir():
        index = path / "model.safetensors.index.json"
        candidates = ["model.safetensors", "pytorch_model.bin", "model.pt", "model.pth"]
        found = [path / c for c in candidates if (path / c).is_file()]
        if not found and index.is_file():
            return from_shards(path, index, config)
        if not found:
            raise FileProblem(f"{path} has none of {', '.join(candidates)} or a sharded index")
        path = found[0]
    if suffix_of(path.name) == "safetensors":
        return from_safetensors(str(path), file_reader(path), path.stat().st_size, config)
    return from_state_dict(str(path), load_state_dict(path), config)


def from_shards(folder: Path, index: Path, config: dict) -> Positions:
    """A sharded checkpoint: each shard's header, then the position tensors from their shards."""
    from relpos_lab.extract.safetensors_file import Entry

    files = sorted(set(json.loads(index.read_text()).get("weight_map", {}).values()))
    entries: dict[str, Entry] = {}
    readers: dict[str, Reader] = {}
    for name in files:
        shard = folder / Path(name).name  # never a path outside the folder
        header = read_header(file_reader(shard), shard.stat().st_size)
        entries.update(header.entries)
        readers.update(dict.fromkeys(header.entries, file_reader(shard)))
    shapes = {name: e.shape for name, e in entries.items()}
    return find_positions(
        str(folder), shapes, lambda n: read_tensor(readers[n], entries[n]), config
    )
