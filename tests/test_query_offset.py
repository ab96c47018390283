"""query_offset: a block of query rows at positions s.. equals the same rows of the full attention.

Each row of attention depends only on its own query, every key and the distances j - i, so
``relative_attention(q[:, :, s:s + m], k, v, ..., query_offset=s)`` must reproduce rows
[s, s + m) of ``relative_attention(q, k, v, ...)`` in every field of the trace, with causal
masks, padding masks and full masks (their rows), for every method that takes an offset.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import relpos_core as rc

FIELDS = (
    "content_logits",
    "relative_logits",
    "scaled_logits",
    "allowed",
    "weights",
    "content_output",
    "relative_output",
    "output",
)
OFFSET_METHODS = [m for m in rc.ATTENTION_METHODS if m != "skew"]


def inputs(n: int, d: int, heads: int, k: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    q, keys, v = (torch.randn(1, heads, n, d, generator=gen, dtype=torch.float64) for _ in "qkv")
    tables = [rc.relative_table(k, d, seed=seed + i, dtype=torch.float64) for i in (1, 2)]
    return q, keys, v, *tables


@given(
    n_q=st.integers(1, 12),
    n_k=st.integers(1, 12),
    k=st.integers(0, 14),
    first=st.integers(0, 11),
    rows=st.integers(1, 12),
)
def test_relative_index_with_an_offset_is_rows_of_the_full_index(n_q, n_k, k, first, rows):
    """relative_index(rows, n_k, k, query_offset=s) = relative_index(s + rows, n_k, k)[s:]."""
    full = rc.relative_index(first + rows, n_k, k)
    block = rc.relative_index(rows, n_k, k, query_offset=first)
    assert torch.equal(block, full[first:])
    expected = [[max(-k, min(k, j - (first + r))) + k for j in range(n_k)] for r in range(rows)]
    assert block.tolist() == expected


def test_relative_index_offset_worked_example() -> None:
    full = rc.relative_index(9, 7, 2)
    torch.testing.assert_close(rc.relative_index(4, 7, 2, query_offset=3), full[3:7])
    torch.testing.assert_close(rc.relative_index(9, 7, 2, query_offset=0), full)
    assert rc.relative_index(2, 4, 1, query_offset=2).tolist() == [[0, 0, 1, 2], [0, 0, 0, 1]]


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 24),
    d=st.integers(1, 5),
    heads=st.integers(1, 3),
    k=st.integers(0, 30),
    causal=st.booleans(),
    pad=st.integers(0, 24),
    full_mask=st.booleans(),
    method=st.sampled_from(OFFSET_METHODS),
    data=st.data(),
)
def test_rows_equal_the_full_trace(n, d, heads, k, causal, pad, full_mask, method, data) -> None:
    first = data.draw(st.integers(0, n - 1))
    m = data.draw(st.integers(1, n - first))
    q, keys, v, table_k, table_v = inputs(n, d, heads, k, seed=n * 31 + k)
    if full_mask:  # a (n, n) mask: the block takes its rows
        gen = torch.Generator().manual_seed(n + k)
        mask = torch.rand(n, n, generator=gen) < 0.7
        block_mask = mask[first : first + m]
    else:  # a key mask broadcasts over the queries, the same for the block
        mask = rc.trailing_padding_mask(n, min(pad, n)) if pad else None
        block_mask = mask
    full = rc.relative_attention(
        q, keys, v, table_k, table_v, mask=mask, causal=causal, method="loop", trace=True
    )
    block = rc.relative_attention(
        q[:, :, first : first + m], keys, v, table_k, table_v,
        mask=block_mask, causal=causal, query_offset=first, method=method, trace=True,
    )  # fmt: skip
    assert block.scale == full.scale
    assert block.query_offset == first
    for name in FIELDS:
        torch.testing.assert_close(
            getattr(block, name), getattr(full, name)[:, :, first : first + m], msg=name
        )
    allowed = block.allowed
    torch.testing.assert_close(
        block.masked_logits[allowed], full.masked_logits[:, :, first : first + m][allowed]
    )
    assert torch.isinf(block.masked_logits[~allowed]).all()
    out = rc.relative_attention(
        q[:, :, first : first + m], keys, v, table_k, table_v,
        mask=block_mask, causal=causal, query_offset=first, method=method,
    )  # fmt: skip
    torch.testing.assert_close(out, full.output[:, :, first : first + m])


@pytest.mark.parametrize("causal", [False, True])
def test_blocks_of_rows_rebuild_the_full_output(causal) -> None:
    """Row blocks at every offset, concatenated, are the whole attention (fused path)."""
    q, keys, v, table_k, table_v = inputs(23, 4, 2, 3, seed=1)
    full = rc.relative_attention(q, keys, v, table_k, table_v, causal=causal)
    blocks = [
        rc.relative_attention(
            q[:, :, s : s + 5], keys, v, table_k, table_v, causal=causal, query_offset=s
        )
        for s in range(0, 23, 5)
    ]
    torch.testing.assert_close(torch.cat(blocks, dim=2), full)


@pytest.mark.parametrize("method", OFFSET_METHODS)
def test_tensor2tensor_convention_is_the_last_rows(method) -> None:
    """query_offset = n_k - n_q puts the queries at the last positions (tensor2tensor)."""
    q, keys, v, table_k, table_v = inputs(9, 3, 2, 2, seed=2)
    full = rc.relative_attention(q, keys, v, table_k, table_v, causal=True, method="loop")
    last = rc.relative_attention(
        q[:, :, 6:], keys, v, table_k, table_v, causal=True, query_offset=9 - 3, method=method
    )
    torch.testing.assert_close(last, full[:, :, 6:])


def test_decoding_with_a_key_value_cache_equals_causal_attention() -> None:
    """Step t sees the t + 1 keys cached so far, its query at position t = n_k - 1: the outputs
    of the steps are the rows of causal attention over the whole sequence."""
    q, keys, v, table_k, table_v = inputs(10, 4, 2, 3, seed=3)
    full = rc.relative_attention(q, keys, v, table_k, table_v, causal=True, method="loop")
    for t in range(10):
        step = rc.relative_attention(
            q[:, :, t : t + 1], keys[:, :, : t + 1], v[:, :, : t + 1], table_k, table_v,
            query_offset=t,
        )  # fmt: skip
        torch.testing.assert_close(step, full[:, :, t : t + 1])


def test_queries_past_the_last_key_see_the_edge_bucket() -> None:
    """Queries at positions beyond every key: all distances j - i <= -k use w_{-k}."""
    q, keys, v, table_k, table_v = inputs(4, 3, 1, 2, seed=4)
    trace = rc.relative_attention(
        q[:, :, :2], keys, v, table_k, table_v, query_offset=10, method="loop", trace=True
    )
    want = (q[:, :, :2] @ table_k[0])[..., None].expand(-1, -1, -1, 4)
    torch.testing.assert_close(trace.relative_logits, want)
    for method in OFFSET_METHODS:
        got = rc.relative_attention(
            q[:, :, :2], keys, v, table_k, table_v, query_offset=10, method=method, trace=True
        )
        for name in FIELDS:
            torch.testing.assert_close(getattr(got, name), getattr(trace, name), msg=name)


def test_bad_shapes_and_offsets_are_named() -> None:
    q, keys, v, table_k, table_v = inputs(6, 4, 2, 2, seed=0)
    with pytest.raises(ValueError, match="v must have shape"):
        rc.relative_attention(q, keys[:, :, :1], v, table_k, table_v, query_offset=2)
    with pytest.raises(ValueError, match="table_v must have shape"):
        rc.relative_attention(q, keys, v, table_k, table_v[:3], query_offset=2)
    with pytest.raises(ValueError, match="does not broadcast"):
        rc.relative_attention(
            q[:, :, 2:], keys, v, table_k, table_v, mask=torch.ones(3, 1, 1, 6), query_offset=2
        )
    with pytest.raises(ValueError, match=r"query_offset \(position of the first query\).*-1"):
        rc.relative_attention(q, keys, v, table_k, table_v, query_offset=-1)
    with pytest.raises(TypeError, match=r"query_offset.*float"):
        rc.relative_attention(q, keys, v, table_k, table_v, query_offset=1.0)
    with pytest.raises(ValueError, match=r"skew.*query_offset=2"):
        rc.relative_attention(q, keys, v, table_k, table_v, query_offset=2, method="skew")
