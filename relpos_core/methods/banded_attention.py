"""Relative attention by bands, one block of query rows at a time, with a recomputing backward.

Forward, for the block of query rows [i0, i1) (see ``banded`` for the geometry):

    S     = (Q_blk / sqrt(d)) K^T                        (b·h, rows, n_k), into a reused buffer
    S    += Q_blk (w^K_r - w^K_{-k}) / sqrt(d) by bucket  right constant, gather on the strip
    P     = softmax(S), in place (masked; causal blocks stop at the last key the block sees)
    Z_blk = P V,  M_blk = bucket mass of P               Z = cat(Z_blk) + cat(M_blk) w^V

Softmax is blind to a constant per row, so the left constant q_i · w_{-k} is subtracted from
every cell instead of added to the left part. Nothing of size (b, h, n_q, n_k) is kept: with
gradients the forward saves q, k, v, the tables, the output and each row's log-sum-exp L_i, and
the backward rebuilds each block's P = exp(S - L) (FlashAttention's recompute), then

    dP_ij = g_i · (v_j + a^V_ij)          g = dZ; the a^V part by bucket, like the key term
    dS_ij = P_ij (dP_ij - D_i)            D_i = sum_j P_ij dP_ij = g_i · z_i
    dQ    = (dS K + mass(dS) w^K) / sqrt(d),  dK = dS^T Q / sqrt(d),  dw^K = mass(dS)^T Q / sqrt(d)
    dV    = P^T g,                              dw^V = mass(P)^T g

Dropout on the weights regenerates each block's keep-mask from a per-block seed in the backward.
Works on any device torch supports: every index is built on the inputs' device.
"""

from __future__ import annotations

import math

import torch

from relpos_core.lookup import clip_distance_from_table
from relpos_core.methods.banded import Strips, add_by_bucket, block_rows, bucket_mass
from relpos_core.methods.regions import region_attention, regions_apply

_softmax_out = torch.ops.aten._softmax.out  # softmax into a given buffer: the block in place


def banded_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    return_weights: bool = False,
    dropout_p: float = 0.0,
    generator: torch.Generator | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """z (b, h, n_q, d_v), and alpha (b, h, n_q, n_k) with ``return_weights``; inputs checked.

    ``allowed`` is a bool mask broadcastable to (b, h, n_q, n_k) or None. With gradients the
    weights cannot be returned (the caller runs an unfused method for that). Without the
    weights the call is one ``relpos::banded_attention`` op: opaque to ``torch.compile``
    (its Python loops over blocks are not traced), with its fake and its backward registered.
    """
    regions = regions_apply(q, k, v, table_k, allowed, causal, query_offset, dropout_p)
    if regions and not return_weights:
        return region_attention(q, k, v, table_k, table_v, causal)  # the flash kernel's speed
    seed = None
    if dropout_p > 0:  # one draw from the caller's generator (or the global one, as nn.Dropout)
        where = generator.device if generator is not None else "cpu"
        seed = torch.randint(0, 2**62, (), generator=generator, device=where)  # a tensor: no sync
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v, table_k, table_v))
    if return_weights:
        assert not grad, "weights with gradients take the unfused path"
        with torch.no_grad():
            out, weights, _ = _forward(
                q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p,
                _seed(seed), keep_lse=False, keep_weights=True,
            )  # fmt: skip
        return out, weights
    if not grad and not torch.compiler.is_compiling():
        # eager inference runs the op's body directly: the registered op's first call imports
        # torch._dynamo (1.5 s and 70 MB), which a server that never compiles does not need
        out, _, _ = _forward(
            q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, _seed(seed),
            keep_lse=False, keep_weights=False,
        )  # fmt: skip
        return out
    out, _ = banded_attention_op(
        q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed, grad
    )
    return out


def _seed(seed: torch.Tensor | None) -> int:
    return 0 if seed is None else int(seed)


