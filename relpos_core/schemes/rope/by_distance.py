"""RoPE's frequencies read as distances: each rotary pair's wavelength in positions."""

from __future__ import annotations

import math

import torch

from relpos_core.validation import check_tensor


def rope_wavelengths(inverse_frequencies: torch.Tensor) -> torch.Tensor:
    """Each rotary pair's wavelength 2π / θ_t in positions: the distance of one full turn.

    >>> rope_wavelengths(torch.tensor([1.0, 0.5])).tolist()  # doctest: +ELLIPSIS
    [6.28..., 12.56...]
    """
    check_tensor("inverse_frequencies", inverse_frequencies, 1)
    return 2 * math.pi / inverse_frequencies.to(torch.float64)
