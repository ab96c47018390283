"""Attention masks as bool tensors: True = the query may attend to that key.

This is the convention of torch's scaled_dot_product_attention and of seed 001's layer
(``mask == 0`` is masked). Seed 004's padding mask uses the opposite (1 = pad); ours is inverted.
"""

from __future__ import annotations

import torch

from relpos_core.checks import check_int, check_tensor


def causal_mask(n_q: int, n_k: int | None = None, first: int = 0) -> torch.Tensor:
    """Key j is visible to query i iff j <= i. Returns bool (n_q, n_k).

    Row r is the query at position ``first + r`` (a block of rows of a longer sequence).

    >>> causal_mask(3).int()
    tensor([[1, 0, 0],
            [1, 1, 0],
            [1, 1, 1]], dtype=torch.int32)
    >>> causal_mask(1, 3, first=1).int()
    tensor([[1, 1, 0]], dtype=torch.int32)
    """
    n_q = check_int("n_q (number of queries)", n_q, 1)
    n_k = n_q if n_k is None else check_int("n_k (number of keys)", n_k, 1)
    first = check_int("first (first query position)", first, 0)
    return torch.arange(n_k)[None, :] <= torch.arange(first, first + n_q)[:, None]  # (i,j)


def padding_mask(tokens: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Keys that are real tokens: (b, n) token ids -> bool (b, 1, 1, n), broadcast over heads
    and queries.

    >>> padding_mask(torch.tensor([[1, 21, 777, 0, 0]])).int().flatten()
    tensor([1, 1, 1, 0, 0], dtype=torch.int32)
    """
    tokens = check_tensor("tokens (batch, n)", tokens, 2, floating=False)
    check_int("pad_id", pad_id, -(2**63))
    if tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer ids, got {tokens.dtype}")
    return (tokens != pad_id)[:, None, None, :]  # (b,1,1,j)


def trailing_padding_mask(n: int, n_pad: int) -> torch.Tensor:
    """The last ``n_pad`` of ``n`` keys are padding: bool (1, 1, 1, n).

    >>> trailing_padding_mask(4, 1).int().flatten()
    tensor([1, 1, 1, 0], dtype=torch.int32)
    """
    n = check_int("n (sequence length)", n, 1)
    n_pad = check_int("n_pad (padded positions)", n_pad, 0, n)
    return (torch.arange(n) < n - n_pad)[None, None, None, :]
