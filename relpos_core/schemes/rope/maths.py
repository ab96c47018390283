"""RoPE: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
eqs. (14)-(16) and (34).

Channels pair up as (2m, 2m+1); pair m of a vector at position p turns by the angle p·theta_m,
theta_m = base^(-2m/d). Rotations compose, so

    e_ij = (R_i q_i) · (R_j k_j) / sqrt(d) = q_i^T R_(j-i) k_j / sqrt(d)

The logit depends on position through j - i alone, but it also depends on q_i and k_j, so the
whole logit is not a function of j - i. What rotation adds, e_ij - q_i · k_j / sqrt(d), is the
position term here. (Many libraries pair channel m with m + d/2 instead: the same maths on a
permutation of the channels.)

Context extension changes the frequencies: ``rope_frequencies`` takes the ``rope_scaling`` dict
a model's config carries (``rope_type`` linear, dynamic, yarn or llama3; the catalogue's
``ROPE_SCALINGS`` declares each type's keys) and returns theta_t for every pair t and the factor
q and k are multiplied by (YaRN's; 1 for the others). s is ``factor``, L_0
``original_max_position_embeddings`` (the training length), n the current length ``seq_len``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch

from relpos_core.guard import check_fits
from relpos_core.schemes.base import PositionScheme
from relpos_core.schemes.rope.scalings import rope_scaling
from relpos_core.validation import check_int, check_real, check_tensor

# The range of each key of a rope_scaling dict: (low, high, low_open).
_RANGES = {
    "factor": (1.0, 1e6, False),
    "original_max_position_embeddings": (1, 2**31, False),
    "beta_fast": (0.0, 1e6, True),
    "beta_slow": (0.0, 1e6, True),
    "attention_factor": (0.0, 1e3, True),
    "low_freq_factor": (0.0, 1e6, True),
    "high_freq_factor": (0.0, 1e6, True),
}


def check_scaling(scaling: object) -> dict[str, object]:
    """``scaling`` with its type's defaults filled in; a ValueError naming the parameter, its
    allowed range and the value for a key the type does not read or a value out of range.

    >>> check_scaling({"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 64})
    {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 64, \
'beta_fast': 32.0, 'beta_slow': 1.0}
    """
    if not isinstance(scaling, Mapping):
        raise ValueError(f"rope_scaling must be a dict with a rope_type, got {scaling!r}")
    declared = rope_scaling(scaling.get("rope_type"))
    unknown = set(scaling) - {"rope_type", *declared.keys}
    if unknown:
        raise ValueError(
            f"rope_scaling of type {declared.rope_type} reads only {', '.join(declared.keys)}; "
            f"got {', '.join(sorted(map(str, unknown)))}"
        )
    missing = [key for key in declared.required if key not in scaling]
    if missing:
        raise ValueError(
            f"rope_scaling of type {declared.rope_type} needs {', '.join(declared.required)}; "
            f"missing {', '.join(missing)}"
        )
    out: dict[str, object] = {"rope_type": declared.rope_type}
    for key in declared.keys:
        if key not in scaling:
            continue
        low, high, low_open = _RANGES[key]
        name = f"rope_scaling[{key!r}]"
        if key == "original_max_position_embeddings":
            out[key] = check_int(name, scaling[key], int(low), int(high))
        else:
            out[key] = check_real(name, scaling[key], low, high, low_open=low_open)
    out.update({key: value for key, value in declared.defaults if key not in out})
    for small, big in (("beta_slow", "beta_fast"), ("low_freq_factor", "high_freq_factor")):
        if small in out and not out[small] < out[big]:  # type: ignore[operator]
            raise ValueError(
                f"rope_scaling[{small!r}] must be below {big} ({out[big]}), got {out[small]}"
            )
    return out


def rope_frequencies(
    head_dim: int,
    base: float,
    scaling: Mapping[str, object] | None = None,
    seq_len: int | None = None,
) -> tuple[torch.Tensor, float]:
    """(theta_t for every pair t: float64 (head_dim/2,), the factor q and k are multiplied by).

    Without ``scaling`` theta_t = base^(-2t/d) and the factor is 1. With it (s = factor, L_0 =
    original_max_position_embeddings):

    * linear (Chen et al. 2023): theta_t / s, so position p turns as p / s did.
    * dynamic: the NTK-aware base change base * alpha^(d/(d-2)), alpha = s n / L_0 - (s - 1)
      at the current length n = max(seq_len, L_0) (n = L_0 when seq_len is None).
    * yarn (Peng et al. 2023): pairs turning more than beta_fast times in L_0 keep theta_t,
      pairs turning fewer than beta_slow times take theta_t / s, a ramp linear in t between the
      two (its ends rounded outward, as the published code does); q and k are multiplied by
      attention_factor, by default 0.1 ln s + 1 (1 when s = 1).
    * llama3: wavelengths 2 pi / theta_t shorter than L_0 / high_freq_factor keep theta_t,
      longer than L_0 / low_freq_factor take theta_t / s, and between them the blend
      (1 - g) theta_t / s + g theta_t with g = (L_0 / wavelength - low) / (high - low).

    >>> rope_frequencies(4, 100.0)[0].tolist()
    [1.0, 0.1]
    >>> rope_frequencies(4, 100.0, {"rope_type": "linear", "factor": 2})[0].tolist()
    [0.5, 0.05]
    """
    head_dim = check_int("head_dim (d)", head_dim, 2)
    if head_dim % 2:
        raise ValueError(f"head_dim (d) must be even for rotary pairs, got {head_dim}")
    base = check_real("base (rotary base)", base, 1, 1e9, low_open=True)
    if seq_len is not None:
        seq_len = check_int("seq_len (current length)", seq_len, 1)
    t = torch.arange(head_dim // 2, dtype=torch.float64)
    theta = base ** (-2 * t / head_dim)
    if scaling is None:
        return theta, 1.0
    config = check_scaling(scaling)
    kind, s = config["rope_type"], float(config["factor"])  # type: ignore[arg-type]
    if kind == "linear":
        return theta / s, 1.0
    original = int(config["original_max_position_embeddings"])  # type: ignore[call-overload]
    if kind == "dynamic":
        n = original if seq_len is None else max(seq_len, original)
        alpha = s * n / original - (s - 1)
        new_base = base * alpha ** (head_dim / (head_dim - 2))
        return new_base ** (-2 * t / head_dim), 1.0
    if kind == "yarn":
        return _yarn(theta, base, head_dim, original, s, config)
    return _llama3(theta, original, s, config)


def rope_decay_bound(distances: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Su et al. 2021, section 3.4.3: the long-term decay. Writing h_t for pair t's share of
    q · k, the logit at distance r is Re sum_t h_t e^(i r theta_t), and Abel summation bounds
    its size by max_t |h_(t+1) - h_t| times sum_j |S_j|, S_j = sum_(t<j) e^(i r theta_t). The
    paper draws the mean (1 / (d/2)) sum_(j=1..d/2) |S_j| against r: this, float64 (len(r),).

    >>> rope_decay_bound(torch.tensor([0]), torch.tensor([1.0, 0.01])).tolist()
    [1.5]
    """
    check_tensor("distances", distances, 1, floating=False, finite=False)
    check_tensor("theta", theta, 1, floating=False)
    angles = distances.to(torch.float64)[:, None] * theta.to(torch.float64)[None, :]
    partial = torch.polar(torch.ones_like(angles), angles).cumsum(-1)  # S_1 .. S_(d/2)
    return partial.abs().mean(-1)


def _yarn(theta, base, head_dim, original, s, config) -> tuple[torch.Tensor, float]:
    def pair_turning(turns: float) -> float:  # the pair t that turns ``turns`` times in L_0
        return head_dim * math.log(original / (2 * math.pi * turns)) / (2 * math.log(base))

    low = max(math.floor(pair_turning(config["beta_fast"])), 0)
    high = min(math.ceil(pair_turning(config["beta_slow"])), head_dim - 1)
    if high == low:
        high += 0.001
    t = torch.arange(len(theta), dtype=torch.float64)
    gamma = 1 - ((t - low) / (high - low)).clamp(0, 1)  # 1: keep theta_t, 0: theta_t / s
    factor = config.get("attention_factor", 0.1 * math.log(s) + 1 if s > 1 else 1.0)
    return (1 - gamma) * theta / s + gamma * theta, float(factor)


def _llama3(theta, original, s, config) -> tuple[torch.Tensor, float]:
    low, high = float(config["low_freq_factor"]), float(config["high_freq_factor"])
    wavelength = 2 * math.pi / theta
    g = ((original / wavelength - low) / (high - low)).clamp(0, 1)
    blended = (1 - g) * theta / s + g * theta
    out = torch.where(wavelength > original / low, theta / s, blended)
    return torch.where(wavelength < original / high, theta, out), 1.0


def rotary_angles(
    positions: torch.Tensor, head_dim: int, base: float, theta: torch.Tensor | None = None
) -> torch.Tensor:
    """p · theta_m for each position p and pair m: float64 (n, d/2); ``theta`` (d/2,) in place
    of base^(-2m/d) when given (a scaled RoPE's, from ``rope_frequencies``).

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
    if theta is None:
        pair = torch.arange(0, head_dim, 2, dtype=torch.float64, device=positions.device)
        theta = base ** (-pair / head_dim)  # theta_m = base^(-2m/d)
    return positions.to(torch.float64)[:, None] * theta.to(positions.device)[None, :]


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

    def __init__(
        self,
        heads: int,
        head_dim: int,
        base: float = 10000.0,
        scaling: Mapping[str, object] | None = None,
        seq_len: int | None = None,
    ) -> None:
        super().__init__(heads, head_dim)
        if self.head_dim % 2:
            raise ValueError(f"head_dim (d) must be even for rotary pairs, got {head_dim}")
        self.base = check_real("base (rotary base)", base, 1, 1e9, low_open=True)
        self.scaling = None if scaling is None else check_scaling(scaling)
        # The length dynamic scaling reads; None: the keys of each call.
        self.seq_len = None if seq_len is None else check_int("seq_len", seq_len, 1)

    def rotate_queries_keys(
        self, q: torch.Tensor, k: torch.Tensor, query_offset: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(R_i q_i, R_j k_j) with queries at positions query_offset.. and keys at 0.., each
        multiplied by the scaling's attention factor."""
        n_q, n_k = q.shape[-2], k.shape[-2]
        at_q = torch.arange(query_offset, query_offset + n_q, device=q.device)
        at_k = torch.arange(n_k, device=k.device)
        d = self.head_dim
        theta, factor = rope_frequencies(d, self.base, self.scaling, self.seq_len or n_k)
        q_rot = rotate(q, rotary_angles(at_q, d, self.base, theta))
        k_rot = rotate(k, rotary_angles(at_k, d, self.base, theta))
        return (q_rot, k_rot) if factor == 1 else (q_rot * factor, k_rot * factor)

    def position_terms(self, q, k, causal, query_offset):
        q_rot, k_rot = self.rotate_queries_keys(q, k, query_offset)
        rotated = q_rot @ k_rot.transpose(-2, -1)  # (b,h,i,d),(b,h,d,j) -> (b,h,i,j)
        return {"rotation": (rotated - q @ k.transpose(-2, -1)) * self.scale}

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        rotated = batch * self.heads * (n_q + n_k) * self.head_dim * itemsize
        return rotated + 2 * batch * self.heads * n_q * n_k * itemsize  # rotated and plain q·k

    def extra_repr(self) -> str:
        scaled = "" if self.scaling is None else f", scaling={self.scaling}"
        return super().extra_repr() + f", base={self.base}" + scaled
