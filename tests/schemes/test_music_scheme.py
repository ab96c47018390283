"""MusicRelative (tensor2tensor's relative attention v2) three ways:

1. the definition as loops: e_ij = q_i · (k_j + E_r) / sqrt(d), z_i = sum_j alpha_ij (v_j + E^V_r),
   r = j - i, E_r = row r + L - 1 of the head's table for |r| <= L - 1 (r <= 0 when causal), the
   zero vector otherwise;
2. tensor2tensor's own steps, rewritten below in torch: the table padded with zeros and sliced
   to the sequence (get_relative_embeddings_left / _left_right), Q E^T, the masked or unmasked
   relative-to-absolute reshape, and the absolute-to-relative reshape for the value term;
3. the Music Transformer paper's Sec. 3.4.1: pad a dummy column on the left of Q E_r^T, reshape
   to (L+1, L), keep the last L rows.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from relpos_core.schemes import MusicRelative
from tests.schemes.plain import (
    EXACT,
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    content_loop,
    qkv,
)


def make(length: int, values: bool, heads: int = 3, d: int = 4, seed: int = 0) -> MusicRelative:
    gen = torch.Generator().manual_seed(seed)
    return MusicRelative(heads, d, length, values, generator=gen).double()


def embedding(table: torch.Tensor, h: int, r: int, length: int, causal: bool) -> torch.Tensor:
    """E_r of head h: table (h, 2L-1, d) row r + L - 1 inside the table, else zeros (d,)."""
    top = 0 if causal else length - 1
    if -(length - 1) <= r <= top:
        return table[h, r + length - 1]
    return torch.zeros(table.shape[-1], dtype=table.dtype)


# ---- 1. the definition -----------------------------------------------------------------------


@pytest.mark.parametrize("values", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)  # (5, 5, 0) is the skew path
@pytest.mark.parametrize("length", [1, 2, 5, 9])
def test_equals_the_definition(n_q, n_k, offset, length, causal, values):
    scheme = make(length, values)
    q, k, v = qkv(n_q, n_k)
    e_k = scheme.embed_k.detach()
    d = q.shape[-1]

    def relative(b, h, i, j):
        r = j - (offset + i)
        return float(q[b, h, i] @ embedding(e_k, h, r, length, causal)) / math.sqrt(d)

    def value_vector(h, i, j):
        return embedding(scheme.embed_v.detach(), h, j - (offset + i), length, causal)

    want = {"content": content_loop(q, k), "relative": cell_loop((2, 3, n_q, n_k), relative)}
    assert_scheme_matches(
        scheme,
        q,
        k,
        v,
        want,
        causal=causal,
        offset=offset,
        value_vector=value_vector if values else None,
    )


@pytest.mark.parametrize("values", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal, values):
    """The whole goes through the skew, every block through the gather."""
    assert_blocks_match_whole(make(3, values), 7, causal)


def test_far_distances_get_no_position_signal():
    """Beyond L - 1 the relative term is exactly 0: no clipping to the edge vector."""
    scheme = make(2, False)
    q, k, _ = qkv(6, 6)
    rel = scheme.terms(q, k)["relative"]
    far = torch.arange(6)[None, :] - torch.arange(6)[:, None]
    assert (rel[..., far.abs() > 1] == 0).all()
    assert (rel[..., far.abs() <= 1] != 0).all()


# ---- 2. tensor2tensor's steps ----------------------------------------------------------------


def t2t_embeddings_left(table: torch.Tensor, max_relative_position: int, length: int):
    """get_relative_embeddings_left: (h, L, d) for r = -(L-1)..0 -> (h, length, d)."""
    pad_length = max(length - max_relative_position, 0)
    start = max(max_relative_position - length, 0)
    padded = F.pad(table, (0, 0, pad_length, 0))
    return padded[:, start : start + length]


def t2t_embeddings_left_right(table: torch.Tensor, max_relative_position: int, length: int):
    """get_relative_embeddings_left_right: (h, 2L-1, d) -> (h, 2 length - 1, d)."""
    pad_length = max(length - max_relative_position, 0)
    start = max(max_relative_position - length, 0)
    padded = F.pad(table, (0, 0, pad_length, pad_length))
    return padded[:, start : start + 2 * length - 1]


def t2t_relative_to_absolute_masked(x):  # (b,h,n,n) -> (b,h,n,n), right only for j <= i
    b, h, n, _ = x.shape
    return F.pad(x, (1, 0)).reshape(b, h, 1 + n, n)[:, :, 1:, :]


def t2t_absolute_to_relative_masked(x):  # (b,h,n,n) -> (b,h,n,n)
    b, h, n, _ = x.shape
    return F.pad(x, (0, 0, 1, 0)).reshape(b, h, n, n + 1)[:, :, :, 1:]


def t2t_relative_to_absolute_unmasked(x):  # (b,h,n,2n-1) -> (b,h,n,n)
    b, h, n, _ = x.shape
    x = torch.cat([x, x.new_zeros(b, h, n, 1)], dim=3)
    flat = torch.cat([x.reshape(b, h, 2 * n * n), x.new_zeros(b, h, n - 1)], dim=2)
    return flat.reshape(b, h, n + 1, 2 * n - 1)[:, :, :n, n - 1 :]


def t2t_absolute_to_relative_unmasked(x):  # (b,h,n,n) -> (b,h,n,2n-1)
    b, h, n, _ = x.shape
    flat = F.pad(x, (0, n - 1)).reshape(b, h, n * n + n * (n - 1))
    return F.pad(flat, (n, 0)).reshape(b, h, n, 2 * n)[:, :, :, 1:]


def t2t_attention(q, k, v, scheme: MusicRelative, causal: bool):
    """dot_product_self_attention_relative_v2 (causal) or the unmasked variant; q is scaled
    first as tensor2tensor's multihead_attention does. Returns (logits, weights, output)."""
    length, n = scheme.max_relative_position, q.shape[2]
    q = q * q.shape[-1] ** -0.5
    logits = q @ k.transpose(-2, -1)
    if causal:  # the masked variant has only the past half of the table: rows -(L-1)..0
        embed = t2t_embeddings_left(scheme.embed_k.detach()[:, :length], length, n)
        rel = t2t_relative_to_absolute_masked(torch.einsum("bhld,hmd->bhlm", q, embed))
    else:
        embed = t2t_embeddings_left_right(scheme.embed_k.detach(), length, n)
        rel = t2t_relative_to_absolute_unmasked(torch.einsum("bhld,hmd->bhlm", q, embed))
    logits = logits + rel
    bias = torch.triu(torch.full((n, n), -1e9, dtype=q.dtype), 1) if causal else 0.0
    weights = torch.softmax(logits + bias, dim=-1)
    out = weights @ v
    if scheme.embed_v is not None:
        table_v = scheme.embed_v.detach()
        if causal:
            embed_v = t2t_embeddings_left(table_v[:, :length], length, n)
            relative_weights = t2t_absolute_to_relative_masked(weights)
        else:
            embed_v = t2t_embeddings_left_right(table_v, length, n)
            relative_weights = t2t_absolute_to_relative_unmasked(weights)
        out = out + torch.einsum("bhlm,hmd->bhld", relative_weights, embed_v)
    return logits, weights, out


