"""Plain attention before any position scheme: the two scoring functions, masks, heads.

Bahdanau et al. 2015 (additive):  e_ij = v_a^T tanh(W_a s_i + U_a h_j)
Vaswani et al. 2017 (dot product): Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
Both then take alpha_ij = softmax_j(e_ij) and the context c_i = sum_j alpha_ij h_j (or v_j).

Masks here follow the attention introduction notebook and the TensorFlow tutorial it copies:
1.0 = hidden. The notebook adds ``mask * -1e9`` to the logits; here a hidden cell gets a
weight of exactly 0. The rest of relpos_core uses the opposite, "allowed" convention
(``relpos_core.masks``); the two are complements.
"""

# b batch · h heads · i query pos · j key pos · d channels (d_model; d_k of a bare q, k)
# c head width (d_model / heads) · a additive attention width (d_a) · e value width

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from relpos_core.guard import check_fits
from relpos_core.masks import masked_softmax
from relpos_core.trace import Trace
from relpos_core.validation import broadcast_shape, check_int, check_same_dtype, check_tensor


def additive_scores(
    s: torch.Tensor, h: torch.Tensor, w_a: torch.Tensor, u_a: torch.Tensor, v_a: torch.Tensor
) -> torch.Tensor:
    """Bahdanau's alignment scores e_ij = v_a^T tanh(W_a s_i + U_a h_j) -> (b, n_q, n_k).

    s    (b, n_q, d_s)  decoder states, one per output i (the paper's s_(i-1))
    h    (b, n_k, d_h)  encoder states ("annotations"), one per input j
    w_a  (d_a, d_s), u_a (d_a, d_h), v_a (d_a,): the weights of the paper's a(s, h)

    >>> s, h = torch.ones(1, 1, 2), torch.tensor([[[1.0], [-1.0]]])
    >>> additive_scores(s, h, torch.zeros(1, 2), torch.ones(1, 1), torch.ones(1))
    tensor([[[ 0.7616, -0.7616]]])
    """
    s = check_tensor("s (decoder states, (b, n_q, d_s))", s, 3)
    h = check_tensor("h (encoder states, (b, n_k, d_h))", h, 3)
    w_a = check_tensor("w_a", w_a, 2)
    u_a = check_tensor("u_a", u_a, 2)
    v_a = check_tensor("v_a", v_a, 1)
    check_same_dtype(s=s, h=h, w_a=w_a, u_a=u_a, v_a=v_a)
    (b, n_q, d_s), (b_h, n_k, d_h), d_a = s.shape, h.shape, v_a.shape[0]
    if b_h != b:
        raise ValueError(
            f"s and h must share the batch size b, got s {tuple(s.shape)}, h {tuple(h.shape)}"
        )
    if w_a.shape != (d_a, d_s) or u_a.shape != (d_a, d_h):
        raise ValueError(
            f"w_a must be (d_a, d_s) = ({d_a}, {d_s}) and u_a (d_a, d_h) = ({d_a}, {d_h}) "
            f"with d_a = len(v_a), got w_a {tuple(w_a.shape)}, u_a {tuple(u_a.shape)}"
        )
    check_fits(
        f"additive_scores with b = {b}, n_q = {n_q}, n_k = {n_k}, d_a = {d_a} "
        f"(a ({b}, {n_q}, {n_k}, {d_a}) tensor)",
        2 * b * n_q * n_k * d_a * s.element_size(),
        None,
        s.device,
    )
    ws = s @ w_a.T  # (b,i,d_s),(d_s,a) -> (b,i,a)
    uh = h @ u_a.T  # (b,j,d_h),(d_h,a) -> (b,j,a)
    return torch.tanh(ws[:, :, None] + uh[:, None]) @ v_a  # (b,i,j,a),(a,) -> (b,i,j)


def dot_product_scores(q: torch.Tensor, k: torch.Tensor, scaled: bool = True) -> torch.Tensor:
    """q_i · k_j / sqrt(d_k) (or q_i · k_j): (..., n_q, d), (..., n_k, d) -> (..., n_q, n_k).

    Leading axes (batch, heads, ...) broadcast. Entry [..., i, j] scores query i against key j.

    >>> dot_product_scores(torch.tensor([[3.0, 4.0]]), torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    tensor([[2.1213, 5.6569]])
    """
    q, k = _check_query_key(q, k)
    if not isinstance(scaled, bool):
        raise TypeError(f"scaled must be a bool, got {type(scaled).__name__} {scaled!r}")
    lead = _broadcast_leading(q, k)
    n_q, n_k = q.shape[-2], k.shape[-2]
    check_fits(
        f"dot_product_scores with n_q = {n_q}, n_k = {n_k} (a {(*lead, n_q, n_k)} tensor)",
        math.prod(lead) * n_q * n_k * q.element_size(),
        None,
        q.device,
    )
    scores = q @ k.transpose(-2, -1)  # (...,i,d),(...,d,j) -> (...,i,j)
    return scores / math.sqrt(q.shape[-1]) if scaled else scores


