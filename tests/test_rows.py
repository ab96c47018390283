"""relpos_core.rows: a block of query rows equals the same rows of the full traced attention."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import relpos_core as rc
from relpos_core.rows import block_index, relative_attention_rows

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


def inputs(n: int, d: int, heads: int, k: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    q, keys, v = (torch.randn(1, heads, n, d, generator=gen, dtype=torch.float64) for _ in "qkv")
    tables = [rc.relative_table(k, d, seed=seed + i, dtype=torch.float64) for i in (1, 2)]
    return q, keys, v, *tables


def test_block_index_is_the_rows_of_the_full_index() -> None:
    full = rc.relative_index(9, 7, 2)
    torch.testing.assert_close(block_index(3, 4, 7, 2), full[3:7])
    torch.testing.assert_close(block_index(0, 9, 7, 2), full)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 24),
    d=st.integers(1, 5),
    heads=st.integers(1, 3),
    k=st.integers(0, 30),
    causal=st.booleans(),
    pad=st.integers(0, 24),
    data=st.data(),
)
def test_rows_equal_the_full_trace(n, d, heads, k, causal, pad, data) -> None:
    first = data.draw(st.integers(0, n - 1))
    m = data.draw(st.integers(1, n - first))
    q, keys, v, table_k, table_v = inputs(n, d, heads, k, seed=n * 31 + k)
    mask = rc.trailing_padding_mask(n, min(pad, n)) if pad else None
    full = rc.relative_attention(q, keys, v, table_k, table_v, mask=mask, causal=causal)
    block = relative_attention_rows(
        q[:, :, first : first + m], keys, v, table_k, table_v, first, mask=mask, causal=causal
    )
    assert block.scale == full.scale
    for name in FIELDS:
        torch.testing.assert_close(
            getattr(block, name), getattr(full, name)[:, :, first : first + m], msg=name
        )
    allowed = block.allowed
    torch.testing.assert_close(
        block.masked_logits[allowed], full.masked_logits[:, :, first : first + m][allowed]
    )
    assert torch.isinf(block.masked_logits[~allowed]).all()


def test_bad_shapes_are_named() -> None:
    q, keys, v, table_k, table_v = inputs(6, 4, 2, 2, seed=0)
    with pytest.raises(ValueError, match="k and v must have shape"):
        relative_attention_rows(q, keys[:, :1], v, table_k, table_v)
    with pytest.raises(ValueError, match="tables must have shapes"):
        relative_attention_rows(q, keys, v, table_k, table_v[:3])
    with pytest.raises(ValueError, match="does not broadcast"):
        relative_attention_rows(q, keys, v, table_k, table_v, mask=torch.ones(3, 1, 1, 6))
    with pytest.raises(ValueError, match="first"):
        relative_attention_rows(q, keys, v, table_k, table_v, first=-1)
