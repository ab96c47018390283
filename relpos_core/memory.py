"""Bytes a relative attention needs, from each method's own model in ``relpos_core.methods``.

Huang et al. (2018), Sec. 3.4.1: for L = 2048 and D = 512 the materialized a^K (L, L, D) takes
8.5 GB per layer in float32; the skew needs only Er (L, D), 4.2 MB. ``memory_bytes`` gives that
comparison for every method; ``attention_bytes`` estimates the peak of a whole call, which the
guard (``relpos_core.guard``), the explorer's budget and the benchmark read.
"""

from __future__ import annotations

from relpos_core.methods import BANDED, Kernel, Method, Sizes, TermBytes, fused_or_steps, get_method
from relpos_core.validation import check_bool, check_int, check_shape

SMALL_BYTES = 1024  # scalars and other tensors of a few elements that every call makes


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
    method: Method | Kernel | str,
    shape: tuple[int, int, int, int, int, int],
    max_relative_position: int,
    *,
    itemsize: int = 4,
    trace: bool = False,
    return_weights: bool = False,
    grad: bool = False,
    causal: bool = False,
    mask_cells: int = 0,
    dropout: bool = False,
    region_split: bool = False,
) -> int:
    """Estimated peak bytes of one ``relative_attention`` call, an upper bound for the guard.

    ``method`` a registered method, its name, or a kernel; ``shape`` = (b, h, n_q, n_k, d, d_v);
    ``mask_cells`` the number of values the user's mask stores (0 for none); ``dropout``
    whether dropout_p > 0; ``region_split`` True when the call is known to run the region split
    (``regions.regions_apply``), which bounds the fused path by the split's own model (False:
    by the larger of the split's and the blocked loop's). With ``grad`` the bound covers the
    backward too, the gradients of the inputs included. Everything the call allocates counts,
    its result too; the inputs do not. ``scripts/measure_memory.py`` measures each method's
    peak against this bound.

    A kernel has its own model (``Kernel.fused_bytes``); a method runs its kernel where
    ``methods.fused_or_steps`` says the call would. The step-by-step path runs
    ``methods.definition.attend``, whose (b, h, n_q, n_k) tensors are the same for every
    method, around the method's two terms (``Method.term_bytes``):

        key term       the method's own peak
        softmax        content, relative and scaled logits, then the masked copy, its safe copy,
                       the softmax and its product with the rows' any-allowed flag: 7 squares
        dropout        the uniform draw, the keep flags and two products
        value term     the three logits, the weights and the method's own peak
        end            the masked logits beside them; a trace keeps them all

    With gradients autograd keeps the softmax's output beside the weights, the mask's
    negation and what the terms keep, and the backward adds three squares or the terms' own
    backward, whichever is larger.
    """
    method = get_method(method) if isinstance(method, str) else method
    if not isinstance(method, Method | Kernel):
        raise TypeError(
            f"method must be a Method, a Kernel or a method's name, got {type(method).__name__}"
        )
    shape = b, h, n_q, n_k, d, d_v = check_shape("shape (b, h, n_q, n_k, d, d_v)", shape, 6)
    max_relative_position = check_int(
        "max_relative_position (clip distance k)", max_relative_position, 0
    )
    itemsize = check_int("itemsize", itemsize, 1)
    trace, return_weights, grad, causal, dropout, region_split = (
        check_bool(name, value)
        for name, value in (
            ("trace", trace),
            ("return_weights", return_weights),
            ("grad", grad),
            ("causal", causal),
            ("dropout", dropout),
            ("region_split", region_split),
        )
    )
    mask_cells = check_int("mask_cells", mask_cells, 0)
    s = Sizes.of(shape, max_relative_position, itemsize)
    check = 4 * mask_cells  # a numeric mask checked for 0 and 1, then turned into bools
    # contiguous copies of the keys and values (of a head view, or a stride-0 expand)
    copies = s.keys + s.values
    runs = fused_or_steps(method, trace=trace, grad=grad, weights=return_weights)
    if runs is BANDED and region_split and not (trace or return_weights or dropout or mask_cells):
        need = s.regions_grad if grad else s.regions  # its copies of the keys and values included
    elif isinstance(runs, Kernel):
        need = mask_cells + copies + runs.fused_bytes(s, grad, return_weights, dropout)
    else:
        allowed = mask_cells + (2 * n_q * n_k if causal else 0)  # the user's, the causal rows
        allowed += s.flags if mask_cells and causal else 0  # and their union
        need = allowed + _unfused_bytes(s, runs.term_bytes(s), trace, grad, dropout)
        need += copies + s.queries  # the queries' too, for the key term
    return SMALL_BYTES + max(check, need)


def _unfused_bytes(s: Sizes, t: TermBytes, trace: bool, grad: bool, dropout: bool) -> int:
    """The phases of ``definition.attend`` around the method's terms (see attention_bytes)."""
    square, flags = s.square, s.flags
    kept = t.held + 2 * square  # the relative, content and scaled logits
    drop = square + flags if dropout else 0  # the dropped-out weights and their keep flags
    saved = t.saved + square + flags + drop if grad else 0
    saved += 2 * s.rows  # the rows' any-allowed flags and their negation
    forward = max(
        t.key,
        kept + 4 * square + saved,
        kept + square + 3 * square + flags + saved if dropout else 0,
        kept + square + drop + t.value + s.output + saved,
        kept + 2 * square + flags + drop + 3 * s.output + saved,
    )
    if not grad:
        return forward
    after = saved + square + s.output  # the weights and the output survive the forward
    if trace:  # the trace keeps every step, the logits and the masked logits among them
        after += kept + square + flags
    vectors = s.queries + s.keys + s.values + s.output
    backward = after + max(t.backward + square, 3 * square) + 2 * vectors + 2 * s.tables
    return max(forward, backward)