def _check_query_key(q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    q = check_tensor("q (..., n_q, d)", q, tuple(range(2, 9)))
    k = check_tensor("k (..., n_k, d)", k, tuple(range(2, 9)))
    check_same_dtype(q=q, k=k)
    if q.shape[-1] != k.shape[-1] or q.shape[-1] < 1:
        raise ValueError(
            f"q and k must share their last (channel) width d >= 1, "
            f"got q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    if q.shape[-2] < 1 or k.shape[-2] < 1:
        raise ValueError(
            f"q and k must hold at least one query and one key, "
            f"got q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    return q, k


def _broadcast_leading(*tensors: torch.Tensor) -> tuple[int, ...]:
    """The broadcast of the tensors' leading axes (all but the last two), or a ValueError."""
    shape = broadcast_shape(*(t.shape[:-2] for t in tensors))
    if shape is None:
        shapes = ", ".join(str(tuple(t.shape)) for t in tensors)
        raise ValueError(f"the leading (batch, head) axes must broadcast, got {shapes}")
    return shape


@dataclass(frozen=True)
class ScaledAttention(Trace):
    """One scaled dot-product attention, [..., query, key] or [..., query, channel]."""

    logits: torch.Tensor  # (...,i,j)  q_i · k_j / sqrt(d_k), before any mask
    weights: torch.Tensor  # (...,i,j)  softmax over the visible j; exactly 0 where hidden
    output: torch.Tensor  # (...,i,e)  sum_j alpha_ij v_j

    FORMULAS = {
        "logits": "q_i · k_j / sqrt(d)",
        "weights": "alpha_ij = softmax_j(logits), 0 where the mask hides j",
        "output": "sum_j alpha_ij v_j",
    }


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> ScaledAttention:
    """softmax(Q K^T / sqrt(d_k)) V with every step: q (..., n_q, d), k (..., n_k, d),
    v (..., n_k, e) -> ``ScaledAttention`` (logits, weights, output (..., n_q, e)).

    n_q and n_k may differ (cross-attention: queries from the decoder, keys and values from
    the encoder). ``mask`` is bool or 0/1 numbers, 1 / True = hidden (as
    ``create_padding_mask`` and ``create_look_ahead_mask`` give), broadcastable to the logits
    (..., n_q, n_k). A hidden key gets weight exactly 0. A query whose keys are all hidden has
    no distribution to take: its weights and its output are all 0 (the notebook's -1e9 trick
    would instead spread its weight over the hidden keys).

    >>> k = torch.tensor([[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]])
    >>> v = torch.tensor([[1.0, 0], [10, 0], [100, 5], [1000, 6]])
    >>> scaled_dot_product_attention(torch.tensor([[0.0, 0, 10]]), k, v).output
    tensor([[550.0000,   5.5000]])
    """
    q, k = _check_query_key(q, k)
    v = check_tensor("v (..., n_k, e)", v, tuple(range(2, 9)))
    check_same_dtype(q=q, k=k, v=v)
    if v.shape[-2] != k.shape[-2] or v.shape[-1] < 1:
        raise ValueError(
            f"v must hold one row per key (n_k = {k.shape[-2]}) and e >= 1 channels, "
            f"got v {tuple(v.shape)} for k {tuple(k.shape)}"
        )
    lead = _broadcast_leading(q, k, v)
    n_q, n_k, e = q.shape[-2], k.shape[-2], v.shape[-1]
    cells = math.prod(lead) * n_q * n_k
    check_fits(  # logits, their masked copy, the weights, the bool mask; then the output
        f"scaled_dot_product_attention with n_q = {n_q}, n_k = {n_k} "
        f"(({', '.join(map(str, (*lead, n_q, n_k)))}) logits)",
        cells * (3 * q.element_size() + 1) + math.prod(lead) * n_q * e * q.element_size(),
        None,
        q.device,
    )
    shape = (*lead, n_q, n_k)
    hidden = _hidden_mask(mask, shape)
    logits = dot_product_scores(q, k)  # (...,i,j)
    allowed = torch.ones((), dtype=torch.bool, device=q.device) if hidden is None else ~hidden
    weights = masked_softmax(logits, allowed)  # exact zeros; an all-hidden row is all 0
    return ScaledAttention(logits=logits, weights=weights, output=weights @ v)  # (...,i,e)


def _hidden_mask(mask: object, shape: tuple[int, ...]) -> torch.Tensor | None:
    """``mask`` (1 / True = hidden) as bool, checked to broadcast to ``shape`` unchanged."""
    if mask is None:
        return None
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        if mask.is_complex() or not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError(
                "mask must be bool or hold only 0 and 1 (1 = hidden), "
                f"got a {mask.dtype} mask with other values"
            )
        mask = mask != 0
    grown = broadcast_shape(mask.shape, shape) != tuple(shape)
    if grown:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to the logits {shape}"
        )
    return mask


def create_padding_mask(
    tokens: torch.Tensor | Sequence[Sequence[int]], pad_id: int = 0
) -> torch.Tensor:
    """Keys that are padding: (b, n) token ids -> float (b, 1, 1, n), 1.0 where token == pad.

    The (1, 1) axes broadcast over heads and queries. The complement of
    ``relpos_core.masks.padding_mask`` (True = a real token).

    >>> create_padding_mask([[1, 21, 777, 0, 0]])
    tensor([[[[0., 0., 0., 1., 1.]]]])
    """
    if not isinstance(tokens, torch.Tensor):
        tokens = torch.as_tensor(tokens)
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"tokens must hold integer ids, got {tokens.dtype}")
    if tokens.dim() != 2:
        raise ValueError(f"tokens must have 2 dimensions (b, n), got shape {tuple(tokens.shape)}")
    pad_id = check_int("pad_id", pad_id, -(2**63))
    return (tokens == pad_id).float()[:, None, None, :]  # (b,1,1,j)


def create_look_ahead_mask(n: int) -> torch.Tensor:
    """Keys after the query: float (n, n), 1.0 where j > i (above the diagonal).

    Row i is query i, column j key j. The complement of ``relpos_core.masks.causal_mask``.

    >>> create_look_ahead_mask(3)
    tensor([[0., 1., 1.],
            [0., 0., 1.],
            [0., 0., 0.]])
    """
    n = check_int("n (sequence length)", n, 1)
    check_fits(f"create_look_ahead_mask with n = {n} (a float ({n}, {n}) mask)", 4 * n * n, None)
    return torch.ones(n, n).triu(diagonal=1)  # (i,j)