@pytest.mark.parametrize("values", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n", "length"), [(5, 2), (5, 5), (4, 7), (1, 3)])
def test_equals_tensor2tensor(n, length, causal, values):
    scheme = make(length, values)
    q, k, v = qkv(n, n, seed=11)
    want_logits, want_weights, want_out = t2t_attention(q, k, v, scheme, causal)
    logits = scheme.logits(q, k, causal=causal)
    seen = torch.ones(n, n, dtype=torch.bool).tril() if causal else torch.ones(n, n).bool()
    torch.testing.assert_close(logits[..., seen], want_logits[..., seen], **EXACT)
    z, alpha = scheme(q, k, v, causal=causal)
    torch.testing.assert_close(alpha, want_weights, **EXACT)
    torch.testing.assert_close(z, want_out, **EXACT)


# ---- 3. the paper's description --------------------------------------------------------------


@pytest.mark.parametrize(("n", "length"), [(6, 6), (6, 3)])
def test_equals_the_papers_skew(n, length):
    """Sec. 3.4.1 with E_r ordered from distance -(n-1) to 0 (zeros where the table ends):
    S = Q E_r^T (n, n); pad a dummy column before the leftmost column -> (n, n+1); reshape to
    (n+1, n); keep the last n rows. S_rel[i, j] = q_i · E_(j-i) on and below the diagonal."""
    scheme = make(length, False)
    q, k, _ = qkv(n, n, seed=4)
    e_k = scheme.embed_k.detach()
    e_r = torch.stack(
        [
            torch.stack([embedding(e_k, h, r, length, True) for r in range(-(n - 1), 1)])
            for h in range(scheme.heads)
        ]
    )  # (h, n, d), row c is distance c - (n-1)
    s = q @ e_r.transpose(-2, -1)  # (b,h,n,d),(h,d,n) -> (b,h,n,n)
    padded = torch.cat([torch.zeros(*s.shape[:-1], 1, dtype=s.dtype), s], dim=-1)
    s_rel = padded.reshape(*s.shape[:2], n + 1, n)[:, :, 1:, :]
    lower = torch.ones(n, n, dtype=torch.bool).tril()
    rel = scheme.terms(q, k, causal=True)["relative"] * math.sqrt(q.shape[-1])
    torch.testing.assert_close(rel[..., lower], s_rel[..., lower], **EXACT)
    assert (rel[..., ~lower] == 0).all()  # the scheme keeps no future distances when causal


# ---- gradients -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_q", "n_k", "offset", "causal"), [(3, 3, 0, True), (3, 3, 0, False), (2, 4, 1, False)]
)
def test_gradients(n_q, n_k, offset, causal):
    names = assert_gradients(make(2, True, heads=2, d=2), n_q, n_k, offset, causal)
    assert names == ["embed_k", "embed_v"]


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = False  # q_i · E_(j-i) reads the query


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    length = int(settings["max_relative_position"])
    return h * (2 * length - 1) * d  # E, (2L - 1, d) per head, keys only by default
