"""Causal attention with its rows' log-sum-exp, in pieces the CPU flash kernel runs at full speed.

The kernel's causal mode skips work only in whole blocks of 512 keys, so at n = 1024 it does 3/4
of the full product. Halving the triangle instead: its lower-left square is plain attention and
its two halves are triangles again; after L halvings the pieces are 2^L small triangles (one
batched causal call) and, at each level l, 2^(l-1) squares of side m / 2^l (one batched call
each). The pieces of a row join by their log-sum-exps:

    λ = log(exp λ_1 + exp λ_2),   o = exp(λ_1 - λ) o_1 + exp(λ_2 - λ) o_2

The backward hands each piece to the kernel's own backward with the row's final output and
log-sum-exp (FlashAttention's recompute: a piece's weights are exp(s - λ), its dS = P (dP - D)),
and adds the pieces' gradients back in place.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

_flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
_flash_backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward
LEAF = 128  # longest side of the small triangles; a causal call this short wastes little


class Pieces:
    """The triangle of m rows padded to leaves · 2^levels: each piece's rows as a batch.

    >>> p = Pieces(1000)
    >>> p.levels, p.leaf, p.size, [(parts, causal) for parts, _, _, causal in p.plan()]
    (3, 125, 1000, [(8, True), (1, False), (2, False), (4, False)])
    """

    def __init__(self, m: int):
        self.m = m
        self.levels = max(0, math.ceil(math.log2(m / LEAF))) if m > LEAF else 0
        self.leaf = -(-m // 2**self.levels)
        self.size = self.leaf * 2**self.levels

    def pad(self, x: torch.Tensor) -> torch.Tensor:
        """(b, h, m, e) -> (b, h, size, e), zero rows at the end (x itself if none)."""
        return x if self.size == self.m else F.pad(x, (0, 0, 0, self.size - self.m))

    def split(self, x: torch.Tensor, parts: int, pick: int | None) -> torch.Tensor:
        """(b, h, size, e) -> (b·parts, h, side, e): block ``pick`` of each pair of blocks of
        side size / (2·parts), or every block of side size / parts (pick None). A view for
        b = 1: the kernel reads strided inputs."""
        b, h, _, e = x.shape
        if pick is None:
            blocks = x.view(b, h, parts, -1, e)
        else:
            blocks = x.view(b, h, parts, 2, -1, e)[:, :, :, pick]
        return blocks.transpose(1, 2).reshape(b * parts, h, -1, e)

    def join(self, x: torch.Tensor, b: int) -> torch.Tensor:
        """The inverse of ``split``: (b·parts, h, side, e) -> (b, h, parts, side, e)."""
        return x.view(b, -1, *x.shape[1:]).transpose(1, 2)

    def plan(self):
        """(parts, query block, key block, causal): the leaves, then each level's squares."""
        yield 2**self.levels, None, None, True
        for level in range(1, self.levels + 1):
            yield 2 ** (level - 1), 1, 0, False

    def rows(self, x: torch.Tensor, parts: int, pick: int | None) -> torch.Tensor:
        """The view of x (b, h, size, e) whose rows ``split`` read, as (b, h, parts, side, e)."""
        b, h, _, e = x.shape
        if pick is None:
            return x.view(b, h, parts, -1, e)
        return x.view(b, h, parts, 2, -1, e)[:, :, :, pick]


def causal_attention(q, k, v, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(o, λ) of causal attention (query i sees keys j <= i), as the flash kernel's own."""
    pieces = Pieces(q.shape[-2])
    if pieces.levels == 0:
        return _flash(q, k, v, 0.0, True, scale=scale)
    b, h = q.shape[:2]
    q, k, v = (pieces.pad(t) for t in (q, k, v))
    out = q.new_zeros(*q.shape[:-1], v.shape[-1])
    lse = q.new_full(q.shape[:-1], float("-inf"))
    for parts, q_pick, k_pick, causal in pieces.plan():
        o, lam = _flash(
            pieces.split(q, parts, q_pick), pieces.split(k, parts, k_pick),
            pieces.split(v, parts, k_pick), 0.0, causal, scale=scale,
        )  # fmt: skip
        rows_o = pieces.rows(out, parts, q_pick)
        rows_l = pieces.rows(lse[..., None], parts, q_pick)[..., 0]
        o, lam = pieces.join(o, b), pieces.join(lam[..., None], b)[..., 0]
        total = torch.logaddexp(rows_l, lam)
        rows_o.mul_((rows_l - total).exp_()[..., None]).add_(o * (lam - total).exp_()[..., None])
        rows_l.copy_(total)
    return out[:, :, : pieces.m], lse[:, :, : pieces.m]


def causal_attention_backward(g, q, k, v, out, lse, scale: float, grads) -> None:
    """Add to ``grads`` = (dq, dk, dv) those of causal attention whose rows' final output and
    log-sum-exp are out and lse."""
    pieces = Pieces(q.shape[-2])
    if pieces.levels == 0:
        parts = _flash_backward(g, q, k, v, out, lse, 0.0, True, scale=scale)
        for total, part in zip(grads, parts, strict=True):
            total += part
        return
    b, m = q.shape[0], q.shape[-2]
    g, q, k, v, out = (pieces.pad(t) for t in (g, q, k, v, out))
    lse = F.pad(lse, (0, pieces.size - m))  # padded rows: g = 0, so their dS is 0 (not NaN)
    # the pieces add into grads itself, or into padded zeros added to it at the end
    padded = list(grads) if pieces.size == m else [pieces.pad(t.new_zeros(t.shape)) for t in grads]
    for parts, q_pick, k_pick, causal in pieces.plan():
        rows = [pieces.split(t, parts, q_pick) for t in (g, q)]
        keys = [pieces.split(t, parts, k_pick) for t in (k, v)]
        piece_out = pieces.split(out, parts, q_pick)
        piece_lse = pieces.split(lse[..., None], parts, q_pick)[..., 0].contiguous()
        d_q, d_k, d_v = _flash_backward(
            *rows, *keys, piece_out, piece_lse, 0.0, causal, scale=scale
        )  # fmt: skip
        pieces.rows(padded[0], parts, q_pick).add_(pieces.join(d_q, b))
        pieces.rows(padded[1], parts, k_pick).add_(pieces.join(d_k, b))
        pieces.rows(padded[2], parts, k_pick).add_(pieces.join(d_v, b))
    if pieces.size != m:
        for total, part in zip(grads, padded, strict=True):
            total += part[:, :, :m]
