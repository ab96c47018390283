"""RoPE's context extension against each paper's rule, written out plainly pair by pair, and
against transformers' ROPE_INIT_FUNCTIONS (the code models run), on several configurations.

s factor · L0 original_max_position_embeddings (the training length) · n current length ·
d head dim · t rotary pair, theta_t = base^(-2t/d), wavelength lambda_t = 2 pi / theta_t.
"""

import math

import pytest
import torch

from relpos_core.schemes import Rotary, rope_frequencies
from relpos_core.schemes.catalogue import ROPE_SCALINGS
from relpos_core.schemes.rope import rotary_angles
from tests.schemes.plain import qkv

CONFIGS = [  # (head_dim, base, L0, s): the family's RoPE, Llama-like, a small odd one
    (32, 10000.0, 64, 4.0),
    (128, 500000.0, 8192, 8.0),
    (16, 10000.0, 100, 2.5),
    (32, 10000.0, 64, 16.0),
]


def plain_theta(d: int, base: float) -> list[float]:
    return [base ** (-2 * t / d) for t in range(d // 2)]


def position_interpolation(d, base, s):
    """Chen et al. 2023, eq. (4): f'(x, m) = f(x, m L / L'): position m turns as m / s did."""
    return [theta / s for theta in plain_theta(d, base)]


def ntk_aware(d, base, alpha):
    """The NTK-aware rule: a new base b' = b alpha^(d/(d-2)), so the slowest pair is divided by
    alpha exactly and the fastest is left alone."""
    return plain_theta(d, base * alpha ** (d / (d - 2)))


def yarn(d, base, L0, s, beta_fast=32.0, beta_slow=1.0):
    """Peng et al. 2023, eqs. (17)-(20): r_t = L0 / lambda_t turns in the training length;
    gamma = 1 (keep theta_t) where the pair turns more than beta_fast times, 0 (theta_t / s)
    where fewer than beta_slow; the published code ramps linearly in t between the pairs
    where r = beta_fast and r = beta_slow, rounded outward."""

    def pair_at(turns):  # solve L0 / (2 pi base^(2t/d)) = turns for t
        return d * math.log(L0 / (2 * math.pi * turns)) / (2 * math.log(base))

    low = max(math.floor(pair_at(beta_fast)), 0)
    high = min(math.ceil(pair_at(beta_slow)), d - 1)
    out = []
    for t, theta in enumerate(plain_theta(d, base)):
        if t <= low:
            gamma = 1.0
        elif t >= high:
            gamma = 0.0
        else:
            gamma = 1 - (t - low) / (high - low)
        out.append((1 - gamma) * theta / s + gamma * theta)
    return out, 0.1 * math.log(s) + 1  # eq. (22): sqrt(1/t) = 0.1 ln s + 1


def llama3(d, base, L0, s, low=1.0, high=4.0):
    """Llama 3.1's published rule: short wavelengths keep theta, long ones divide it by s,
    between them a smooth blend."""
    out = []
    for theta in plain_theta(d, base):
        wavelength = 2 * math.pi / theta
        if wavelength < L0 / high:
            out.append(theta)
        elif wavelength > L0 / low:
            out.append(theta / s)
        else:
            g = (L0 / wavelength - low) / (high - low)
            out.append((1 - g) * theta / s + g * theta)
    return out


def close(got: torch.Tensor, want: list[float], rtol: float = 1e-12) -> None:
    torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float64), rtol=rtol, atol=0)


