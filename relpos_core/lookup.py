"""Shaw et al. (2018) eq. (3)-(4): which learned vector each (query, key) pair uses.

a_ij = w_{clip(j - i, k)},  clip(x, k) = max(-k, min(k, x)),  w = (w_-k, ..., w_k)

Stored 0-based: row ``clip(j - i, -k, k) + k`` of a (2k+1, d) table. The clip distance k is the
argument ``max_relative_position`` (tensor2tensor's and the widely copied PyTorch layer's name).
Queries sit at positions ``query_offset, query_offset + 1, ...`` of the key sequence: 0 for
self-attention, ``n_k - n_q`` for tensor2tensor's convention (queries at the last positions, as
when decoding with a key/value cache). This is the one place the clip index is built.
"""

from __future__ import annotations

import torch

from relpos_core.guard import check_fits
from relpos_core.ints import INT_LIMIT, check_index_args
from relpos_core.validation import check_int, check_tensor

INDEX_BYTES = 8  # int64


def relative_distances(
    n_q: int, n_k: int, query_offset: int = 0, device: torch.device | str | None = None
) -> torch.Tensor:
    """Signed distance j - i from the query at position i = query_offset + row to key j.

    A negative ``query_offset`` puts the first query before the first key (used for blocks).

    Returns int64 (n_q, n_k): [query row, key_position] -> key_position - query_position.

    >>> relative_distances(2, 3)
    tensor([[ 0,  1,  2],
            [-1,  0,  1]])
    >>> relative_distances(1, 3, query_offset=2)  # one query at the last position
    tensor([[-2, -1,  0]])
    """
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    query_offset = check_int(
        "query_offset (position of the first query)", query_offset, -INT_LIMIT, INT_LIMIT
    )
    check_fits(
        f"relative_distances with n_q = {n_q}, n_k = {n_k} (an int64 ({n_q}, {n_k}) table)",
        INDEX_BYTES * (n_q * n_k + n_q + n_k),
        None,
        device,
    )
    return relative_distances_unguarded(n_q, n_k, query_offset, device)


def relative_distances_unguarded(
    n_q: int, n_k: int, query_offset: int = 0, device: torch.device | str | None = None
) -> torch.Tensor:
    """``relative_distances`` without its checks and memory guard: for the library's own calls,
    whose whole memory the guard has already sized (with the caller's ``max_bytes``)."""
    keys = torch.arange(n_k, device=device)
    queries = torch.arange(query_offset, query_offset + n_q, device=device)
    return keys[None, :] - queries[:, None]  # (1,j),(i,1) -> (i,j)


def relative_index(
    n_q: int,
    n_k: int,
    max_relative_position: int,
    query_offset: int = 0,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Row of the relative table used by each pair: clip(j - i, -k, k) + k, in [0, 2k].

    k = ``max_relative_position``; k = 0 gives one shared vector (every entry 0);
    k >= max(n_q, n_k) - 1 clips nothing. Returns int64 (n_q, n_k).

    >>> relative_index(4, 4, 2)
    tensor([[2, 3, 4, 4],
            [1, 2, 3, 4],
            [0, 1, 2, 3],
            [0, 0, 1, 2]])
    """
    n_q, n_k, k, query_offset = check_index_args(n_q, n_k, max_relative_position, query_offset)
    check_fits(  # the distances and their clipped copy are held at once
        f"relative_index with n_q = {n_q}, n_k = {n_k} (two int64 ({n_q}, {n_k}) tables)",
        INDEX_BYTES * (2 * n_q * n_k + n_q + n_k),
        None,
        device,
    )
    return relative_index_unguarded(n_q, n_k, k, query_offset, device)


def relative_index_unguarded(
    n_q: int, n_k: int, k: int, query_offset: int = 0, device: torch.device | str | None = None
) -> torch.Tensor:
    """``relative_index`` without its checks and memory guard (see relative_distances_unguarded)."""
    return relative_distances_unguarded(n_q, n_k, query_offset, device).clamp(-k, k) + k


def relative_table(
    max_relative_position: int, d: int, seed: int = 0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """A (2k+1, d) table w = (w_-k, ..., w_k), Xavier-uniform from its own generator.

    Row r holds the vector for distance r - k. Same seed, same table; the global RNG is untouched.

    >>> relative_table(1, 4, seed=0).shape
    torch.Size([3, 4])
    """
    k = check_int("max_relative_position (clip distance k)", max_relative_position, 0)
    d = check_int("d (embedding size)", d, 1)
    check_fits(
        f"relative_table with max_relative_position = {k} and d = {d} (a ({2 * k + 1}, {d}) table)",
        (2 * k + 1) * d * 8,
        max_bytes=None,
    )
    seed = check_int("seed", seed, 0)
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    rows = 2 * k + 1
    bound = (6.0 / (rows + d)) ** 0.5  # nn.init.xavier_uniform_ on a (rows, d) matrix
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(rows, d, generator=gen, dtype=torch.float64) * 2 - 1).mul(bound).to(dtype)


def gather_relative(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Materialize a_ij = table[index[i, j]]: (2k+1, d), (n_q, n_k) -> (n_q, n_k, d).

    This is the O(n^2 d) tensor the efficient methods avoid.

    >>> gather_relative(torch.eye(3), relative_index(2, 2, 1))[0, 1]
    tensor([0., 0., 1.])
    """
    table = check_tensor("table", table, 2)
    if not isinstance(index, torch.Tensor) or index.dtype != torch.int64:
        got = index.dtype if isinstance(index, torch.Tensor) else type(index).__name__
        raise TypeError(f"index must be an int64 tensor of shape (n_q, n_k), got {got}")
    if index.dim() != 2:
        raise ValueError(f"index must have shape (n_q, n_k), got shape {tuple(index.shape)}")
    rows = table.shape[0]
    check_fits(
        f"gather_relative of a {tuple(table.shape)} table at a {tuple(index.shape)} index "
        f"(a {(*index.shape, table.shape[1])} tensor)",
        index.numel() * table.shape[1] * table.element_size(),
        None,
        table.device,
    )
    if index.numel() and (int(index.min()) < 0 or int(index.max()) >= rows):
        raise ValueError(
            f"index values must be in [0, {rows - 1}] for a table of {rows} rows, "
            f"got [{int(index.min())}, {int(index.max())}]"
        )
    return table[index]  # (i,j) -> (i,j,d)


def clip_distance_from_table(table: torch.Tensor, name: str = "table") -> int:
    """k for a (2k+1, d) table; the row count must be odd."""
    rows = table.shape[0]
    if rows % 2 == 0:
        raise ValueError(f"{name} must have 2k+1 rows (an odd count), got {rows} rows")
    return (rows - 1) // 2
