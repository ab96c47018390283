"""memory_bytes against Huang et al. (2018) Sec. 3.4.1 and the per-method formulas."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import MEMORY_METHODS, logits_bytes, memory_bytes


def test_music_transformer_example():
    """L = 2048, D = 512, float32: a^K takes ~8.5 GB, the causal skew's Er ~4.2 MB."""
    for method in ("einsum", "matmul"):
        assert memory_bytes(method, 2048, 512) == 2048 * 2048 * 512 * 4
        assert round(memory_bytes(method, 2048, 512) / 1e9, 2) == 8.59  # "8.5 GB"
    assert memory_bytes("skew", 2048, 512, causal=True) == 2048 * 512 * 4
    assert round(memory_bytes("skew", 2048, 512, causal=True) / 1e6, 2) == 4.19  # "4.2 MB"
    ratio = memory_bytes("einsum", 2048, 512) / memory_bytes("skew", 2048, 512, causal=True)
    assert ratio == 2048  # the skew saves a factor of L


sizes = st.integers(1, 300)


@given(
    n=sizes,
    d=sizes,
    heads=st.integers(1, 16),
    batch=st.integers(1, 8),
    bpv=st.sampled_from([2, 4, 8]),
    k=st.integers(0, 64),
)
def test_formulas_per_method(n, d, heads, batch, bpv, k):
    """einsum/matmul (n, n, d) shared by heads and batch; skew (2n-1, d) or (n, d) causal;
    bucket (b, h, n, 2k+1); loop one (d,) vector."""
    kw = {"heads": heads, "batch": batch, "bytes_per_value": bpv}
    assert memory_bytes("einsum", n, d, **kw) == n * n * d * bpv
    assert memory_bytes("matmul", n, d, **kw) == n * n * d * bpv
    assert memory_bytes("skew", n, d, **kw) == (2 * n - 1) * d * bpv
    assert memory_bytes("skew", n, d, causal=True, **kw) == n * d * bpv
    assert memory_bytes("bucket", n, d, k=k, **kw) == batch * heads * n * (2 * k + 1) * bpv
    assert memory_bytes("loop", n, d, **kw) == d * bpv
    assert logits_bytes(n, heads, batch, bpv) == batch * heads * n * n * bpv


def test_every_listed_method_is_accepted():
    for method in MEMORY_METHODS:
        assert memory_bytes(method, 8, 4, k=2) > 0


def test_bucket_needs_k():
    with pytest.raises(ValueError, match=r"(?s)(?=.*\bk\b)(?=.*None)"):
        memory_bytes("bucket", 16, 8)
