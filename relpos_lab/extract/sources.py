"""Checkpoints from a path (the command) or from uploaded bytes (the page), read as data.

Weights come as .safetensors (only the header and the position tensors are read) or as a
PyTorch state dict (.pt, .pth, .bin), loaded with ``torch.load(weights_only=True)``: tensors and
plain containers only, never an object's code. A config is config.json beside the weights, one
uploaded with them, or the ``config`` a family checkpoint of this library carries.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from relpos_lab.extract.fields import load_json
from relpos_lab.extract.finders import find_positions, read_extracted
from relpos_lab.extract.positions import FORMAT, Positions
from relpos_lab.extract.safetensors_file import (
    Entry,
    FileProblem,
    Header,
    Reader,
    bytes_reader,
    read_header,
    read_tensor,
)
from relpos_lab.extract.state_dict import from_state_dict, load_state_dict

MAX_UPLOAD_MB = 32  # an upload's cap: a small model's whole checkpoint, or any extracted file
MAX_UPLOAD = MAX_UPLOAD_MB * 2**20
MAX_UNPACKED = 2 * MAX_UPLOAD  # what a zipped state dict may unpack to
MAX_CONFIG = 2**20
MAX_INDEX = 16 * 2**20  # a sharded checkpoint's index names every tensor: a few MB at most
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


def parse_config(data: bytes) -> dict:
    if len(data) > MAX_CONFIG:
        raise FileProblem(f"config.json is {len(data) / 2**20:.1f} MB; a config is under 1 MB")
    config = load_json(data, "config.json")
    if not isinstance(config, dict):
        raise FileProblem("config.json is not a JSON object")
    return config


def from_upload(files: list[tuple[str, bytes]]) -> Positions:
    """Positions in uploaded files: one weights file and, optionally, its config.json (other
    .json files of a model's folder, a tokenizer's or a generation config, are left aside).
    A name is the visitor's text: one with a control character (a NUL, which could hide a
    second suffix, an escape, a right-to-left override) is refused, not read."""
    for name, _ in files:
        odd = next((c for c in name if not c.isprintable()), None)
        if odd is not None:
            raise FileProblem(
                f"'{shown(name)}': a file name with a control character (U+{ord(odd):04X}) is "
                "not read; rename the file"
            )
    configs = [(n, d) for n, d in files if shown(n).lower() == "config.json"]
    weights = [(n, d) for n, d in files if suffix_of(shown(n)) in WEIGHTS]
    other = [n for n, _ in files if suffix_of(shown(n)) not in (*WEIGHTS, "json")]
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
    if suffix_of(shown(name)) == "safetensors":
        return from_safetensors(shown(name), bytes_reader(data), len(data), config)
    return from_state_dict(shown(name), load_state_dict(data, MAX_UNPACKED), config)


def shown(name: str) -> str:
    """A file's name as the page shows it: its last part, printable, at most 60 characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c if c.isprintable() else "?" for c in base)[:60]


# ---- a path on disk: regular files only --------------------------------------------------------
KINDS = {stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a named pipe", stat.S_ISCHR: "a device",
         stat.S_ISBLK: "a device", stat.S_ISSOCK: "a socket"}  # fmt: skip


def open_regular(path: Path):
    """``path`` opened for reading if it is a regular file (after links): a named pipe would
    wait for a writer forever, a device such as /dev/zero never ends. Opened without blocking,
    then checked on the open file itself, so nothing swapped in between is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise FileProblem(f"{path} does not exist") from None
    except OSError as error:
        raise FileProblem(f"{path} cannot be opened ({error.strerror})") from None
    except ValueError:  # a NUL in the name
        raise FileProblem(f"{str(path)[:100]!r} is not a file name") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((word for test, word in KINDS.items() if test(mode)), "not a file")
        raise FileProblem(f"{path} is {kind}, not a regular file; give a checkpoint file")
    return os.fdopen(fd, "rb")


def read_small(path: Path, cap: int, what: str) -> bytes:
    with open_regular(path) as handle:
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise FileProblem(f"{path} is over {cap / 2**20:.0f} MB; {what} is smaller")
    return data


def file_reader(path: Path) -> tuple[Reader, int]:
    """read(start, stop) of a regular file, and its size."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size

    def read(start: int, stop: int) -> bytes:
        with open_regular(path) as handle:
            handle.seek(start)
            return handle.read(stop - start)

    return read, size


def from_path(path: Path) -> Positions:
    """Positions in a checkpoint on disk: a weights file, or a directory as ``save_pretrained``
    writes it (config.json with model.safetensors, its sharded index, or pytorch_model.bin).
    Only regular files are read."""
    folder = path if path.is_dir() else path.parent
    config_file = folder / "config.json"
    config = {}
    if os.path.lexists(config_file):
        config = parse_config(read_small(config_file, MAX_CONFIG, "a config"))
    if path.is_dir():
        index = path / "model.safetensors.index.json"
        candidates = ["model.safetensors", "pytorch_model.bin", "model.pt", "model.pth"]
        found = [path / c for c in candidates if os.path.lexists(path / c)]
        if not found and os.path.lexists(index):
            return from_shards(path, index, config)
        if not found:
            raise FileProblem(f"{path} has none of {', '.join(candidates)} or a sharded index")
        path = found[0]
    if suffix_of(path.name) == "safetensors":
        read, size = file_reader(path)
        return from_safetensors(str(path), read, size, config)
    with open_regular(path) as handle:
        loaded = load_state_dict(handle)
    return from_state_dict(str(path), loaded, config)


def from_shards(folder: Path, index: Path, config: dict) -> Positions:
    """A sharded checkpoint: each shard's header, then the position tensors from their shards."""
    what = f"the sharded index {index.name}"
    weight_map = load_json(read_small(index, MAX_INDEX, "an index"), what)
    if isinstance(weight_map, dict):
        weight_map = weight_map.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise FileProblem(f"{what} has no weight_map of tensor names to shard file names")
    entries: dict[str, Entry] = {}
    readers: dict[str, Reader] = {}
    for name in sorted(set(weight_map.values())):
        shard = folder / Path(name).name  # never a path outside the folder
        read, size = file_reader(shard)
        header = read_header(read, size)
        entries.update(header.entries)
        readers.update(dict.fromkeys(header.entries, read))
    shapes = {name: e.shape for name, e in entries.items()}
    return find_positions(
        str(folder), shapes, lambda n: read_tensor(readers[n], entries[n]), config
    )
