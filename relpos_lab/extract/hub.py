"""A Hub model's position parameters, read by HTTP range requests: never the whole checkpoint.

For ``name`` (``t5-small``, ``google/flan-t5-base``): config.json, then model.safetensors' first
8 bytes (the header's length and, from Content-Range, the file's size), its header, and then only
the bytes of each position tensor the header locates. A sharded checkpoint: its index, then the
headers of the shards that may hold one. Only the Hub's own hosts (huggingface.co and its
download hosts under hf.co, where it redirects), a validated name, a timeout on every request and
a cap on the bytes read. ``host`` is for tests, which serve a file they wrote on loopback.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from relpos_lab.extract.configured import find_alibi, find_rope
from relpos_lab.extract.fields import Fields, load_json
from relpos_lab.extract.finders import t5_name
from relpos_lab.extract.positions import Positions
from relpos_lab.extract.projected_finder import may_hold
from relpos_lab.extract.safetensors_file import FileProblem, Reader, read_header
from relpos_lab.extract.sources import parse_config, positions_in_header

HUB = "https://huggingface.co"
HUB_HOSTS = ("huggingface.co", ".huggingface.co", ".hf.co")  # where the Hub redirects downloads
# The Hub's rule for a repository name: ASCII letters, digits, "-", "_", "." and at most one "/"
# (an owner and a name), neither part starting with "-" or ".", no "--" or "..", 96 characters
# at most each. \w and str.isalnum would let other scripts' letters and digits through.
PART = "[A-Za-z0-9][A-Za-z0-9_.-]{0,95}"
NAME = re.compile(f"{PART}(/{PART})?")
ALLOWED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_./")
MAX_HEADER = 8 * 2**20
MAX_TENSORS = 8 * 2**20  # the position tensors of any published model fit in far less
TIMEOUT_S = 10.0


class HubProblem(FileProblem):
    """The Hub could not be reached or refused; the message says which, in words."""


@dataclass
class Fetch:
    """Range reads of one host, counting the bytes received."""

    host: str
    timeout: float
    received: int = 0

    def allowed(self, url: str) -> bool:
        host = urlsplit(url).hostname or ""
        if self.host != HUB:
            return host == urlsplit(self.host).hostname
        return host == "huggingface.co" or host.endswith(HUB_HOSTS[1:])

    def open(self, url: str, headers: dict[str, str]):
        fetch = self

        class Redirects(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, req, fp, code, msg, hdrs, newurl):
                if not fetch.allowed(newurl):
                    raise HubProblem(
                        f"the Hub redirected to {urlsplit(newurl).hostname}, not its own host"
                    )
                return super().redirect_request(req, fp, code, msg, hdrs, newurl)

        opener = urllib.request.build_opener(Redirects)
        request = urllib.request.Request(url, headers={"User-Agent": "relpos-explorer", **headers})
        try:
            return opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            raise HubProblem(f"{url} answered {error.code} {error.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise HubProblem(
                f"this server cannot reach {urlsplit(self.host).hostname} ({reason}): the Hub "
                "needs a network; upload the model's file instead"
            ) from None

    def small(self, url: str, cap: int) -> bytes:
        with self.open(url, {}) as response:
            data = response.read(cap + 1)
        self.received += len(data)
        if len(data) > cap:
            raise HubProblem(f"{url} is over {cap // 1024} kB")
        return data

    def ranged(self, url: str, start: int, stop: int) -> tuple[bytes, int]:
        """Bytes [start, stop) of ``url`` and the file's whole size."""
        with self.open(url, {"Range": f"bytes={start}-{stop - 1}"}) as response:
            if response.status != 206:
                raise HubProblem(f"{url} ignored the range request (status {response.status})")
            total = (response.headers.get("Content-Range") or "").rpartition("/")[2]
            data = response.read(stop - start + 1)
        self.received += len(data)
        if len(data) != stop - start or not total.isdigit():
            raise HubProblem(f"{url} sent {len(data)} bytes for a range of {stop - start}")
        return data, int(total)

    def reader(self, url: str) -> tuple[Reader, int]:
        """read(start, stop) of a remote file, and its size."""
        first, size = self.ranged(url, 0, 8)  # the header's length, and the size
        budget = {"left": MAX_HEADER + MAX_TENSORS}

        def read(start: int, stop: int) -> bytes:
            if (start, stop) == (0, 8):
                return first
            budget["left"] -= stop - start
            if budget["left"] < 0:
                raise HubProblem(f"reading {url} would take over {budget_mb()} MB")
            return self.ranged(url, start, stop)[0]

        return read, size


