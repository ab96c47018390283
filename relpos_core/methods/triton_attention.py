"""Relative attention as one Triton kernel, forward and backward (``methods.triton_kernels``).

Both of Shaw's terms inside FlashAttention-2's loop. Outside the kernel only O(n k) work:

    QW = Q w^K^T                       (b,h,n_q,2k+1), fp32: the key term's table, gathered inside
    C, M = kernel(Q, K, V, QW)         C = P V (fp32), M the bucket masses of P, (b,h,n_q,2k+1)
    z = C + M w^V                      the value term: M_ir = sum_{j: clip(j - p_i) = r} P_ij

Inside, the two far buckets' masses are running sums beside the softmax statistics and the band's
masses come from the saved log-sum-exp L (M_ir = exp(s_ir - L_i) for |r| < k, one cell each).
The backward gets dC = dz and dM = dz w^V^T from autograd and returns dQ, dK, dV and dQW, from
which autograd finishes dQ and dw^K through QW; dw^V = M^T dz is autograd's too.

triton is optional: nothing here imports it until the kernel runs. On a CPU the kernel runs only
through Triton's interpreter (``TRITON_INTERPRET=1`` set before triton is imported), which is
how the test suite reaches it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os

import torch

from relpos_core.precision import HALF_DTYPES

DTYPES = (*HALF_DTYPES, torch.float32)
HEAD_DIMS = (16, 128)  # d and d_v, inclusive: tl.dot needs 16, registers end past 128


def triton_installed() -> bool:
    return importlib.util.find_spec("triton") is not None


def interpreting() -> bool:
    """Triton's interpreter is on: kernels run on CPU tensors, through numpy."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def triton_unsupported(
    q: torch.Tensor, v: torch.Tensor, *, masked: bool, trace: bool, weights: bool, dropout: bool
) -> str | None:
    """Why the kernel cannot run this call, or None if it can (shapes already checked)."""
    if not triton_installed():
        return "triton is not installed (pip install triton)"
    if q.device.type == "cpu" and not interpreting():
        return "a CPU tensor runs the kernel only under TRITON_INTERPRET=1 (Triton's interpreter)"
    if q.device.type not in ("cpu", "cuda"):
        return f"the kernel runs on CUDA, got a {q.device.type} tensor"
    if q.dtype not in DTYPES:
        return f"the kernel takes float16, bfloat16 or float32, got {q.dtype}"
    lo, hi = HEAD_DIMS
    if not (lo <= q.shape[-1] <= hi and lo <= v.shape[-1] <= hi):
        return f"the kernel takes head sizes {lo}-{hi}, got d={q.shape[-1]}, d_v={v.shape[-1]}"
    for asked, what in ((masked, "a mask"), (trace, "a trace"), (weights, "returned weights"),
                        (dropout, "dropout")):  # fmt: skip
        if asked:
            return f"the kernel takes causal or no masking, without {what}"
    return None


def _blocks(device: torch.device) -> tuple[int, int]:
    """(query rows, keys) per tile: GPU-sized on CUDA, small for the interpreter's tests."""
    return (64, 64) if device.type == "cuda" else (16, 16)


def _launch(kernel, grid, *args, causal, dims, device, dtype):
    d, d_v = dims
    block_m, block_n = _blocks(device)
    on = torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()
    with on:  # Triton launches on the current device: make it the tensors'
        kernel[grid](
            *args, d, d_v, 1.0 / math.sqrt(d), CAUSAL=causal, BLOCK_M=block_m, BLOCK_N=block_n,
            BLOCK_D=max(16, 1 << (d - 1).bit_length()),
            BLOCK_DV=max(16, 1 << (d_v - 1).bit_length()),
            PRECISION="ieee" if dtype == torch.float32 else "tf32",  # fp32: no TF32 rounding
            WIDEN=dtype == torch.bfloat16 and device.type == "cpu",  # the interpreter's bfloat16
        )  # fmt: skip


