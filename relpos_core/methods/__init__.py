"""How relative attention is computed: every exact method and kernel, and the choice of one.

  base        what a method is (its two terms, its memory model) and what a kernel is
  definition  the readable path: eqs. 2-4 step by step around a method's terms
  exact       the methods: loop, einsum, matmul, skew, bucket, banded
  kernels     the fast paths: banded fused, FlexAttention, Triton
  choice      which one runs and why (``pick_method``)

and the maths each fast path computes with: ``banded`` (the band and its strips),
``banded_attention`` (the blocked loop and its backward), ``regions`` (the region split),
``flex`` and ``triton_attention`` / ``triton_kernels``. Adding a method is one class in
``exact`` (or ``kernels``) and its line in ``choice.METHODS``.
"""

from relpos_core.methods.base import INDEX_BYTES, Kernel, Method, Sizes, TermBytes
from relpos_core.methods.choice import (
    ASKABLE,
    AUTO_ORDER,
    METHOD_NAMES,
    METHODS,
    choose_method,
    fused_or_steps,
    get_method,
    pick_method,
)
from relpos_core.methods.kernels import BANDED, FLEX, TRITON

__all__ = [
    "ASKABLE",
    "AUTO_ORDER",
    "BANDED",
    "FLEX",
    "INDEX_BYTES",
    "METHODS",
    "METHOD_NAMES",
    "TRITON",
    "Kernel",
    "Method",
    "Sizes",
    "TermBytes",
    "choose_method",
    "fused_or_steps",
    "get_method",
    "pick_method",
]
