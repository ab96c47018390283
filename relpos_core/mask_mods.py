"""Attention masks as FlexAttention ``mask_mod``s, each a :class:`~relpos_core.mods.Mod`.

    mask_mod(b, h, q_idx, kv_idx) -> bool: may query i = q_idx attend to key j = kv_idx

Each mask's ``source`` holds its numbers (a window of 16 is written 16), so the function that
runs, the one printed and the one downloaded are the same text. The masks, query i over key j:

    causal                j <= i
    sliding_window(w)     i - w < j <= i                       (the last w keys, i included)
    sinks(s, w)           j <= i  and  (j < s  or  i - j < w)  (StreamingLLM: s sinks + a window)
    prefix_lm(p)          j < p  or  j <= i                     (a bidirectional prefix)
    document(seg)         seg[i] == seg[j]                      (the query's own segment)
    padding(v)            j < v                                 (keys j >= v are padding)

``combine`` joins masks by and/or; ``dense`` evaluates one on index grids, ``check_rows`` names
the queries a mask leaves with no key, and ``block_kinds`` (from ``relpos_core.block_masks``)
reads which of FlexAttention's blocks it skips. A number in the source is a constant to
``torch.compile``: each new window compiles its own kernel.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Sequence

import torch

from relpos_core.block_masks import block_kinds, check_mask_mod, tile_kinds
from relpos_core.guard import check_fits
from relpos_core.mods import Mod
from relpos_core.validation import check_choice, check_int, check_tensor

__all__ = [
    "block_kinds",
    "causal",
    "check_rows",
    "combine",
    "dense",
    "document",
    "padding",
    "prefix_lm",
    "sinks",
    "sliding_window",
    "tile_kinds",
]

_SIGNATURE = "(b, h, q_idx, kv_idx)"
HOWS = ("and", "or")


def _mask(name: str, comment: str, body: str, words: str, **tensors: torch.Tensor) -> Mod:
    source = f"def {name}{_SIGNATURE}:\n    # {comment}\n    return {body}\n"
    return Mod("mask_mod", name, source, tensors, words)


def causal() -> Mod:
    """Query i sees keys j <= i.

    >>> print(causal().source, end="")
    def causal(b, h, q_idx, kv_idx):
        # query i sees keys j <= i
        return kv_idx <= q_idx
    """
    return _mask(
        "causal",
        "query i sees keys j <= i",
        "kv_idx <= q_idx",
        "Each query sees itself and the keys before it.",
    )


def sliding_window(window: int, n: int) -> Mod:
    """Query i sees the ``window`` keys i - window < j <= i (fewer near the start).

    >>> dense(sliding_window(2, 4), 4, 4).int()
    tensor([[1, 0, 0, 0],
            [1, 1, 0, 0],
            [0, 1, 1, 0],
            [0, 0, 1, 1]], dtype=torch.int32)
    """
    w = _window(window, n)
    return _mask(
        "sliding_window",
        f"query i sees keys i - {w} < j <= i",
        f"(kv_idx <= q_idx) & (q_idx - kv_idx < {w})",
        f"Each query sees itself and the {_keys(w - 1)} before it.",
    )


def sinks(count: int, window: int, n: int) -> Mod:
    """StreamingLLM: the first ``count`` keys (the sinks) stay visible to every later query,
    beside the causal window of ``window`` keys. ``count`` is at most the window.

    >>> dense(sinks(1, 2, 4), 4, 4).int()
    tensor([[1, 0, 0, 0],
            [1, 1, 0, 0],
            [1, 1, 1, 0],
            [1, 0, 1, 1]], dtype=torch.int32)
    """
    w = _window(window, n)
    s = check_int("count (attention sinks, at most the window)", count, 0, w)
    return _mask(
        "sinks",
        f"query i sees keys j <= i with j < {s} or i - j < {w}",
        f"(kv_idx <= q_idx) & ((kv_idx < {s}) | (q_idx - kv_idx < {w}))",
        f"Each query sees the first {_keys(s)} (the sinks) and the last {_keys(w)} up to itself.",
    )


def prefix_lm(prefix: int, n: int) -> Mod:
    """Keys j < ``prefix`` are seen by every query (the prefix reads both ways), the rest
    causally: j < prefix or j <= i.

    >>> dense(prefix_lm(2, 3), 3, 3).int()
    tensor([[1, 1, 0],
            [1, 1, 0],
            [1, 1, 1]], dtype=torch.int32)
    """
    n = check_int("n (sequence length)", n, 1)
    p = check_int("prefix (keys every query sees, at most n)", prefix, 0, n)
    return _mask(
        "prefix_lm",
        f"every query sees keys j < {p}; the rest causal",
        f"(kv_idx < {p}) | (kv_idx <= q_idx)",
        f"Every query sees the first {_keys(p)}; past them, the keys up to itself.",
    )


def document(segments: torch.Tensor) -> Mod:
    """A query sees the keys of its own segment: seg[i] == seg[j]. ``segments`` is an int
    tensor (n,), one id per position; the mask closes over it.

    >>> dense(document(torch.tensor([0, 0, 1])), 3, 3).int()
    tensor([[1, 1, 0],
            [1, 1, 0],
            [0, 0, 1]], dtype=torch.int32)
    """
    name = "segments (one int id per position, shape (n,))"
    seg = check_tensor(name, segments, 1, floating=False)
    if seg.dtype == torch.bool or seg.dtype.is_floating_point or seg.dtype.is_complex:
        raise ValueError(f"{name} must hold integers, got {seg.dtype}")
    if seg.numel() == 0:
        raise ValueError(f"{name} must hold at least 1 position, got shape (0,)")
    seg = seg.detach().to(torch.int64).clone()
    return _mask(
        "document",
        "a query sees the keys of its own segment",
        "segments[q_idx] == segments[kv_idx]",
        f"Each query sees the keys of its own segment ({len(seg.unique())} segments).",
        segments=seg,
    )


def padding(valid: int, n: int) -> Mod:
    """Keys j >= ``valid`` are padding, hidden from every query: j < valid.

    >>> dense(padding(2, 3), 2, 3).int()
    tensor([[1, 1, 0],
            [1, 1, 0]], dtype=torch.int32)
    """
    n = check_int("n (sequence length)", n, 1)
    v = check_int("valid (keys before the padding, at most n)", valid, 1, n)
    return _mask(
        "padding",
        f"keys j >= {v} are padding",
        f"kv_idx < {v}",
        f"Every query sees the first {_keys(v)}; the last {n - v} are padding.",
    )


def _keys(count: int) -> str:
    return "1 key" if count == 1 else f"{count} keys"


def _window(window: object, n: object) -> int:
    n = check_int("n (sequence length)", n, 1)
    return check_int("window (keys each query sees, at most n)", window, 1, n)


def combine(mods: Sequence[Mod], how: str = "and") -> Mod:
    """One mask_mod allowing a cell where all (``how="and"``) or any (``"or"``) of ``mods``
    do. Its source defines each part, renamed where two share a name, then the combination.

    >>> both = combine([causal(), padding(2, 3)], "and")
    >>> print(both.source.splitlines()[-1])
        return causal(b, h, q_idx, kv_idx) & padding(b, h, q_idx, kv_idx)
    """
    how = check_choice("how (how the masks combine)", how, HOWS)
    mods = list(mods) if isinstance(mods, Sequence) and not isinstance(mods, str) else None
    if not mods:
        raise ValueError("mods (the masks to combine) must hold at least 1 mask_mod, got none")
    taken: set[str] = {"torch", "b", "h", "q_idx", "kv_idx"}
    parts: list[tuple[str, str]] = []
    tensors: dict[str, torch.Tensor] = {}
    for place, mod in enumerate(mods):
        check_mask_mod(f"mods[{place}]", mod)
        renames = {old: _fresh(old, taken) for old in _globals(mod)}
        taken.update(renames.values())
        parts.append((renames[mod.name], _renamed(mod.source, renames)))
        tensors.update({renames[key]: value for key, value in mod.closes_over.items()})
    name = f"_{how}_".join(part for part, _ in parts)
    op = " & " if how == "and" else " | "
    body = op.join(f"{part}{_SIGNATURE}" for part, _ in parts)
    every = "every part allows" if how == "and" else "any part allows"
    source = "\n\n\n".join(text for _, text in parts)
    source += f"\n\n\ndef {name}{_SIGNATURE}:\n    # allowed where {every}\n"
    words = f"Allowed where {every}: " + " ".join(mod.words for mod in mods)
    return Mod("mask_mod", name, source + f"    return {body}\n", tensors, words)


def _globals(mod: Mod) -> list[str]:
    """The names a mod's source defines (its functions) or reads (its tensors)."""
    body = ast.parse(mod.source).body
    return [node.name for node in body if isinstance(node, ast.FunctionDef)] + list(mod.closes_over)


