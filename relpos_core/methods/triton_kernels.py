"""Triton kernels of relative attention (Shaw et al. 2018), FlashAttention-2's loop with both terms.

Imported only once ``relpos_core.methods.triton_attention`` has found triton installed: the
rest of the package never needs it. Per (b·h) and a block of query rows at positions
p_i = offset + i, with r = j - p_i, c(r) = clip(r, -K, K) + K and QW = Q w^K^T (n_q, 2K + 1)
computed beforehand:

    s_ij  = (q_i · k_j + QW[i, c(r)]) · scale         the key term, gathered by bucket
    m, l  = running row maximum and sum of exp(s - m)  (fp32)
    C_i   = sum_j p_ij v_j / l                         the content output
    far_i = the weight of r <= -K and of r >= K, kept as running sums beside l
    band  = s_ij for |r| < K, one cell per bucket: its weight is exp(s - L) once L is known

A block of keys wholly past -K (or +K) reads one column of QW per row instead of a gather.
The backward is FlashAttention-2's (one pass over key blocks for dK, dV, one over query blocks
for dQ), recomputing P = exp(s - L) from the saved log-sum-exp L; with dM the gradient of the
bucket masses, dP_ij = dC_i · v_j + dM[i, c(r)] and dS = P (dP - D), D_i = sum_j P_ij dP_ij.
"""

from __future__ import annotations

import triton
import triton.language as tl

# lengths, offset and clip distance: one compiled kernel for all of them
_RUNTIME = ("n_q", "n_k", "offset", "K")


@triton.jit
def _dot(a, b, PRECISION: tl.constexpr, WIDEN: tl.constexpr):
    """a @ b accumulated in fp32. WIDEN: bfloat16 operands in fp32 first, exact products as on
    a GPU; Triton's interpreter would multiply their raw bits (it has no bfloat16 dot)."""
    if WIDEN:
        a, b = a.to(tl.float32), b.to(tl.float32)
    return tl.dot(a, b, input_precision=PRECISION)


@triton.jit
def _by_bucket(rows, rel, K, far_left, far_right):
    """table[i, c(r_ij)] for a tile; ``rows`` (M,) points at each row's 2K+1 values (fp32)."""
    if far_left:  # every cell at r <= -K: one clipped column
        x = tl.load(rows)[:, None] + tl.zeros(rel.shape, tl.float32)
    elif far_right:  # every cell at r >= K
        x = tl.load(rows + 2 * K)[:, None] + tl.zeros(rel.shape, tl.float32)
    else:
        x = tl.load(rows[:, None] + (tl.minimum(tl.maximum(rel, -K), K) + K))
    return x


@triton.jit
def _scores(q, kt, rows_qw, rel, ok, K, start_m, start_n, offset, scale,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
            WIDEN: tl.constexpr):  # fmt: skip
    """Scaled logits of one tile, -inf where ``ok`` is False: (q k^T + QW[c(r)]) · scale."""
    lo = start_n - (offset + start_m + BLOCK_M - 1)  # the tile's smallest r
    hi = start_n + BLOCK_N - 1 - (offset + start_m)  # and its largest
    s = _dot(q, kt, PRECISION, WIDEN)
    s = (s + _by_bucket(rows_qw, rel, K, hi <= -K, lo >= K)) * scale
    return tl.where(ok, s, float("-inf"))


