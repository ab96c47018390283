"""Transformer-XL's relative attention: Dai et al. 2019, "Transformer-XL: Attentive Language
Models Beyond a Fixed-Length Context", Sec. 3.3.

    A_ij = q_i · k_j          (a) content
         + q_i · W_R R_(i-j)  (b) content-dependent position
         + u · k_j            (c) global content bias
         + v · W_R R_(i-j)    (d) global position bias        all divided by sqrt(d)

R is a sinusoid of the distance i - j (sin of every frequency, then cos, as the reference
code), W_R projects it to each head, u and v are learned per head. Transformer-XL attends only
backwards (i - j >= 0); the sinusoid is defined for every distance, so two-sided attention here
uses R of negative distances too. The reference code fills (b) and (d) with
``relpos_core.schemes.xl.shift``; the terms here gather each cell's distance directly, exact
everywhere (the tests check the shift against them inside its valid region).
"""

from __future__ import annotations

import torch

from relpos_core.guard import check_fits
from relpos_core.lookup import relative_distances_unguarded
from relpos_core.schemes.base import PositionScheme, init_normal
from relpos_core.validation import check_int, check_tensor


def xl_sinusoid(distances: torch.Tensor, d_model: int) -> torch.Tensor:
    """R for each distance: (m,) -> (m, d_model), [sin(r·f_0..), cos(r·f_0..)], f_m = 10000^(-2m/d).

    >>> xl_sinusoid(torch.tensor([0, 1]), 2)
    tensor([[0.0000, 1.0000],
            [0.8415, 0.5403]], dtype=torch.float64)
    """
    check_tensor("distances", distances, 1, floating=False, finite=False)
    d_model = check_int("d_model", d_model, 1)
    m = distances.shape[0]
    check_fits(  # float64: the angles, their sin and cos, and the result
        f"xl_sinusoid of {m} distances with d_model = {d_model} (a ({m}, {d_model}) table)",
        8 * m * (2 * d_model + 2),
        None,
        distances.device,
    )
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = distances.to(torch.float64)[:, None] * freq[None, :].to(distances.device)
    return torch.cat([angle.sin(), angle.cos()], dim=-1)


class TransformerXL(PositionScheme):
    name = "xl"
    TERMS = ("content", "position", "global_content", "global_position")
    POSITION_TERMS = ("position", "global_position")

    def __init__(
        self, heads: int, head_dim: int, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__(heads, head_dim)
        heads, head_dim = self.heads, self.head_dim
        d_model = heads * head_dim
        if d_model % 2:
            raise ValueError(f"heads * head_dim (d_model) must be even for R, got {d_model}")
        self.d_model = d_model
        values = d_model * heads * head_dim + 2 * heads * head_dim  # W_R, u and v
        check_fits(  # float32, each drawn and then scaled: two copies at once
            f"xl parameters with heads = {heads}, head_dim = {head_dim} (W_R: a "
            f"({d_model}, {d_model}) matrix)",
            8 * values,
            None,
        )
        # W_R R then has variance 1/2 per channel and u, v unit variance: each term spreads as
        # much as the content term does for unit-variance q, k (the reference code uses 0.02).
        self.w_r = init_normal((d_model, heads * head_dim), d_model**-0.5, generator)
        self.u = init_normal((heads, head_dim), 1.0, generator)
        self.v = init_normal((heads, head_dim), 1.0, generator)

    def relative_keys(self, distances: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """W_R R_(i-j) per head for each distance i - j: (m,) -> (h, m, d)."""
        r = xl_sinusoid(distances, self.d_model).to(dtype) @ self.w_r.to(dtype)  # (m, h·d)
        return r.reshape(-1, self.heads, self.head_dim).transpose(0, 1)

    def relative_layout(self, q: torch.Tensor, n_k: int) -> torch.Tensor:
        """(b) + (d) in the reference code's relative layout, the input of ``rel_shift``:
        (b,h,Q,d) -> (b,h,Q,K), column c holds (q_i + v) · W_R R_(K-1-c) / sqrt(d)."""
        distances = torch.arange(n_k - 1, -1, -1, device=q.device)  # column c -> K - 1 - c
        keys = self.relative_keys(distances, q.dtype)  # (h, K, d)
        v = self.v.to(q.dtype)[None, :, None, :]  # (1,h,1,d)
        return ((q + v) @ keys.transpose(-2, -1)) * self.scale  # (b,h,Q,d),(h,d,K) -> (b,h,Q,K)

    def position_terms(self, q, k, causal, query_offset):
        n_q, n_k = q.shape[2], k.shape[2]
        back = -relative_distances_unguarded(n_q, n_k, query_offset, q.device)  # i - j, (n_q, n_k)
        low = query_offset - (n_k - 1)  # the smallest i - j
        keys = self.relative_keys(torch.arange(low, query_offset + n_q, device=q.device), q.dtype)
        index = (back - low).expand(*q.shape[:2], -1, -1)
        u, v = self.u.to(q.dtype), self.v.to(q.dtype)
        by_distance = q @ keys.transpose(-2, -1)  # (b,h,i,d),(h,d,m) -> (b,h,i,m)
        global_by_distance = (v[:, None, :] @ keys.transpose(-2, -1))[None]  # (1,h,1,m)
        return {
            "position": by_distance.gather(-1, index) * self.scale,
            "global_content": (u[None, :, None, :] @ k.transpose(-2, -1)) * self.scale,
            "global_position": global_by_distance.expand(*q.shape[:2], n_q, -1).gather(-1, index)
            * self.scale,
        }

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        m = n_q + n_k - 1
        return (
            m * (self.d_model + 2 * self.heads * self.head_dim) + 2 * batch * self.heads * n_q * m
        ) * itemsize + n_q * n_k * 8 * 2

    def extra_repr(self) -> str:
        return super().extra_repr() + f", d_model={self.d_model}"