@torch.library.custom_op("relpos::banded_attention", mutates_args=())
def banded_attention_op(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    dropout_p: float,
    seed: torch.Tensor | None,
    keep_lse: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(z (b,h,n_q,d_v), L (b·h, n_q) the rows' log-sum-exp, or an empty tensor if not kept)."""
    out, _, lse = _forward(
        q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, _seed(seed),
        keep_lse=keep_lse, keep_weights=False,
    )  # fmt: skip
    return out, (lse if lse is not None else q.new_empty(0))


@banded_attention_op.register_fake
def _(q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed, keep_lse):
    b, h, n_q, _ = q.shape
    out = q.new_empty(b, h, n_q, v.shape[-1])
    return out, q.new_empty(b * h, n_q) if keep_lse else q.new_empty(0)


@torch.library.custom_op("relpos::banded_attention_backward", mutates_args=())
def banded_attention_backward_op(
    grad_out: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    allowed: torch.Tensor | None,
    causal: bool,
    query_offset: int,
    dropout_p: float,
    seed: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """dq, dk, dv, dw^K, dw^V: each block's weights rebuilt from L (see the module docstring)."""
    return _backward(
        grad_out.contiguous(), q, k, v, table_k, table_v, out, lse, allowed, causal,
        query_offset, dropout_p, _seed(seed),
    )  # fmt: skip


@banded_attention_backward_op.register_fake
def _(grad_out, q, k, v, table_k, table_v, *rest):
    return tuple(t.new_empty(t.shape) for t in (q, k, v, table_k, table_v))  # contiguous


def _setup_context(ctx, inputs, output) -> None:
    q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed, keep_lse = inputs
    assert keep_lse, "a call with gradients keeps the log-sum-exp for its backward"
    ctx.save_for_backward(q, k, v, table_k, table_v, output[0], output[1], allowed, seed)
    ctx.settings = (causal, query_offset, dropout_p)


def _backward_rule(ctx, grad_out, _grad_lse):
    q, k, v, table_k, table_v, out, lse, allowed, seed = ctx.saved_tensors
    causal, query_offset, dropout_p = ctx.settings
    grads = banded_attention_backward_op(
        grad_out, q, k, v, table_k, table_v, out, lse, allowed, causal, query_offset,
        dropout_p, seed,
    )  # fmt: skip
    return (*grads, None, None, None, None, None, None)


banded_attention_op.register_autograd(_backward_rule, setup_context=_setup_context)


class _Blocks:
    """What every block shares: inputs flattened to (b·h, ..), the buckets, the mask, and the
    buffers every block reuses.

    Each (b·h, rows, cols) temporary of a block is a view of one buffer of (b·h, rows, n_k),
    made once. A causal block is as wide as the last key it sees, so temporaries made per
    block would grow block by block; the allocator cannot reuse the smaller blocks it freed
    for the next, larger one and keeps them (at n = 131072 the resident set grew to 11 times
    the estimate). What a block still allocates is (b·h, rows, 2k+1) or smaller.
    """

    def __init__(self, q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed):
        self.b, self.h, self.n_q, d = q.shape
        self.n_k, self.d_v = v.shape[-2:]
        bh = self.b * self.h
        self.scale = 1.0 / math.sqrt(d)
        self.kk = clip_distance_from_table(table_k)
        self.qs = q.new_empty(bh, self.n_q, d)  # scaled once, on n·d values, contiguous
        torch.mul(q, self.scale, out=self.qs.view(q.shape))
        # contiguous: bmm would copy a stride-0 (expanded) operand again in every block
        self.keys = k.reshape(bh, self.n_k, d).contiguous()
        self.values = v.reshape(bh, self.n_k, self.d_v).contiguous()
        self.shifted = self.qs @ (table_k - table_k[:1]).T  # (bh,i,2k+1): q_i·(w_r - w_-k)/√d
        self.allowed, self.causal, self.offset = allowed, causal, query_offset
        self.dropout_p, self.seed = dropout_p, seed
        self.rows = block_rows(self.n_q, self.n_k, bh)
        self.strips = Strips(self.n_k, self.kk, q.device)
        self.buffers: dict[str, torch.Tensor] = {}
        self.minus_inf = q.new_full((), float("-inf"))
        # row r of a block may not see column c of the block's own columns [p0, p0 + rows): c > r
        self.upper = torch.ones(self.rows, self.rows, dtype=torch.bool, device=q.device).triu_(1)

    def spans(self):
        """(i0, i1, cols) per block: causal blocks stop at the last key their last row sees."""
        for i0 in range(0, self.n_q, self.rows):
            i1 = min(self.n_q, i0 + self.rows)
            cols = min(self.n_k, self.offset + i1) if self.causal else self.n_k
            yield i0, i1, cols

    def buffer(self, name: str, i0: int, i1: int, cols: int) -> torch.Tensor:
        """The buffer ``name`` as (bh, i1 - i0, cols), made on first use."""
        bh = self.b * self.h
        if name not in self.buffers:
            self.buffers[name] = self.qs.new_empty(bh * self.rows * self.n_k)
        return self.buffers[name][: bh * (i1 - i0) * cols].view(bh, i1 - i0, cols)

    def scores(self, i0: int, i1: int, cols: int) -> torch.Tensor:
        """Scaled logits of rows [i0, i1) less q_i · w_-k, -inf where masked: (bh, rows, cols)."""
        s = self.buffer("scores", i0, i1, cols)
        torch.bmm(self.qs[:, i0:i1], self.keys[:, :cols].transpose(1, 2), out=s)
        add_by_bucket(
            s, self.shifted[:, i0:i1], self.offset + i0, self.kk, shift=True, strips=self.strips
        )
        if self.allowed is not None:  # broadcastable: slice only the axes it really has
            mask = self.allowed
            mask = mask[..., i0:i1, :] if mask.shape[-2] > 1 else mask
            mask = mask[..., :cols] if mask.shape[-1] > 1 else mask
            s4 = s.view(self.b, self.h, i1 - i0, cols)
            torch.where(mask, s4, self.minus_inf, out=s4)
        p0 = self.offset + i0
        if self.causal and cols > p0 + 1:  # keys j > i all lie in the columns [p0, cols)
            s[..., p0:].masked_fill_(self.upper[: i1 - i0, : cols - p0], float("-inf"))
        return s

    def keep_scale(self, i0: int, i1: int, cols: int) -> torch.Tensor:
        """Dropout's keep-mask / (1 - p) for the block at i0: the same in forward and backward."""
        keep = self.buffer("keep", i0, i1, cols)
        gen = torch.Generator(device=self.qs.device).manual_seed(self.seed + i0)
        torch.rand(keep.shape, generator=gen, out=keep)
        return keep.ge_(self.dropout_p).div_(1.0 - self.dropout_p)  # u >= p as 1.0 or 0.0

    def mass(self, weights: torch.Tensor, i0: int, rows_sum_to_one: bool = False) -> torch.Tensor:
        return bucket_mass(weights, self.offset + i0, self.kk, self.strips, rows_sum_to_one)


def _forward(
    q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed,
    keep_lse: bool, keep_weights: bool,
):  # fmt: skip
    blocks = _Blocks(q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed)
    bh, n_q, n_k, kk = blocks.b * blocks.h, blocks.n_q, blocks.n_k, blocks.kk
    lse = q.new_empty(bh, n_q) if keep_lse else None
    weights = q.new_zeros(blocks.b, blocks.h, n_q, n_k) if keep_weights else None
    # without mask or dropout every row sums to 1: the right edge bucket is what the others leave
    rows_sum_to_one = allowed is None and dropout_p == 0
    content, masses = [], []
    for i0, i1, cols in blocks.spans():
        s = blocks.scores(i0, i1, cols)
        if lse is not None:  # softmax in place, keeping L = m + log(sum_j exp(s_j - m))
            top = s.amax(-1)  # (bh, rows); -inf for a row with nothing allowed
            top.masked_fill_(top == float("-inf"), 0.0)  # its P is then 0, and its L 0
            a = s.sub_(top[..., None]).exp_()
            total = a.sum(-1).clamp_min_(1.0)  # exp(0) = 1 at the maximum of an allowed row
            a.div_(total[..., None])
            lse[:, i0:i1] = top + total.log()
        else:
            a = _softmax_out(s, -1, False, out=s)  # in place: each row is read before written
            if allowed is not None:  # a row with nothing allowed is NaN: make it all zeros
                a.nan_to_num_(nan=0.0)
        if dropout_p > 0:
            a.mul_(blocks.keep_scale(i0, i1, cols))
        masses.append(blocks.mass(a, i0, rows_sum_to_one))
        content.append(a @ blocks.values[:, :cols])  # (bh,rows,j),(bh,j,d_v) -> (bh,rows,d_v)
        if weights is not None:
            weights[..., i0:i1, :cols] = a.view(blocks.b, blocks.h, i1 - i0, cols)
    out = torch.cat(content, 1).view(bh * n_q, blocks.d_v)
    mass = torch.cat(masses, 1).view(bh * n_q, 2 * kk + 1)
    out.addmm_(mass, table_v)  # += (bucket mass) w^V, (bh·i,2k+1),(2k+1,d_v)
    return out.view(blocks.b, blocks.h, n_q, blocks.d_v), weights, lse


def _backward(
    grad_out, q, k, v, table_k, table_v, out, lse, allowed, causal, query_offset, dropout_p, seed
):
    blocks = _Blocks(q, k, v, table_k, table_v, allowed, causal, query_offset, dropout_p, seed)
    bh, n_q, d_v, kk = blocks.b * blocks.h, blocks.n_q, blocks.d_v, blocks.kk
    g = grad_out.reshape(bh, n_q, d_v)
    g_by_bucket = g @ table_v.T  # (bh,i,2k+1): g_i · w^V_r
    # D_i = sum_j P_ij dP_ij = g_i · sum_j P_ij keep_ij (v_j + a^V_ij) = g_i · z_i, dropout or not
    g_dot_z = (g * out.reshape(bh, n_q, d_v)).sum(-1)
    # contiguous, as the registered fake promises: zeros_like would copy the strides of a
    # head view (b, n, h, d) or a transposed table, and a compiled graph checks them
    d_qs, d_keys, d_values, d_table_k, d_table_v = (
        t.new_zeros(t.shape) for t in (blocks.qs, blocks.keys, blocks.values, table_k, table_v)
    )
    for i0, i1, cols in blocks.spans():
        p = blocks.scores(i0, i1, cols).sub_(lse[:, i0:i1, None]).exp_()  # P, rebuilt
        g_blk, qs_blk = g[:, i0:i1], blocks.qs[:, i0:i1]
        d_p = blocks.buffer("grad", i0, i1, cols)
        keep = blocks.keep_scale(i0, i1, cols) if dropout_p > 0 else None
        used = p if keep is None else torch.mul(p, keep, out=d_p)  # the weights z used
        d_values[:, :cols].baddbmm_(used.transpose(1, 2), g_blk)  # += (bh,j,i),(bh,i,d_v)
        d_table_v += blocks.mass(used, i0).reshape(-1, 2 * kk + 1).T @ g_blk.reshape(-1, d_v)
        torch.bmm(g_blk, blocks.values[:, :cols].transpose(1, 2), out=d_p)  # g_i · v_j
        add_by_bucket(d_p, g_by_bucket[:, i0:i1], query_offset + i0, kk, strips=blocks.strips)
        if keep is not None:
            d_p.mul_(keep)
        d_s = d_p.sub_(g_dot_z[:, i0:i1, None]).mul_(p)  # (bh,rows,cols), 0 where masked
        mass_s = blocks.mass(d_s, i0)  # (bh,rows,2k+1)
        d_qs[:, i0:i1] = d_s @ blocks.keys[:, :cols] + mass_s @ table_k
        d_keys[:, :cols].baddbmm_(d_s.transpose(1, 2), qs_blk)  # += (bh,j,i),(bh,i,d)
        d_table_k += mass_s.reshape(-1, 2 * kk + 1).T @ qs_blk.reshape(-1, qs_blk.shape[-1])
    shape = blocks.b, blocks.h
    return (
        d_qs.mul_(blocks.scale).view(*shape, n_q, -1),
        d_keys.view(*shape, blocks.n_k, -1),  # Q was scaled already
        d_values.view(*shape, blocks.n_k, d_v),
        d_table_k,
        d_table_v,
    )