@triton.jit(do_not_specialize=_RUNTIME)
def forward_kernel(
    Q, Kx, V, QW, Out, Band, Far, Lse, n_q, n_k, offset, K, d, d_v, scale,
    CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, PRECISION: tl.constexpr, WIDEN: tl.constexpr,
):  # fmt: skip
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)  # offsets past 2^31 elements at large b·h·n·d
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d, offs_dv = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    row_ok = offs_m < n_q
    width = 2 * K + 1
    q = tl.load(Q + (bh * n_q + offs_m[:, None]) * d + offs_d[None, :],
                mask=row_ok[:, None] & (offs_d[None, :] < d), other=0.0)  # fmt: skip
    rows = bh * n_q + tl.minimum(offs_m, n_q - 1)  # padded rows repeat the last, never stored
    rows_qw, rows_band = QW + rows * width, Band + rows * width
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    left, right = tl.zeros([BLOCK_M], tl.float32), tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], tl.float32)
    end = n_k
    if CAUSAL:  # the last key the block's last row sees
        end = tl.minimum(n_k, offset + start_m + BLOCK_M)
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < n_k
        kt = tl.load(Kx + (bh * n_k + cols[None, :]) * d + offs_d[:, None],
                     mask=col_ok[None, :] & (offs_d[:, None] < d), other=0.0)  # fmt: skip
        rel = cols[None, :] - (offset + offs_m[:, None])
        ok = col_ok[None, :]
        if CAUSAL:
            ok = ok & (rel <= 0)
        s = _scores(q, kt, rows_qw, rel, ok, K, start_m, start_n, offset, scale,
                    BLOCK_M, BLOCK_N, PRECISION, WIDEN)  # fmt: skip
        # key 0 lies in the first block and every row sees it: m_new is finite from then on
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        left = left * alpha + tl.sum(tl.where(rel <= -K, p, 0.0), 1)
        right = right * alpha + tl.sum(tl.where((rel >= K) & (rel > -K), p, 0.0), 1)
        v = tl.load(V + (bh * n_k + cols[:, None]) * d_v + offs_dv[None, :],
                    mask=col_ok[:, None] & (offs_dv[None, :] < d_v), other=0.0)  # fmt: skip
        acc = acc * alpha[:, None] + _dot(p.to(v.dtype), v, PRECISION, WIDEN)
        m_i = m_new
        band = ok & (rel > -K) & (rel < K) & row_ok[:, None]  # one cell per bucket and row
        tl.store(rows_band[:, None] + (rel + K), s, mask=band)
    l_safe = tl.where(row_ok, l_i, 1.0)
    out = Out + (bh * n_q + offs_m[:, None]) * d_v + offs_dv[None, :]
    tl.store(out, acc / l_safe[:, None], mask=row_ok[:, None] & (offs_dv[None, :] < d_v))
    tl.store(Lse + bh * n_q + offs_m, m_i + tl.log(l_safe), mask=row_ok)
    tl.store(Far + (bh * n_q + offs_m) * 2, left / l_safe, mask=row_ok)
    tl.store(Far + (bh * n_q + offs_m) * 2 + 1, right / l_safe, mask=row_ok)


@triton.jit(do_not_specialize=_RUNTIME)
def backward_kv_kernel(
    Q, Kx, V, QW, dC, dM, Lse, Delta, dK, dV, n_q, n_k, offset, K, d, d_v, scale,
    CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, PRECISION: tl.constexpr, WIDEN: tl.constexpr,
):  # fmt: skip
    """dV = sum_i P_ij dC_i, dK = scale · sum_i dS_ij q_i for one block of keys."""
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1).to(tl.int64)  # offsets past 2^31 elements at large b·h·n·d
    offs_m, offs_n = tl.arange(0, BLOCK_M), start_n + tl.arange(0, BLOCK_N)
    offs_d, offs_dv = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    col_ok = offs_n < n_k
    width = 2 * K + 1
    kx = tl.load(Kx + (bh * n_k + offs_n[:, None]) * d + offs_d[None, :],
                 mask=col_ok[:, None] & (offs_d[None, :] < d), other=0.0)  # fmt: skip
    v = tl.load(V + (bh * n_k + offs_n[:, None]) * d_v + offs_dv[None, :],
                mask=col_ok[:, None] & (offs_dv[None, :] < d_v), other=0.0)  # fmt: skip
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_DV], tl.float32)
    first = 0
    if CAUSAL:  # the first block of rows that sees a key of this block
        first = tl.maximum(start_n - offset, 0) // BLOCK_M * BLOCK_M
    for start_m in range(first, n_q, BLOCK_M):  # causal: the rows that see this block
        rows_i = start_m + offs_m
        row_ok = rows_i < n_q
        rows = bh * n_q + tl.minimum(rows_i, n_q - 1)
        q = tl.load(Q + rows[:, None] * d + offs_d[None, :],
                    mask=row_ok[:, None] & (offs_d[None, :] < d), other=0.0)  # fmt: skip
        dc = tl.load(dC + rows[:, None] * d_v + offs_dv[None, :],
                     mask=row_ok[:, None] & (offs_dv[None, :] < d_v), other=0.0)  # fmt: skip
        rel = offs_n[None, :] - (offset + rows_i[:, None])
        ok = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            ok = ok & (rel <= 0)
        s = _scores(q, tl.trans(kx), QW + rows * width, rel, ok, K, start_m, start_n, offset,
                    scale, BLOCK_M, BLOCK_N, PRECISION, WIDEN)  # fmt: skip
        p = tl.exp(s - tl.load(Lse + rows)[:, None])  # P, rebuilt from L
        dv += _dot(tl.trans(p.to(dc.dtype)), dc, PRECISION, WIDEN)
        dp = _dot(dc, tl.trans(v), PRECISION, WIDEN)
        dp += _by_bucket(dM + rows * width, rel, K, False, False)
        ds = p * (dp - tl.load(Delta + rows)[:, None])
        dk += _dot(tl.trans(ds.to(q.dtype)), q, PRECISION, WIDEN)
    tl.store(dK + (bh * n_k + offs_n[:, None]) * d + offs_d[None, :], dk * scale,
             mask=col_ok[:, None] & (offs_d[None, :] < d))  # fmt: skip
    tl.store(dV + (bh * n_k + offs_n[:, None]) * d_v + offs_dv[None, :], dv,
             mask=col_ok[:, None] & (offs_dv[None, :] < d_v))  # fmt: skip


