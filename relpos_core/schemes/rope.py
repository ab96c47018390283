"""RoPE: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
eqs. (14)-(16) and (34).

Channels pair up as (2m, 2m+1); pair m of a vector at position p turns by the angle p·theta_m,
theta_m = base^(-2m/d). Rotations compose, so

    e_ij = (R_i q_i) · (R_j k_j) / sqrt(d) = q_i^T R_(j-i) k_j / sqrt(d)

The logit depends on position through j - i alone, but it also depends on q_i and k_j, so the
whole logit is not a function of j - i. What rotation adds, e_ij - q_i · k_j / sqrt(d), is the
position term here. (Many libraries pair channel m with m + d/2 instead: the same maths on a
permutation of the channels.)
"""

from __future__ import annotations

import torch

from relpos_core.checks import check_int, check_real, check_tensor
from relpos_core.guard import check_fits
from relpos_core.schemes.base import PositionScheme


def rotary_angles(positions: torch.Tensor, head_dim: int, base: float) -> torch.Tensor:
    """p · theta_m for each position p and pair m: float64 (n, d/2).

    >>> rotary_angles(torch.tensor([0, 1, 2]), 2, 10000.0).flatten().tolist()
    [0.0, 1.0, 2.0]
    """
    check_tensor("positions", positions, 1, floating=False, finite=False)
    head_dim = check_int("head_dim (d)", head_dim, 1)
    base = check_real("base (rotary base)", base, 1, 1e9, low_open=True)
    n, pairs = positions.shape[0], (head_dim + 1) // 2
    check_fits(  # float64 positions and the result
        f"rotary_angles of {n} positions with head_dim = {head_dim} (a ({n}, {pairs}) table)",
        8 * (n * pairs + n + pairs),
        None,
        positions.device,
    )
    pair = torch.arange(0, head_dim, 2, dtype=torch.float64, device=positions.device)
    theta = base ** (-pair / head_dim)  # theta_m = base^(-2m/d)
    return positions.to(torch.float64)[:, None] * theta[None, :]


def rotate(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """R_p x for every row: x (..., n, d), angles (n, d/2) -> (..., n, d), pairs (2m, 2m+1).

    >>> turned = rotate(torch.tensor([[1.0, 0.0]]), torch.tensor([[torch.pi / 2]]))
    >>> torch.allclose(turned, torch.tensor([[0.0, 1.0]]), atol=1e-6)
    True
    """
    check_tensor("x", x, tuple(range(2, 9)), floating=False, finite=False)
    check_tensor("angles", angles, 2, floating=False, finite=False)
    n, d = x.shape[-2:]
    if d % 2 or angles.shape != (n, d // 2):
        raise ValueError(
            f"x (..., n, d) needs an even d and angles of shape (n, d/2) = ({n}, {d // 2}), "
            f"got x {tuple(x.shape)} and angles {tuple(angles.shape)}"
        )
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin  # [cos -sin; sin cos] on each pair
    out[..., 1::2] = even * sin + odd * cos
    return out


class Rotary(PositionScheme):
    name = "rope"
    TERMS = ("content", "rotation")
    POSITION_TERMS = ("rotation",)

    def __init__(self, heads: int, head_dim: int, base: float = 10000.0) -> None:
        super().__init__(heads, head_dim)
        if self.head_dim % 2:
            raise ValueError(f"head_dim (d) must be even for rotary pairs, got {head_dim}")
        self.base = check_real("base (rotary base)", base, 1, 1e9, low_open=True)

    def rotate_queries_keys(
        self, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(R_i q_i, R_j k_j) with queries at positions query_offset.. and keys at 0.."""
        n_q, n_k = q.shape[-2], k.shape[-2]
        at_q = torch.arange(query_offset, query_offset + n_q, device=q.device)
        at_k = torch.arange(n_k, device=k.device)
        d = self.head_dim
        return rotate(q, rotary_angles(at_q, d, self.base)), rotate(
            k, rotary_angles(at_k, d, self.base)
        )

    def position_terms(self, q, k, causal, query_offset):
        q_rot, k_rot = self.rotate_queries_keys(q, k, query_offset)
        rotated = q_rot @ k_rot.transpose(-2, -1)  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
        return {"rotation": (rotated - q @ k.transpose(-2, -1)) * self.scale}

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        rotated = batch * self.heads * (n_q + n_k) * self.head_dim * itemsize
        return rotated + 2 * batch * self.heads * n_q * n_k * itemsize  # rotated and plain q·k

    def extra_repr(self) -> str:
        return super().extra_repr() + f", base={self.base}"
