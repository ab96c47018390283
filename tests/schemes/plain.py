"""Plain definitions shared by the scheme tests: softmax and outputs by Python loops, random
inputs from a seed, and the checks every scheme must pass (row blocks equal rows of the whole,
gradients against finite differences).

b batch · h heads · i query row · j key · d head dim · the query of row i sits at position
offset + i, so its distance to key j is r = j - (offset + i).
"""

from __future__ import annotations

import math

import torch
from torch.autograd import gradcheck

from relpos_core.schemes import PositionScheme

F64 = torch.float64
EXACT = {"rtol": 1e-12, "atol": 1e-12}

# (n_q, n_k, query_offset): square self-attention, a block with keys before it (a cache), a
# block in the middle of a longer sequence, and queries past the last key
SHAPES = [(5, 5, 0), (3, 7, 4), (2, 6, 1), (4, 4, 2)]


def randn(*shape: int, seed: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


def qkv(n_q: int, n_k: int, heads: int = 3, d: int = 4, d_v: int | None = None, seed: int = 0):
    """q (2,h,n_q,d), k (2,h,n_k,d), v (2,h,n_k,d_v) in float64."""
    d_v = d if d_v is None else d_v
    return (
        randn(2, heads, n_q, d, seed=seed),
        randn(2, heads, n_k, d, seed=seed + 1),
        randn(2, heads, n_k, d_v, seed=seed + 2),
    )


def allowed(i: int, j: int, offset: int, causal: bool) -> bool:
    """May the query of row i see key j?"""
    return not causal or j <= offset + i


def softmax_loop(logits: torch.Tensor, offset: int, causal: bool) -> torch.Tensor:
    """alpha_ij = exp(e_ij) / sum over allowed j' of exp(e_ij'), zero where not allowed."""
    b, h, n_q, n_k = logits.shape
    out = torch.zeros_like(logits)
    for bi in range(b):
        for hi in range(h):
            for i in range(n_q):
                keys = [j for j in range(n_k) if allowed(i, j, offset, causal)]
                if not keys:
                    continue
                top = max(float(logits[bi, hi, i, j]) for j in keys)
                exps = {j: math.exp(float(logits[bi, hi, i, j]) - top) for j in keys}
                total = sum(exps.values())
                for j in keys:
                    out[bi, hi, i, j] = exps[j] / total
    return out


def output_loop(weights: torch.Tensor, v: torch.Tensor, value_vector=None) -> torch.Tensor:
    """z_i = sum_j alpha_ij (v_j + a^V_ij); value_vector(h, i, j) gives a^V_ij (None: none)."""
    b, h, n_q, n_k = weights.shape
    out = torch.zeros(b, h, n_q, v.shape[-1], dtype=v.dtype)
    for bi in range(b):
        for hi in range(h):
            for i in range(n_q):
                for j in range(n_k):
                    vec = v[bi, hi, j]
                    if value_vector is not None:
                        vec = vec + value_vector(hi, i, j)
                    out[bi, hi, i] += weights[bi, hi, i, j] * vec
    return out


def cell_loop(shape: tuple[int, int, int, int], value) -> torch.Tensor:
    """A (b,h,n_q,n_k) tensor whose cell (b,h,i,j) is value(b, h, i, j)."""
    b, h, n_q, n_k = shape
    out = torch.zeros(shape, dtype=F64)
    for bi in range(b):
        for hi in range(h):
            for i in range(n_q):
                for j in range(n_k):
                    out[bi, hi, i, j] = value(bi, hi, i, j)
    return out


def content_loop(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """q_i · k_j / sqrt(d) for every cell."""
    shape = (*q.shape[:3], k.shape[2])
    d = q.shape[-1]
    return cell_loop(shape, lambda b, h, i, j: float(q[b, h, i] @ k[b, h, j]) / math.sqrt(d))


def assert_scheme_matches(
    scheme: PositionScheme,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    want_terms: dict[str, torch.Tensor],
    *,
    causal: bool,
    offset: int,
    value_vector=None,
) -> None:
    """Terms, logits, weights and outputs of ``scheme`` equal the loop definition."""
    terms = scheme.terms(q, k, causal=causal, query_offset=offset)
    assert list(terms) == list(scheme.TERMS)
    for name, want in want_terms.items():
        torch.testing.assert_close(terms[name], want, **EXACT, msg=name)
    logits = sum(want_terms.values())
    torch.testing.assert_close(scheme.logits(q, k, causal=causal, query_offset=offset), logits)
    position = sum(want_terms[name] for name in scheme.POSITION_TERMS)
    got_position = scheme.position_term(q, k, causal=causal, query_offset=offset)
    torch.testing.assert_close(got_position, position, **EXACT)
    weights = softmax_loop(logits, offset, causal)
    z, alpha = scheme(q, k, v, causal=causal, query_offset=offset)
    torch.testing.assert_close(alpha, weights, **EXACT)
    torch.testing.assert_close(z, output_loop(weights, v, value_vector), **EXACT)


def assert_blocks_match_whole(scheme: PositionScheme, n: int, causal: bool, seed: int = 7):
    """Row blocks of one length-n sequence, each at its own query_offset, give the rows of the
    whole: terms, weights and outputs."""
    q, k, v = qkv(n, n, scheme.heads, scheme.head_dim, seed=seed)
    whole = scheme.terms(q, k, causal=causal)
    z, alpha = scheme(q, k, v, causal=causal)
    for r0, r1 in [(0, 1), (0, n - 2), (1, 3), (2, n), (n - 1, n)]:
        rows = q[:, :, r0:r1]
        part = scheme.terms(rows, k, causal=causal, query_offset=r0)
        for name in scheme.TERMS:
            torch.testing.assert_close(part[name], whole[name][:, :, r0:r1], **EXACT, msg=name)
        z_part, alpha_part = scheme(rows, k, v, causal=causal, query_offset=r0)
        torch.testing.assert_close(alpha_part, alpha[:, :, r0:r1], **EXACT)
        torch.testing.assert_close(z_part, z[:, :, r0:r1], **EXACT)


def assert_gradients(scheme: PositionScheme, n_q: int, n_k: int, offset: int, causal: bool):
    """gradcheck of (z, alpha) with respect to q, k, v and every learned parameter."""
    scheme = scheme.double()
    names = [name for name, _ in scheme.named_parameters()]
    params = [p.detach().clone().requires_grad_() for _, p in scheme.named_parameters()]
    q, k, v = (t.requires_grad_() for t in qkv(n_q, n_k, scheme.heads, scheme.head_dim, seed=3))

    def run(q, k, v, *values):
        return torch.func.functional_call(
            scheme,
            dict(zip(names, values, strict=True)),
            (q, k, v),
            {"causal": causal, "query_offset": offset},
        )

    assert gradcheck(run, (q, k, v, *params))
    return names
