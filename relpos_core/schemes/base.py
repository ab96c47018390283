"""What every relative position scheme shares: named logit terms, softmax, and the output.

A scheme maps queries q (b,h,n_q,d) and keys k (b,h,n_k,d) to named terms (b,h,n_q,n_k) in
logit units (any 1/sqrt(d) already applied); the logit is their sum:

    e_ij = content_ij + (the scheme's position terms)_ij [+ Transformer-XL's global content]
    alpha_ij = softmax_j(e_ij) over the allowed keys,   z_i = sum_j alpha_ij (v_j [+ a^V_ij])

Every scheme keeps the same content term q_i · k_j / sqrt(d), so two schemes on the same q, k, v
differ only by what position adds. Query row 0 sits at position ``query_offset`` of the keys,
so a block of rows of a longer sequence is computed exactly (the distance is always j - i).
float16 and bfloat16 inputs are computed in float32 and returned in their dtype.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
from torch import nn

from relpos_core.guard import check_fits
from relpos_core.masks import combine_masks, masked_softmax
from relpos_core.precision import compute_itemsize, no_autocast, upcast
from relpos_core.validation import (
    check_bool,
    check_generator,
    check_int,
    check_same_dtype,
    check_tensor,
)

CONTENT = "content"  # the term every scheme shares: q_i · k_j / sqrt(d)


class PositionScheme(nn.Module):
    """One published way to make attention depend on j - i. Subclasses define ``position_terms``.

    ``name`` is the scheme's key in the catalogue (``relpos_core.schemes.catalogue``), which
    holds everything said about it for people: label, paper, formulas, settings.
    ``TERMS`` lists the terms in paper order; ``POSITION_TERMS`` those that depend on position.
    """

    name: ClassVar[str]
    TERMS: ClassVar[tuple[str, ...]] = (CONTENT, "position")
    POSITION_TERMS: ClassVar[tuple[str, ...]] = ("position",)
    has_value_term: ClassVar[bool] = False

    def __init__(self, heads: int, head_dim: int) -> None:
        super().__init__()
        self.heads = check_int("heads", heads, 1, 4096)
        self.head_dim = check_int("head_dim (d)", head_dim, 1, 2**16)

    # ---- what a subclass defines ------------------------------------------------------------

    def position_terms(
        self, q: torch.Tensor, k: torch.Tensor, causal: bool, query_offset: int
    ) -> dict[str, torch.Tensor]:
        """The scheme's own terms (b or 1, h, n_q, n_k), in logit units, keyed as TERMS."""
        raise NotImplementedError

    def position_bytes(self, n_q: int, n_k: int, batch: int = 1, itemsize: int = 4) -> int:
        """Bytes of what the position terms build beyond the (b, h, n_q, n_k) terms themselves."""
        raise NotImplementedError

    def relative_values(
        self, weights: torch.Tensor, causal: bool, query_offset: int
    ) -> torch.Tensor | None:
        """sum_j alpha_ij a^V_ij (b,h,n_q,d_v) for schemes with a value term, else None."""
        return None

    # ---- shared -----------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(self.head_dim)

    def check_inputs(
        self, q: torch.Tensor, k: torch.Tensor, query_offset: int, v: torch.Tensor | None = None
    ) -> None:
        """q (b,h,n_q,d) and k (b,h,n_k,d) [and v (b,h,n_k,d_v)] fit this scheme."""
        check_tensor("q", q, 4)
        check_tensor("k", k, 4)
        tensors = {"q": q, "k": k}
        if v is not None:
            check_tensor("v", v, 4)
            tensors["v"] = v
        check_same_dtype(**tensors)
        b, h, n_q, d = q.shape
        if h != self.heads or d != self.head_dim:
            raise ValueError(
                f"q must have shape (b, heads={self.heads}, n_q, head_dim={self.head_dim}) for "
                f"this {self.name} scheme, got {tuple(q.shape)}"
            )
        if n_q < 1 or b < 1:
            raise ValueError(f"q must hold at least one query, got {tuple(q.shape)}")
        if k.shape[:2] != (b, h) or k.shape[-1] != d or k.shape[2] < 1:
            raise ValueError(
                f"k must have shape (b, h, n_k >= 1, d) = ({b}, {h}, n_k, {d}), "
                f"got {tuple(k.shape)}"
            )
        if v is not None and (v.shape[:3] != k.shape[:3] or v.shape[-1] < 1):
            raise ValueError(
                f"v must have shape (b, h, n_k, d_v) = ({b}, {h}, {k.shape[2]}, d_v), "
                f"got {tuple(v.shape)}"
            )
        if v is not None and self.has_value_term and v.shape[-1] != d:
            raise ValueError(  # z_i = sum_j alpha_ij (v_j + a^V_ij): a^V has the head dim
                f"v must have shape (b, h, n_k, head_dim) = ({b}, {h}, {k.shape[2]}, {d}) for "
                f"this {self.name} scheme with a value term, got {tuple(v.shape)}"
            )
        check_int("query_offset (position of the first query)", query_offset, 0)

    def logit_bytes(self, n_q: int, n_k: int, batch: int = 1, itemsize: int = 4) -> int:
        """Peak estimate of ``terms``: every term plus their sum, and the position work."""
        cells = batch * self.heads * n_q * n_k
        return (len(self.TERMS) + 2) * cells * itemsize + self.position_bytes(
            n_q, n_k, batch, itemsize
        )

    def _check_call(self, q, k, causal, query_offset, max_bytes, v=None) -> None:
        """Inputs fit the scheme, and the estimate fits ``max_bytes`` (before allocating)."""
        self.check_inputs(q, k, query_offset, v)
        check_bool("causal", causal)
        b, _, n_q, _ = q.shape
        n_k = k.shape[2]
        check_fits(
            f"{self.name} scheme with b = {b}, heads = {self.heads}, n_q = {n_q}, n_k = {n_k}",
            self.logit_bytes(n_q, n_k, b, compute_itemsize(q.dtype)),
            max_bytes,
            q.device,
        )

    def terms(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        *,
        causal: bool = False,
        query_offset: int = 0,
        max_bytes: int | None = None,
    ) -> dict[str, torch.Tensor]:
        """Every term of the logit (b,h,n_q,n_k), in paper order; they sum to the logit."""
        self._check_call(q, k, causal, query_offset, max_bytes)
        with no_autocast(q.device):  # half inputs: float32 inside, the inputs' dtype out
            terms = self._terms(*upcast(q, k), causal, query_offset)
        return {name: term.to(q.dtype) for name, term in terms.items()}

    def _terms(self, q, k, causal, query_offset) -> dict[str, torch.Tensor]:
        """``terms`` on checked inputs."""
        content = (q @ k.transpose(-2, -1)) * self.scale  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
        own = self.position_terms(q, k, causal, query_offset)
        shape = content.shape
        out = {CONTENT: content}
        out.update({name: own[name].expand(shape) for name in self.TERMS if name != CONTENT})
        return out

    def logits(self, q: torch.Tensor, k: torch.Tensor, **kwargs) -> torch.Tensor:
        """e_ij, the sum of every term: (b,h,n_q,n_k)."""
        return sum(self.terms(q, k, **kwargs).values())

    def position_term(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        *,
        causal: bool = False,
        query_offset: int = 0,
        max_bytes: int | None = None,
    ) -> torch.Tensor:
        """What position adds to the logit: the sum of ``POSITION_TERMS`` (b,h,n_q,n_k).

        The content term is not computed."""
        self._check_call(q, k, causal, query_offset, max_bytes)
        with no_autocast(q.device):
            own = self.position_terms(*upcast(q, k), causal, query_offset)
            total = sum(own[name] for name in self.POSITION_TERMS)
        return total.expand(q.shape[0], self.heads, q.shape[2], k.shape[2]).to(q.dtype)

    def forward(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        *,
        mask: torch.Tensor | None = None,
        causal: bool = False,
        query_offset: int = 0,
        max_bytes: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention with this scheme: (z (b,h,n_q,d_v), alpha (b,h,n_q,n_k)).

        ``mask`` is bool (True = attend) broadcastable to (b, h, n_q, n_k); ``causal`` lets the
        query at position p see keys j <= p. A query with no allowed key gets zero weights.
        """
        self._check_call(q, k, causal, query_offset, max_bytes, v)
        dtype = q.dtype
        with no_autocast(q.device):  # half inputs: logits, softmax and sums in float32
            q, k, v = upcast(q, k, v)
            logits = sum(self._terms(q, k, causal, query_offset).values())
            shape = tuple(logits.shape)
            allowed = combine_masks(mask, causal, shape, query_offset, max_bytes=max_bytes)
            weights = masked_softmax(logits, allowed, max_bytes=max_bytes)
            z = weights @ v  # (b,h,i,j),(b,h,j,d_v) -> (b,h,i,d_v)
            extra = self.relative_values(weights, causal, query_offset)
        return (z if extra is None else z + extra).to(dtype), weights.to(dtype)

    def extra_repr(self) -> str:
        return f"heads={self.heads}, head_dim={self.head_dim}"


def init_normal(shape: tuple[int, ...], std: float, generator: torch.Generator | None):
    """A parameter drawn from N(0, std^2), from ``generator`` (the global RNG if None)."""
    check_generator("generator", generator)
    return nn.Parameter(torch.randn(*shape, generator=generator) * std)
