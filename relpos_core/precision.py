"""Half precision: float16 and bfloat16 in and out, float32 inside.

Every public call takes float16, bfloat16, float32 or float64 tensors and returns its result in
the inputs' dtype. What a half dtype would round badly is computed in float32: the logits, the
softmax statistics (row maximum, log-sum-exp) and the per-bucket weight sums, whose 2k+1 buckets
each add up to n_k terms (bfloat16 keeps 8 significant bits: a sum of 1024 weights of about
1e-3 each would lose most of them). The upcast copies O(n d) values, never O(n^2).

Autocast is switched off inside the library: under ``torch.autocast`` a float32 matmul would
otherwise run in the low dtype again.
"""

from __future__ import annotations

import contextlib

import torch

HALF_DTYPES = (torch.float16, torch.bfloat16)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the library computes in for inputs of ``dtype``: float32 for a half dtype.

    >>> compute_dtype(torch.bfloat16), compute_dtype(torch.float64)
    (torch.float32, torch.float64)
    """
    return torch.float32 if dtype in HALF_DTYPES else dtype


def upcast(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Each tensor in its compute dtype (no copy when it already is): differentiable."""
    return tuple(t.to(compute_dtype(t.dtype)) for t in tensors)


def compute_itemsize(dtype: torch.dtype) -> int:
    """Bytes per value of what a call builds inside for inputs of ``dtype``."""
    return torch.empty((), dtype=compute_dtype(dtype)).element_size()


def no_autocast(device: torch.device) -> contextlib.AbstractContextManager:
    """A context without autocast on ``device``'s type (a no-op where autocast is unknown)."""
    if device.type in ("cpu", "cuda", "xpu", "mps", "hpu"):
        return torch.autocast(device.type, enabled=False)
    return contextlib.nullcontext()