def _fresh(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... when already taken."""
    fresh, count = name, 1
    while fresh in taken:
        count += 1
        fresh = f"{name}_{count}"
    return fresh


def _renamed(source: str, renames: dict[str, str]) -> str:
    """``source`` with each name token renamed (comments and strings untouched)."""
    lines = source.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    hits = [t for t in tokens if t.type == tokenize.NAME and t.string in renames]
    for tok in reversed(hits):  # right to left: earlier columns stay valid
        row, col = tok.start[0] - 1, tok.start[1]
        line = lines[row]
        lines[row] = line[:col] + renames[tok.string] + line[col + len(tok.string) :]
    return "".join(lines).rstrip("\n")


def dense(mod: Mod, n_q: int, n_k: int) -> torch.Tensor:
    """The mask a mask_mod stands for: bool (n_q, n_k), cell (i, j) = mod(0, 0, i, j),
    evaluated once on broadcast index grids i (n_q, 1) and j (1, n_k).

    >>> dense(causal(), 2, 3).int()
    tensor([[1, 0, 0],
            [1, 1, 0]], dtype=torch.int32)
    """
    mod = check_mask_mod("mod", mod)
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    # the index grids (int64), the bool result, and an intermediate of each operator
    check_fits(
        f"dense({mod.name}) at n_q = {n_q}, n_k = {n_k}", 8 * (n_q + n_k) + 4 * n_q * n_k, None
    )
    zero = torch.zeros((), dtype=torch.int64)
    q_idx, kv_idx = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]  # (i,1), (1,j)
    try:
        allowed = torch.as_tensor(mod.fn(zero, zero, q_idx, kv_idx))
    except IndexError:  # a closed-over table shorter than the grid (segments of n < n_q)
        sizes = {key: tuple(t.shape) for key, t in mod.closes_over.items()}
        raise ValueError(
            f"n_q, n_k = {n_q}, {n_k} reach past the positions {mod.name} closes over "
            f"({sizes}); use n_q and n_k at most their length"
        ) from None
    return torch.broadcast_to(allowed.to(torch.bool), (n_q, n_k)).contiguous()


def check_rows(allowed: torch.Tensor) -> torch.Tensor:
    """``allowed`` (bool (n_q, n_k)) unchanged if every query sees a key; else a ValueError
    naming the queries left with none (their softmax would divide 0 by 0: NaN).

    >>> check_rows(dense(padding(1, 2), 2, 2)).int()
    tensor([[1, 0],
            [1, 0]], dtype=torch.int32)
    """
    allowed = check_tensor("allowed (bool mask (n_q, n_k))", allowed, 2, floating=False)
    if allowed.dtype != torch.bool:
        raise ValueError(f"allowed (bool mask (n_q, n_k)) must be bool, got {allowed.dtype}")
    empty = (~allowed.any(-1)).nonzero().flatten().tolist()
    if empty:
        shown = ", ".join(str(i) for i in empty[:5])
        more = f" and {len(empty) - 5} more" if len(empty) > 5 else ""
        rows = "query" if len(empty) == 1 else "queries"
        raise ValueError(
            f"the mask leaves {len(empty)} of {allowed.shape[0]} queries with no key to "
            f"attend to ({rows} {shown}{more}): their weights would be 0/0; widen the mask"
        )
    return allowed