@triton.jit(do_not_specialize=_RUNTIME)
def backward_q_kernel(
    Q, Kx, V, QW, dC, dM, Lse, Delta, dQ, dQW, dFar, n_q, n_k, offset, K, d, d_v, scale,
    CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, PRECISION: tl.constexpr, WIDEN: tl.constexpr,
):  # fmt: skip
    """dQ = scale · sum_j dS_ij k_j and dQW[i, c] = scale · sum_{c(r) = c} dS_ij for a block of
    rows: the band's cells one each, the two far buckets as running sums."""
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)  # offsets past 2^31 elements at large b·h·n·d
    offs_m, offs_n = start_m + tl.arange(0, BLOCK_M), tl.arange(0, BLOCK_N)
    offs_d, offs_dv = tl.arange(0, BLOCK_D), tl.arange(0, BLOCK_DV)
    row_ok = offs_m < n_q
    width = 2 * K + 1
    rows = bh * n_q + tl.minimum(offs_m, n_q - 1)
    q = tl.load(Q + rows[:, None] * d + offs_d[None, :],
                mask=row_ok[:, None] & (offs_d[None, :] < d), other=0.0)  # fmt: skip
    dc = tl.load(dC + rows[:, None] * d_v + offs_dv[None, :],
                 mask=row_ok[:, None] & (offs_dv[None, :] < d_v), other=0.0)  # fmt: skip
    lse, delta = tl.load(Lse + rows), tl.load(Delta + rows)
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    left, right = tl.zeros([BLOCK_M], tl.float32), tl.zeros([BLOCK_M], tl.float32)
    end = n_k
    if CAUSAL:  # the last key the block's last row sees
        end = tl.minimum(n_k, offset + start_m + BLOCK_M)
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < n_k
        kx = tl.load(Kx + (bh * n_k + cols[:, None]) * d + offs_d[None, :],
                     mask=col_ok[:, None] & (offs_d[None, :] < d), other=0.0)  # fmt: skip
        vt = tl.load(V + (bh * n_k + cols[None, :]) * d_v + offs_dv[:, None],
                     mask=col_ok[None, :] & (offs_dv[:, None] < d_v), other=0.0)  # fmt: skip
        rel = cols[None, :] - (offset + offs_m[:, None])
        ok = row_ok[:, None] & col_ok[None, :]
        if CAUSAL:
            ok = ok & (rel <= 0)
        s = _scores(q, tl.trans(kx), QW + rows * width, rel, ok, K, start_m, start_n, offset,
                    scale, BLOCK_M, BLOCK_N, PRECISION, WIDEN)  # fmt: skip
        p = tl.exp(s - lse[:, None])
        dp = _dot(dc, vt, PRECISION, WIDEN)
        dp += _by_bucket(dM + rows * width, rel, K, False, False)
        ds = p * (dp - delta[:, None])  # 0 where masked
        dq += _dot(ds.to(kx.dtype), kx, PRECISION, WIDEN)
        left += tl.sum(tl.where(rel <= -K, ds, 0.0), 1)
        right += tl.sum(tl.where((rel >= K) & (rel > -K), ds, 0.0), 1)
        band = ok & (rel > -K) & (rel < K)
        tl.store((dQW + rows * width)[:, None] + (rel + K), ds * scale, mask=band)
    tl.store(dQ + rows[:, None] * d + offs_d[None, :], dq * scale,
             mask=row_ok[:, None] & (offs_d[None, :] < d))  # fmt: skip
    tl.store(dFar + rows * 2, left * scale, mask=row_ok)
    tl.store(dFar + rows * 2 + 1, right * scale, mask=row_ok)
