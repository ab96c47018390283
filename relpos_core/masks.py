"""Attention masks as bool tensors: True = the query may attend to that key.

This is the convention of torch's scaled_dot_product_attention and of seed 001's layer
(``mask == 0`` is masked). Seed 004's padding mask uses the opposite (1 = pad); ours is inverted.
"""

from __future__ import annotations

import torch

from relpos_core.checks import broadcast_shape, check_bool, check_int, check_mask, check_tensor
from relpos_core.guard import check_fits
from relpos_core.precision import compute_dtype


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
    check_fits(
        f"causal_mask with n_q = {n_q}, n_k = {n_k} (a bool ({n_q}, {n_k}) mask)",
        n_q * n_k + 8 * (n_q + n_k),
        None,
    )
    return _causal_rows(n_q, n_k, first)


def _causal_rows(n_q: int, n_k: int, first: int) -> torch.Tensor:
    """causal_mask without checks or guard, for calls the guard has already sized."""
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
    check_fits(f"trailing_padding_mask with n = {n} (a bool (1, 1, 1, {n}) mask)", 9 * n, None)
    return (torch.arange(n) < n - n_pad)[None, None, None, :]


def masked_softmax(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis restricted to ``allowed``.

    A row with no allowed key gets all-zero weights (so its output is 0), never NaN.
    ``logits`` must be finite (forbid keys through ``allowed``, not -inf); ``allowed`` is bool
    and broadcasts to ``logits``.

    >>> masked_softmax(torch.zeros(2, 2), torch.tensor([[True, True], [False, False]]))
    tensor([[0.5000, 0.5000],
            [0.0000, 0.0000]])
    """
    logits = check_tensor("logits", logits, tuple(range(1, 9)))
    if not isinstance(allowed, torch.Tensor) or allowed.dtype != torch.bool:
        got = allowed.dtype if isinstance(allowed, torch.Tensor) else type(allowed).__name__
        raise TypeError(f"allowed must be a bool tensor, got {got}")
    if _broadcast_shape(allowed.shape, logits.shape) != logits.shape:
        raise ValueError(
            f"allowed of shape {tuple(allowed.shape)} does not broadcast to the logits "
            f"{tuple(logits.shape)}"
        )
    masked = logits.masked_fill(~allowed, float("-inf"))
    any_allowed = allowed.any(-1, keepdim=True)
    safe = masked.masked_fill(~any_allowed, 0.0)  # a fully masked row would be all -inf
    weights = torch.softmax(safe, dim=-1, dtype=compute_dtype(logits.dtype))  # half: float32 sums
    return weights.to(logits.dtype) * any_allowed


def _broadcast_shape(a: torch.Size, b: torch.Size) -> torch.Size | None:
    shape = broadcast_shape(a, b)
    return None if shape is None else torch.Size(shape)


def user_mask(mask: object, shape: tuple[int, int, int, int]) -> torch.Tensor | None:
    """The user's mask as bool (True = attend), checked to broadcast to ``shape`` unchanged,
    as a 4-D view: a key mask (n_k,) becomes (1, 1, 1, n_k), a scalar (1, 1, 1, 1).

    >>> user_mask(torch.tensor([1, 0]), (2, 3, 4, 2)).shape
    torch.Size([1, 1, 1, 2])
    """
    if mask is None:
        return None
    allowed = check_mask(mask)
    if _broadcast_shape(allowed.shape, torch.Size(shape)) != shape:  # must not grow the logits
        raise ValueError(
            f"mask of shape {tuple(allowed.shape)} does not broadcast to the logits {shape}"
        )
    return allowed.reshape((1,) * (len(shape) - allowed.dim()) + tuple(allowed.shape))


def combine_masks(
    mask: torch.Tensor | None,
    causal: bool,
    shape: tuple[int, int, int, int],
    query_offset: int = 0,
) -> torch.Tensor:
    """Broadcast a user mask (True = attend) and the causal mask to bool ``shape``.

    Row r is the query at position ``query_offset + r``; causal lets it see keys j <= that.
    """
    check_bool("causal", causal)
    allowed = user_mask(mask, shape)
    if allowed is None:
        allowed = torch.ones((), dtype=torch.bool)
    if causal:
        rows = _causal_rows(shape[-2], shape[-1], query_offset).to(allowed.device)
        allowed = allowed & rows
    return allowed.expand(shape)