class _FlashRelative(torch.autograd.Function):
    """(q, k, v (b·h, n, d) contiguous, QW (b·h, n_q, 2k+1) fp32) -> (C, M), both fp32."""

    @staticmethod
    def forward(ctx, q, k, v, qw, causal, offset):
        from relpos_core.methods.triton_kernels import forward_kernel

        bh, n_q, d = q.shape
        n_k, d_v, width = k.shape[1], v.shape[2], qw.shape[-1]
        kk = (width - 1) // 2
        content = q.new_empty(bh, n_q, d_v, dtype=torch.float32)
        band = q.new_full((bh, n_q, width), float("-inf"), dtype=torch.float32)  # band logits
        far = q.new_empty(bh, n_q, 2, dtype=torch.float32)  # the masses at r <= -k, r >= k
        lse = q.new_empty(bh, n_q, dtype=torch.float32)
        grid = (triton_cdiv(n_q, _blocks(q.device)[0]), bh)
        _launch(forward_kernel, grid, q, k, v, qw, content, band, far, lse, n_q, n_k, offset, kk,
                causal=causal, dims=(d, d_v), device=q.device, dtype=q.dtype)  # fmt: skip
        masses = band.sub_(lse[..., None]).exp_()  # M_ir = exp(s_ir - L_i) on the band
        masses[..., 0] += far[..., 0]
        masses[..., -1] += far[..., 1]  # k = 0: the one bucket takes both
        ctx.save_for_backward(q, k, v, qw, content, masses, lse)
        ctx.causal, ctx.offset = causal, offset
        return content, masses

    @staticmethod
    def backward(ctx, d_content, d_masses):
        from relpos_core.methods.triton_kernels import backward_kv_kernel, backward_q_kernel

        q, k, v, qw, content, masses, lse = ctx.saved_tensors
        bh, n_q, d = q.shape
        n_k, d_v, width = k.shape[1], v.shape[2], qw.shape[-1]
        # D_i = sum_j P_ij dP_ij = dC_i · C_i + sum_r M_ir dM_ir
        delta = (d_content * content).sum(-1) + (d_masses * masses).sum(-1)
        d_c = d_content.to(q.dtype).contiguous()  # the dots run in the inputs' dtype
        d_m = d_masses.float().contiguous()
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        d_qw = torch.zeros_like(qw)
        d_far = q.new_empty(bh, n_q, 2, dtype=torch.float32)
        block_m, block_n = _blocks(q.device)
        common = dict(causal=ctx.causal, dims=(d, d_v), device=q.device, dtype=q.dtype)
        args = (q, k, v, qw, d_c, d_m, lse, delta)
        _launch(backward_kv_kernel, (triton_cdiv(n_k, block_n), bh), *args, dk, dv,
                n_q, n_k, ctx.offset, (width - 1) // 2, **common)  # fmt: skip
        _launch(backward_q_kernel, (triton_cdiv(n_q, block_m), bh), *args, dq, d_qw, d_far,
                n_q, n_k, ctx.offset, (width - 1) // 2, **common)  # fmt: skip
        d_qw[..., 0] += d_far[..., 0]
        d_qw[..., -1] += d_far[..., 1]
        return dq, dk, dv, d_qw, None, None


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def triton_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    table_k: torch.Tensor,
    table_v: torch.Tensor,
    causal: bool,
    query_offset: int,
) -> torch.Tensor:
    """z (b, h, n_q, d_v) in q's dtype; inputs checked and ``triton_unsupported`` asked first."""
    b, h, n_q, d = q.shape
    n_k, d_v = v.shape[-2:]
    qw = q.float() @ table_k.float().T  # (b,h,i,d),(d,2k+1) -> (b,h,i,2k+1)
    content, masses = _FlashRelative.apply(
        q.reshape(b * h, n_q, d).contiguous(),
        k.reshape(b * h, n_k, d).contiguous(),
        v.reshape(b * h, n_k, d_v).contiguous(),
        qw.reshape(b * h, n_q, -1),
        causal,
        query_offset,
    )
    out = content + masses @ table_v.float()  # (bh,i,d_v) + (bh,i,2k+1),(2k+1,d_v)
    return out.view(b, h, n_q, d_v).to(q.dtype)
