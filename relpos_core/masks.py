"""Attention masks as bool tensors: True = the query may attend to that key.

This is the convention of torch's scaled_dot_product_attention and of seed 001's layer
(``mask == 0`` is masked). Seed 004's padding mask uses the opposite (1 = pad); ours is inverted.
"""

from __future__ import annotations

import math

import torch

from relpos_core.guard import check_fits
from relpos_core.precision import HALF_DTYPES, compute_dtype, compute_itemsize
from relpos_core.validation import (
    MASK_CHECK_BYTES,
    broadcast_shape,
    check_bool,
    check_int,
    check_mask,
    check_max_bytes,
    check_shape,
    check_tensor,
    distinct_view,
)


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


def padding_mask(
    tokens: torch.Tensor, pad_id: int = 0, *, max_bytes: int | None = None
) -> torch.Tensor:
    """Keys that are real tokens: (b, n) token ids -> bool (b, 1, 1, n), broadcast over heads
    and queries. ``max_bytes`` as in ``relative_attention`` (None: the device's memory).

    >>> padding_mask(torch.tensor([[1, 21, 777, 0, 0]])).int().flatten()
    tensor([1, 1, 1, 0, 0], dtype=torch.int32)
    """
    tokens = check_tensor("tokens (batch, n)", tokens, 2, floating=False)
    check_int("pad_id", pad_id, -(2**63))
    if tokens.dtype.is_floating_point or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer ids, got {tokens.dtype}")
    check_fits(
        f"padding_mask of tokens {tuple(tokens.shape)} (a bool {tuple(tokens.shape)} mask)",
        tokens.numel(),
        check_max_bytes(max_bytes),
        tokens.device,
    )
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


def masked_softmax(
    logits: torch.Tensor, allowed: torch.Tensor, *, max_bytes: int | None = None
) -> torch.Tensor:
    """Softmax over the last axis restricted to ``allowed``.

    A row with no allowed key gets all-zero weights (so its output is 0), never NaN.
    ``logits`` must be finite (forbid keys through ``allowed``, not -inf); ``allowed`` is bool
    and broadcasts to ``logits``. ``max_bytes`` as in ``relative_attention``.

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
    rows = allowed[..., 0].numel() if allowed.dim() and allowed.shape[-1] else 1
    check_fits(
        f"masked_softmax of logits {tuple(logits.shape)}",
        softmax_bytes(logits.numel(), allowed.numel(), rows, logits.dtype),
        check_max_bytes(max_bytes),
        logits.device,
    )
    safe = logits.masked_fill(~allowed, float("-inf"))
    any_allowed = allowed.any(-1, keepdim=True)
    safe.masked_fill_(~any_allowed, 0.0)  # a fully masked row would be all -inf
    weights = torch.softmax(safe, dim=-1, dtype=compute_dtype(logits.dtype))  # half: float32
    del safe  # the softmax keeps its output, not its input
    return weights.to(logits.dtype) * any_allowed


def softmax_bytes(cells: int, allowed_cells: int, rows: int, dtype: torch.dtype) -> int:
    """Peak of ``masked_softmax`` on ``cells`` logits of ``dtype``: the mask's negation (kept
    for the backward), the masked copy beside the softmax and, for a half dtype, the float32
    copy the softmax reads (later the cast back and the result take their place); the rows'
    any-allowed flags and their negation."""
    size, compute = torch.empty((), dtype=dtype).element_size(), compute_itemsize(dtype)
    upcast = compute if dtype in HALF_DTYPES else 0
    return 2 * rows + allowed_cells + cells * (size + compute + upcast)


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
    mask_cells(mask, shape)
    allowed = check_mask(mask)
    return allowed.reshape((1,) * (len(shape) - allowed.dim()) + tuple(allowed.shape))


def mask_cells(mask: object, shape: tuple[int, ...]) -> int:
    """Stored values of the user's mask, checked to broadcast to ``shape`` unchanged (0 for
    None): what turning it into bools reads, before anything is converted.

    >>> mask_cells(torch.ones(()).expand(1000, 8), (1, 1, 1000, 8))
    1
    """
    if mask is None:
        return 0
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
    if _broadcast_shape(mask.shape, torch.Size(shape)) != shape:  # must not grow the logits
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the logits {shape}"
        )
    return distinct_view(mask).numel()


def combine_masks(
    mask: torch.Tensor | None,
    causal: bool,
    shape: tuple[int, int, int, int],
    query_offset: int = 0,
    *,
    max_bytes: int | None = None,
) -> torch.Tensor:
    """Broadcast a user mask (True = attend) and the causal mask to bool ``shape``.

    Row r is the query at position ``query_offset + r``; causal lets it see keys j <= that.
    The result is a broadcast view: it holds the user's mask, the causal rows (n_q, n_k) and
    their union. ``max_bytes`` as in ``relative_attention`` (None: the device's memory).
    """
    causal = check_bool("causal", causal)
    shape = check_shape("shape (b, h, n_q, n_k)", shape, 4)
    query_offset = check_int("query_offset (position of the first query)", query_offset, 0)
    cells = mask_cells(mask, shape)
    n_q, n_k = shape[-2:]
    need = 0 if mask is None or mask.dtype == torch.bool else MASK_CHECK_BYTES * cells
    if causal:  # the positions (int64), the rows, their union with the mask's stored values
        held = () if mask is None else distinct_view(mask).shape
        need += 8 * (n_q + n_k) + n_q * n_k + math.prod(broadcast_shape(held, (n_q, n_k)))
    device = mask.device if mask is not None else None
    check_fits(
        f"combine_masks with shape {shape} (a bool {shape} mask)",
        need,
        check_max_bytes(max_bytes),
        device,
    )
    allowed = user_mask(mask, shape)
    if allowed is None:
        allowed = torch.ones((), dtype=torch.bool)
    if causal:  # on the mask's stored values: the axes it repeats stay views
        rows = _causal_rows(n_q, n_k, query_offset).to(allowed.device)
        allowed = distinct_view(allowed) & rows
    return allowed.expand(shape)