@pytest.mark.parametrize(("d", "base", "L0", "s"), CONFIGS)
def test_each_type_is_its_papers_rule(d, base, L0, s):
    theta, factor = rope_frequencies(d, base, {"rope_type": "linear", "factor": s})
    close(theta, position_interpolation(d, base, s))
    assert factor == 1.0
    for n in (L0 // 2, L0, 3 * L0, int(s * L0)):
        alpha = max(s * max(n, L0) / L0 - (s - 1), 1.0)
        config = {"rope_type": "dynamic", "factor": s, "original_max_position_embeddings": L0}
        close(rope_frequencies(d, base, config, seq_len=n)[0], ntk_aware(d, base, alpha))
    config = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": L0}
    theta, factor = rope_frequencies(d, base, config)
    want, want_factor = yarn(d, base, L0, s)
    close(theta, want)
    assert factor == pytest.approx(want_factor, rel=1e-15)
    config = {"rope_type": "llama3", "factor": s, "original_max_position_embeddings": L0}
    close(rope_frequencies(d, base, config)[0], llama3(d, base, L0, s))


def test_the_rules_in_words():
    """Interpolation squeezes positions; NTK-aware slows the last pair by alpha exactly and
    keeps the first; dynamic at factor 1 is the NTK-aware rule with alpha = n / L0; YaRN and
    Llama 3 keep the fast pairs and divide the slow ones by s."""
    d, base, L0, s = 32, 10000.0, 64, 4.0
    theta, _ = rope_frequencies(d, base, {"rope_type": "linear", "factor": s})
    at = torch.arange(0, 400, 4)
    torch.testing.assert_close(rotary_angles(at, d, base, theta), rotary_angles(at // 4, d, base))
    plain, _ = rope_frequencies(d, base)
    config = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": L0}
    dynamic, _ = rope_frequencies(d, base, config, seq_len=4 * L0)
    assert dynamic[0] == plain[0] and float(dynamic[-1]) == pytest.approx(float(plain[-1]) / 4)
    for kind in ("yarn", "llama3"):
        scaled = rope_frequencies(d, base, {**config, "rope_type": kind, "factor": s})[0]
        turns = L0 * plain / (2 * math.pi)  # r_t: turns of pair t within L0
        assert torch.equal(scaled[turns > 32], plain[turns > 32])
        torch.testing.assert_close(scaled[turns < 1], plain[turns < 1] / s)


def transformers_reference(kind, d, base, L0, s, seq_len=None, **extra):
    pytest.importorskip("transformers")
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    scaling = {"rope_type": kind, "factor": s, "original_max_position_embeddings": L0, **extra}
    # transformers' dynamic scaling reads max_position_embeddings as the training length; its
    # YaRN reads the longer one from it
    longest = L0 if kind == "dynamic" else int(math.ceil(s * L0))
    config = LlamaConfig(
        hidden_size=4 * d,
        num_attention_heads=4,
        head_dim=d,
        rope_theta=base,
        max_position_embeddings=longest,
        rope_scaling=scaling,
    )
    inv_freq, factor = ROPE_INIT_FUNCTIONS[kind](config, "cpu", seq_len)
    return scaling, inv_freq.double(), factor


CASES = [
    ("linear", {}),
    ("dynamic", {}),
    ("yarn", {}),
    ("yarn", {"beta_fast": 16.0, "beta_slow": 2.0}),
    ("yarn", {"attention_factor": 1.3}),
    ("llama3", {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
    ("llama3", {"low_freq_factor": 2.0, "high_freq_factor": 8.0}),
]


@pytest.mark.parametrize(("kind", "extra"), CASES)
@pytest.mark.parametrize(("d", "base", "L0", "s"), CONFIGS)
def test_equals_transformers(kind, extra, d, base, L0, s):
    for seq_len in (None, 5 * L0) if kind == "dynamic" else (None,):
        scaling, want, want_factor = transformers_reference(kind, d, base, L0, s, seq_len, **extra)
        theta, factor = rope_frequencies(d, base, scaling, seq_len=seq_len)
        torch.testing.assert_close(theta, want, rtol=1e-6, atol=0)  # transformers in float32
        assert factor == pytest.approx(want_factor, rel=1e-12)


def test_every_declared_type_is_computed():
    for declared in ROPE_SCALINGS:
        config = {"rope_type": declared.rope_type, "factor": 2}
        config["original_max_position_embeddings"] = 64
        theta, factor = rope_frequencies(32, 10000.0, config, seq_len=256)
        assert theta.shape == (16,) and factor >= 1


@pytest.mark.parametrize(
    ("scaling", "message"),
    [
        ({"rope_type": "ntk"}, "rope_type must be one of linear, dynamic, yarn, llama3, got 'ntk'"),
        ({"factor": 2}, "rope_type must be one of linear, dynamic, yarn, llama3, got None"),
        (
            {"rope_type": "linear", "factor": 0.5},
            "rope_scaling['factor'] must be in [1, 1e6], got 0.5",
        ),
        (
            {"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 0},
            "rope_scaling['original_max_position_embeddings'] must be in [1, 2147483648], got 0",
        ),
        (
            {"rope_type": "linear", "factor": 2, "beta_fast": 3},
            "rope_scaling of type linear reads only factor, original_max_position_embeddings; "
            "got beta_fast",
        ),
        (
            {"rope_type": "dynamic", "factor": 2},
            "rope_scaling of type dynamic needs factor, original_max_position_embeddings; "
            "missing original_max_position_embeddings",
        ),
        (
            {
                "rope_type": "yarn",
                "factor": 2,
                "original_max_position_embeddings": 64,
                "beta_fast": 1,
                "beta_slow": 2,
            },
            "rope_scaling['beta_slow'] must be below beta_fast (1.0), got 2.0",
        ),
        (
            {
                "rope_type": "llama3",
                "factor": 2,
                "original_max_position_embeddings": 64,
                "low_freq_factor": -1,
            },
            "rope_scaling['low_freq_factor'] must be in (0, 1e6], got -1",
        ),
        ("linear", "rope_scaling must be a dict with a rope_type, got 'linear'"),
    ],
)
def test_bad_scaling_is_refused_in_words(scaling, message):
    with pytest.raises(ValueError) as caught:
        rope_frequencies(32, 10000.0, scaling)
    assert str(caught.value).startswith(message)


def test_a_scaled_rotary_rotates_by_the_scaled_frequencies():
    """The scheme's logit is q^T R'_(j-i) k / sqrt(d) with theta' from rope_frequencies and q,
    k each multiplied by the attention factor (YaRN's temperature on the logits)."""
    config = {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 8}
    scheme = Rotary(3, 8, 100.0, scaling=config)
    q, k, _ = qkv(5, 5, d=8)
    theta, factor = rope_frequencies(8, 100.0, config, seq_len=5)
    want = torch.zeros(2, 3, 5, 5, dtype=torch.float64)
    for i in range(5):
        for j in range(5):
            angle = (j - i) * theta
            c, s_ = angle.cos(), angle.sin()
            qi, kj = q[:, :, i], k[:, :, j]
            # q^T R_(j-i) k per pair: (q0 k0 + q1 k1) cos + (q1 k0 - q0 k1) sin
            pair = (qi[..., 0::2] * kj[..., 0::2] + qi[..., 1::2] * kj[..., 1::2]) * c + (
                qi[..., 1::2] * kj[..., 0::2] - qi[..., 0::2] * kj[..., 1::2]
            ) * s_
            want[:, :, i, j] = factor**2 * pair.sum(-1) / math.sqrt(8)
    torch.testing.assert_close(scheme.logits(q, k), want, rtol=1e-12, atol=1e-12)
    assert "scaling=" in repr(scheme)


def test_the_decay_bound_is_su_et_als_sum():
    """(1 / (d/2)) sum_j |sum_(t<j) e^(i r theta_t)|, by a plain loop over complex numbers."""
    from relpos_core.schemes import rope_decay_bound

    theta, _ = rope_frequencies(32, 10000.0)
    distances = torch.tensor([0, 1, 7, 64, 300])
    want = []
    for r in distances.tolist():
        partial, total = 0j, 0.0
        for t in range(16):
            partial += complex(math.cos(r * theta[t]), math.sin(r * theta[t]))
            total += abs(partial)
        want.append(total / 16)
    close(rope_decay_bound(distances, theta), want, rtol=1e-10)
    assert rope_decay_bound(torch.tensor([0]), theta).item() == pytest.approx(8.5)
