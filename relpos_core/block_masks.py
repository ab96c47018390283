"""Which of FlexAttention's blocks a mask_mod skips, read from torch's own ``BlockMask``.

FlexAttention cuts the (n_q, n_k) scores into blocks of B x B cells (B = 128 by default) and
sorts each block by the mask: skipped (no cell allowed: never computed), full (every cell
allowed: computed without calling the mask_mod) or partial (computed, then masked). Torch pads
the mask with False up to a multiple of B, so a block that reaches past n_q or n_k is never
full. Torch 2.13 on the CPU takes any block size >= 1, eager and compiled (1, 8, 16, 17, 100
and 128 were checked against SDPA); GPU kernels want their own tile sizes, 128 by default.
"""

from __future__ import annotations

import math

import torch

from relpos_core.guard import check_fits
from relpos_core.mods import Mod
from relpos_core.validation import check_int

#: FlexAttention's default block (``torch.nn.attention.flex_attention._DEFAULT_SPARSE_BLOCK_SIZE``).
BLOCK_SIZE = 128
SKIPPED, PARTIAL, FULL = 0, 1, 2


def check_mask_mod(name: str, mod: object) -> Mod:
    """``mod`` is a :class:`Mod` of kind "mask_mod"."""
    if not isinstance(mod, Mod) or mod.kind != "mask_mod":
        got = f"a {mod.kind} {mod.name!r}" if isinstance(mod, Mod) else type(mod).__name__
        raise ValueError(f"{name} must be a mask_mod (relpos_core.mods.Mod), got {got}")
    return mod


def block_kinds(
    mod: Mod, n_q: int, n_k: int, block_size: int = BLOCK_SIZE
) -> tuple[torch.Tensor, float]:
    """(kinds, share skipped): kinds is int64 (ceil(n_q / B), ceil(n_k / B)) holding 0 for a
    skipped block, 1 partial, 2 full, as ``create_block_mask(mod.fn, 1, 1, n_q, n_k,
    BLOCK_SIZE=B)`` sorts them (its kv_indices and full_kv_indices); the share is skipped
    blocks over all blocks. ``block_size`` B is in [1, max(128, n_q, n_k)].

    >>> from relpos_core.mask_mods import causal
    >>> kinds, skipped = block_kinds(causal(), 4, 4, 2)
    >>> kinds, skipped
    (tensor([[1, 0],
            [2, 1]]), 0.25)
    """
    from torch.nn.attention.flex_attention import create_block_mask  # loads torch's compiler

    mod = check_mask_mod("mod", mod)
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = check_int("n_k (number of keys)", n_k, 1)
    top = max(BLOCK_SIZE, n_q, n_k)
    size = check_int(
        "block_size (FlexAttention's block, at most max(128, n_q, n_k))", block_size, 1, top
    )
    rows, cols = math.ceil(n_q / size), math.ceil(n_k / size)
    # the padded mask and torch's per-cell intermediates while it is built (upper bound)
    check_fits(
        f"block_kinds({mod.name}) at n_q = {n_q}, n_k = {n_k}, block {size}",
        16 * rows * cols * size * size,
        None,
    )
    blocks = create_block_mask(mod.fn, 1, 1, n_q, n_k, device="cpu", BLOCK_SIZE=size)
    kinds = torch.full((rows, cols), SKIPPED, dtype=torch.int64)
    for kind, counts, indices in (
        (PARTIAL, blocks.kv_num_blocks, blocks.kv_indices),
        (FULL, blocks.full_kv_num_blocks, blocks.full_kv_indices),
    ):
        # row r lists its blocks' columns first: indices[r, :counts[r]]
        listed = torch.arange(indices.shape[-1]) < counts[0, 0, :, None].long()  # (r, c)
        row, place = listed.nonzero(as_tuple=True)
        kinds[row, indices[0, 0][row, place].long()] = kind
    return kinds, float((kinds == SKIPPED).double().mean())


def tile_kinds(allowed: torch.Tensor, block_size: int = BLOCK_SIZE) -> tuple[torch.Tensor, float]:
    """``block_kinds`` from a dense bool mask (n_q, n_k), by counting it tile by tile, padded
    with False as torch pads it: what ``create_block_mask`` sorts, without running it (its
    first call loads torch's compiler, some 150 MB). The tests hold the two equal.

    >>> tile_kinds(torch.ones(4, 4, dtype=torch.bool).tril(), 2)
    (tensor([[1, 0],
            [2, 1]]), 0.25)
    """
    if not isinstance(allowed, torch.Tensor) or allowed.dtype != torch.bool or allowed.dim() != 2:
        raise ValueError(f"allowed must be a bool tensor (n_q, n_k), got {allowed!r:.60}")
    n_q, n_k = allowed.shape
    top = max(BLOCK_SIZE, n_q, n_k)
    size = check_int(
        "block_size (FlexAttention's block, at most max(128, n_q, n_k))", block_size, 1, top
    )
    rows, cols = math.ceil(n_q / size), math.ceil(n_k / size)
    padded = torch.zeros(rows * size, cols * size, dtype=torch.bool)
    padded[:n_q, :n_k] = allowed
    tiles = padded.view(rows, size, cols, size).transpose(1, 2)  # (rows, cols, B, B)
    kinds = torch.where(tiles.flatten(2).any(-1), PARTIAL, SKIPPED)
    kinds = torch.where(tiles.flatten(2).all(-1), FULL, kinds)
    return kinds, float((kinds == SKIPPED).double().mean())
