"""Bytes of the position-dependent intermediate each relative-logits method builds.

Huang et al. (2018), Sec. 3.4.1: for L = 2048 and D = 512 the materialized a^K (L, L, D) takes
8.5 GB per layer in float32; the skew needs only Er (L, D), 4.2 MB.
"""

from __future__ import annotations

from relpos_core.banded import block_rows
from relpos_core.checks import check_choice, check_int

MEMORY_METHODS = ("loop", "einsum", "matmul", "skew", "bucket", "banded")


def memory_bytes(
    method: str,
    n: int,
    d: int,
    heads: int = 1,
    batch: int = 1,
    bytes_per_value: int = 4,
    *,
    k: int | None = None,
    causal: bool = False,
) -> int:
    """Bytes of what ``method`` materializes besides the (b, h, n, n) logits themselves.

    einsum / matmul: a^K, (n, n, d), shared by heads and batch.
    skew: Er, (2n-1, d) for two-sided attention, (n, d) when ``causal`` (Huang's masked skew).
    bucket: Q w^T, (b, h, n, 2k+1); needs ``k``.
    banded: Q w^T plus the reused (b, h, rows, n) block buffer of ``relative_attention_output``
    (rows = ``banded.block_rows``), which never builds the full logits; needs ``k``.
    loop: one (d,) vector at a time.

    >>> memory_bytes("einsum", 2048, 512) / 1e9  # Music Transformer's 8.5 GB
    8.589934592
    >>> memory_bytes("skew", 2048, 512, causal=True) / 1e6  # ... versus 4.2 MB
    4.194304
    """
    method = check_choice("method", method, MEMORY_METHODS)
    n = check_int("n (sequence length)", n, 1)
    d = check_int("d (head dim)", d, 1)
    heads = check_int("heads", heads, 1)
    batch = check_int("batch", batch, 1)
    bytes_per_value = check_int("bytes_per_value", bytes_per_value, 1)
    if method in ("einsum", "matmul"):
        values = n * n * d
    elif method == "skew":
        values = (n if causal else 2 * n - 1) * d
    elif method in ("bucket", "banded"):
        if k is None:
            raise ValueError(f"k (clip distance) is required for method {method!r}, got None")
        k = check_int("k (clip distance)", k, 0)
        values = batch * heads * n * (2 * k + 1)
        if method == "banded":
            values += batch * heads * block_rows(n, n, batch * heads) * n
    else:
        values = d
    return values * bytes_per_value


def logits_bytes(n: int, heads: int = 1, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Bytes of one (b, h, n, n) logits tensor, the floor every exact method pays."""
    n = check_int("n (sequence length)", n, 1)
    heads = check_int("heads", heads, 1)
    batch = check_int("batch", batch, 1)
    bytes_per_value = check_int("bytes_per_value", bytes_per_value, 1)
    return batch * heads * n * n * bytes_per_value