def budget_mb() -> int:
    return (MAX_HEADER + MAX_TENSORS) // 2**20


def may_hold_position(name: str) -> bool:
    if not isinstance(name, str):
        return False
    return (
        t5_name(name) is not None
        or name.endswith(
            (
                "relative_attention_bias.weight",
                "embeddings_table",
                "scheme.table_k",
                "scheme.table_v",
            )
        )
        or may_hold(name)  # a projected table's parts (DeBERTa's), from its folder's layout
    )


def check_name(name: object) -> None:
    """A HubProblem unless ``name`` follows the Hub's rule; the message names the first
    character outside it (a Cyrillic 'а' looks like 'a', an Arabic-Indic '٣' is a digit)."""
    rule = (
        "a Hub name such as t5-small or google/flan-t5-base: ASCII letters, digits, '-', '_', "
        "'.' and at most one '/'"
    )
    if not isinstance(name, str):
        raise HubProblem(f"model name must be {rule}")
    odd = next((c for c in name if c not in ALLOWED), None)
    if odd is not None:
        raise HubProblem(
            f"model name must be {rule}; {name[:80]!r} has {odd!r} (U+{ord(odd):04X}), which is "
            "not one of them"
        )
    if not NAME.fullmatch(name) or ".." in name or "--" in name:
        raise HubProblem(
            f"model name must be {rule}, each part starting with a letter or digit, without "
            f"'--' or '..', at most 96 characters a part; got {name[:200]!r}"
        )


def from_hub(
    name: str, revision: str = "main", *, host: str = HUB, timeout: float = TIMEOUT_S
) -> tuple[Positions, int]:
    """The position parameters of Hub model ``name``, and the bytes received to find them."""
    check_name(name)
    if not isinstance(revision, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", revision):
        raise HubProblem(f"revision must be a branch, tag or commit, got {str(revision)[:40]!r}")
    fetch = Fetch(host, timeout)
    base = f"{host}/{name}/resolve/{revision}"
    try:
        config = parse_config(fetch.small(f"{base}/config.json", 2**20))
    except HubProblem as problem:
        if "answered 404" not in str(problem):
            raise
        config = {}
    try:
        read, size = fetch.reader(f"{base}/model.safetensors")
    except HubProblem as problem:
        if "answered 404" not in str(problem):
            raise
        return from_hub_shards(fetch, base, name, config), fetch.received
    header = read_header(read, size)
    return positions_in_header(name, header, read, config), fetch.received


def from_hub_shards(fetch: Fetch, base: str, name: str, config: dict) -> Positions:
    """A sharded checkpoint: the index, then each shard that may hold a position tensor."""
    try:
        data = fetch.small(f"{base}/model.safetensors.index.json", 4 * 2**20)
    except HubProblem as problem:
        if "answered 404" not in str(problem):
            raise
        raise HubProblem(
            f"{name} has neither model.safetensors nor model.safetensors.index.json on the Hub "
            "(a private or gated model needs a token, which this page does not take)"
        ) from None
    index = load_json(data, f"{name}'s model.safetensors.index.json")
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict):
        raise HubProblem(f"{name}'s model.safetensors.index.json has no weight_map")
    shards = {f for n, f in weight_map.items() if may_hold_position(n)}
    for shard in shards:
        if not isinstance(shard, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,120}", shard):
            raise HubProblem(f"the index names a shard {str(shard)[:60]!r} that is not a file")
    t5, shaw, notes, projected = [], [], [], []
    for shard in sorted(shards):
        read, size = fetch.reader(f"{base}/{shard}")
        part = positions_in_header(name, read_header(read, size), read, config)
        t5 += part.t5
        shaw += part.shaw
        projected += part.projected
        notes += [note for note in part.notes if note not in notes]
    fields = Fields(config, "config.json")
    alibi, rope = find_alibi(fields, notes), find_rope(fields, notes)
    found = (tuple(t5), tuple(shaw), alibi, rope, tuple(notes), tuple(projected))
    return Positions(name, *found)
