"""Rotary position embedding as people write it: right in both layouts, and wrong in each known
way. None calls the library. Each takes (x, positions, base), x (b, h, n, d), positions (n,),
and returns x rotated."""

import numpy as np
import torch


def _rotate_half(x, *, backwards=False):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((x2, -x1) if backwards else (-x2, x1), dim=-1)


def _rotate_every_two(x):
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def _inv_freq(d, base, *, every_dimension=False):
    exponents = torch.arange(d // 2) / d if every_dimension else torch.arange(0, d, 2) / d
    return 1.0 / base ** exponents.double()


def _llama(x, positions, base, *, every_dimension=False, backwards=False, interleaved=False):
    inv_freq = _inv_freq(x.shape[-1], base, every_dimension=every_dimension)
    freqs = positions.double()[:, None] * inv_freq[None, :]  # (n, d/2)
    if interleaved:
        emb = freqs.repeat_interleave(2, dim=-1)
    else:
        emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + _rotate_half(x, backwards=backwards) * emb.sin()


def _gptj(x, positions, base, *, every_dimension=False, concatenated=False):
    inv_freq = _inv_freq(x.shape[-1], base, every_dimension=every_dimension)
    freqs = positions.double()[:, None] * inv_freq[None, :]
    if concatenated:
        emb = torch.cat((freqs, freqs), dim=-1)
    else:
        emb = freqs.repeat_interleave(2, dim=-1)
    return x * emb.cos() + _rotate_every_two(x) * emb.sin()


def right_llama(x, positions, base):
    """HF Llama's apply_rotary_pos_emb: cos/sin over cat(freqs, freqs), rotate_half."""
    return _llama(x, positions, base)


def right_gptj(x, positions, base):
    """GPT-J's apply_rotary_pos_emb: each frequency twice in a row, rotate_every_two."""
    return _gptj(x, positions, base)


def right_complex(x, positions, base):
    """RoFormer/Meta Llama style: neighbouring channels as one complex number, times e^(i p θ)."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)
    turn = np.exp(1j * np.outer(positions.numpy(), theta))  # (n, d/2)
    z = x.numpy().reshape(*x.shape[:-1], d // 2, 2)
    rotated = (z[..., 0] + 1j * z[..., 1]) * turn
    return np.stack((rotated.real, rotated.imag), axis=-1).reshape(x.shape)


def wrong_every_dimension(x, positions, base):
    # arange(d/2) / d in the exponent: base^(-m/d), the frequencies fall half as fast
    return _llama(x, positions, base, every_dimension=True)


def wrong_every_dimension_gptj(x, positions, base):
    # GPT-J's pairs with arange(d/2) / d in the exponent: base^(-m/d)
    return _gptj(x, positions, base, every_dimension=True)


def wrong_direction(x, positions, base):
    # rotate_half as cat(x2, -x1): every pair turns by -p θ
    return _llama(x, positions, base, backwards=True)


def wrong_positions_from_zero(x, positions, base):
    # position_ids never passed: arange(n) stands in for the positions
    return _llama(x, torch.arange(x.shape[-2]), base)


def wrong_mixed_layouts(x, positions, base):
    # GPT-J's repeat_interleave frequencies with Llama's rotate_half pairs
    return _llama(x, positions, base, interleaved=True)


def wrong_mixed_layouts_gptj(x, positions, base):
    # Llama's cat(freqs, freqs) with GPT-J's rotate_every_two pairs
    return _gptj(x, positions, base, concatenated=True)
