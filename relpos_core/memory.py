"""Bytes a relative attention needs, from each method's own model in ``relpos_core.methods``.

Huang et al. (2018), Sec. 3.4.1: for L = 2048 and D = 512 the materialized a^K (L, L, D) takes
8.5 GB per layer in float32; the skew needs only Er (L, D), 4.2 MB. ``memory_bytes`` gives that
comparison for every method; ``attention_bytes`` estimates the peak of a whole call, which the
guard (``relpos_core.guard``), the explorer's budget and the benchmark read.
"""

from __future__ import annotations

from relpos_core.checks import check_bool, check_int
from relpos_core.methods import Method, get_method


def logits_bytes(n: int, heads: int = 1, batch: int = 1, bytes_per_value: int = 4) -> int:
    """Bytes of one (b, h, n, n) logits tensor, the floor every exact method pays.

    >>> logits_bytes(1024, heads=8)
    33554432
    """
    n = check_int("n (sequence length)", n, 1)
    heads = check_int("heads", heads, 1)
    batch = check_int("batch", batch, 1)
    bytes_per_value = check_int("bytes_per_value", bytes_per_value, 1)
    return batch * heads * n * n * bytes_per_value


def memory_bytes(
    method: str,
    n: int,
    d: int,
    heads: int = 1,
    batch: int = 1,
    bytes_per_value: int = 4,
    *,
    max_relative_position: int | None = None,
    causal: bool = False,
) -> int:
    """Bytes of the position-dependent intermediate ``method`` builds for an n x n attention.

    einsum / matmul: a^K, (n, n, d), shared by heads and batch. skew: Er, (2n-1, d) for
    two-sided attention, (n, d) when ``causal`` (Huang's masked skew). bucket: Q w^T,
    (b, h, n, 2k+1). banded: Q w^T plus its one reused (b, h, rows, n) block. loop: one vector.
    bucket and banded need ``max_relative_position``.

    >>> memory_bytes("einsum", 2048, 512) / 1e9  # Music Transformer's 8.5 GB
    8.589934592
    >>> memory_bytes("skew", 2048, 512, causal=True) / 1e6  # ... versus 4.2 MB
    4.194304
    """
    chosen = get_method(method)
    n = check_int("n (sequence length)", n, 1)
    d = check_int("d (head dim)", d, 1)
    bh = check_int("heads", heads, 1) * check_int("batch", batch, 1)
    itemsize = check_int("bytes_per_value", bytes_per_value, 1)
    check_bool("causal", causal)
    if max_relative_position is None:
        if chosen.name in ("bucket", "banded"):
            raise ValueError(f"max_relative_position is required for method {method!r}, got None")
        k = 0
    else:
        k = check_int("max_relative_position (clip distance k)", max_relative_position, 0)
    total = chosen.position_bytes(n, n, d, bh, k, causal) * itemsize
    if chosen.name == "banded":
        total += chosen.working_bytes(n, n, d, bh, k, itemsize)
    return total


def attention_bytes(
    method: Method,
    shape: tuple[int, int, int, int, int, int],
    max_relative_position: int,
    *,
    itemsize: int = 4,
    trace: bool = False,
    return_weights: bool = False,
    grad: bool = False,
    causal: bool = False,
) -> int:
    """Estimated peak bytes of one ``relative_attention`` call, an upper bound for the guard.

    ``shape`` = (b, h, n_q, n_k, d, d_v). Counts the method's position intermediate and working
    memory, the (b, h, n_q, n_k) tensors the call holds at once (a trace keeps six, an unfused
    output about three, autograd through unfused ops about four more; the fused banded path one
    block, three with gradients) and the output.
    """
    b, h, n_q, n_k, d, d_v = shape
    bh, k = b * h, max_relative_position
    square = bh * n_q * n_k * itemsize
    total = method.position_bytes(n_q, n_k, d, bh, k, causal) * itemsize
    total += bh * n_q * (d_v + 2 * k + 1) * itemsize  # the output and the bucket masses
    if method.fused and not trace and not (grad and return_weights):
        block = method.working_bytes(n_q, n_k, d, bh, k, itemsize)
        total += (3 if grad else 1) * block + (square if return_weights else 0)
        return total
    total += method.working_bytes(n_q, n_k, d, bh, k, itemsize)
    return total + square * (6 if trace else 3) + (4 * square if grad else 0)
