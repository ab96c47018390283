"""Argument validation shared by the public functions (not the implementation checker, which is
relpos_core.check: this module checks what a caller passes, that one checks code).

Errors a user can cause raise ``ValueError`` (or ``TypeError`` for a wrong type) naming the
argument, the allowed range and the value received. ``assert`` is kept for internal invariants.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import torch

from relpos_core.ints import check_int  # torch-free (relpos_core.clip uses it too)

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def broadcast_shape(*shapes: Sequence[int]) -> tuple[int, ...] | None:
    """The shape the given shapes broadcast to (numpy's rule, as torch's), None if they do not.

    numpy's, not ``torch.broadcast_shapes``: torch's first call imports its symbolic-shape
    machinery and sympy (about 30 MB), which nothing else here needs.

    >>> broadcast_shape((2, 1, 4), (3, 1)), broadcast_shape((2,), (3,))
    ((2, 3, 4), None)
    """
    try:
        return tuple(np.broadcast_shapes(*(tuple(shape) for shape in shapes)))
    except ValueError:
        return None


def check_max_bytes(value: object) -> int | None:
    """A memory limit: None (the device's memory) or an int >= 0; a bool is refused."""
    if value is None:
        return None
    return check_int("max_bytes (memory limit in bytes, or None)", value, 0)


def check_bool(name: str, value: object) -> bool:
    """``value`` is a real bool (not 0/1, not a string); a numpy bool is returned as a bool."""
    if isinstance(value, np.bool_):
        return bool(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return value


def check_real(
    name: str,
    value: object,
    low: float,
    high: float,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float if it is a real number (numpy scalars too, bools not) in the
    interval from ``low`` to ``high``, each end closed unless ``low_open`` / ``high_open``.

    >>> check_real("dropout", 0.25, 0.0, 1.0, high_open=True)
    0.25
    >>> check_real("dropout", 1.0, 0.0, 1.0, high_open=True)
    Traceback (most recent call last):
    ...
    ValueError: dropout must be in [0, 1), got 1.0
    """
    interval = f"{'(' if low_open else '['}{_short(low)}, {_short(high)}{')' if high_open else ']'}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number (int or float) in {interval}, "
            f"got {type(value).__name__} {value!r}"
        )
    number = float(value)
    above = number > low if low_open else number >= low
    below = number < high if high_open else number <= high
    if not (above and below):  # NaN fails both
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return number


def _short(number: float) -> str:
    """0, 64, 0.5, 1e9: a bound as a person writes it."""
    if float(number).is_integer() and abs(number) < 1e6:
        return str(int(number))
    return f"{number:g}".replace("e+0", "e").replace("e+", "e")


def check_generator(name: str, value: object) -> torch.Generator | None:
    """``value`` is None or a ``torch.Generator``."""
    if value is not None and not isinstance(value, torch.Generator):
        raise TypeError(
            f"{name} must be a torch.Generator or None, got {type(value).__name__} {value!r}"
        )
    return value


def check_tensor(
    name: str,
    value: object,
    ndim: int | tuple[int, ...],
    *,
    floating: bool = True,
    finite: bool = True,
) -> torch.Tensor:
    """Check that ``value`` is a tensor of the given rank (a float dtype, finite by default)."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    ranks = (ndim,) if isinstance(ndim, int) else ndim
    if value.dim() not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"{name} must have {want} dimensions, got shape {tuple(value.shape)}")
    if floating and value.dtype not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float16, bfloat16, float32 or float64, got {value.dtype}")
    # a compiled graph cannot branch on values: there NaN and inf propagate, as in torch's own ops
    if finite and floating and not torch.compiler.is_compiling() and not all_finite(value):
        raise ValueError(f"{name} must be finite (no NaN or inf), got a tensor containing them")
    return value


def distinct_view(t: torch.Tensor) -> torch.Tensor:
    """``t`` without its repeats: size 1 on every axis of stride 0 (an ``expand``), so that
    ``distinct_view(t).expand(t.shape)`` is ``t``. A pass over it touches each stored value once.

    >>> distinct_view(torch.zeros(3).expand(1000, 3)).shape
    torch.Size([1, 3])
    """
    return t[tuple(slice(0, 1) if step == 0 else slice(None) for step in t.stride())]


def all_finite(t: torch.Tensor) -> bool:
    """No NaN or inf in ``t``: its extremes are finite (NaN propagates to both). A reduction,
    so nothing of the size of ``t`` is allocated (``isfinite`` would make a bool copy)."""
    t = distinct_view(t)
    if t.numel() == 0:
        return True
    low, high = torch.aminmax(t)
    return bool(low.isfinite() & high.isfinite())


def check_same_dtype(**tensors: torch.Tensor) -> None:
    """All tensors share one dtype (no silent mixing of precisions)."""
    dtypes = {name: t.dtype for name, t in tensors.items()}
    if len(set(dtypes.values())) > 1:
        listed = ", ".join(f"{name}={dt}" for name, dt in dtypes.items())
        raise TypeError(f"tensors must share one dtype, got {listed}")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value  # type: ignore[return-value]


def check_mask(mask: object) -> torch.Tensor:
    """A mask is bool (True = attend) or numeric holding only 0 and 1; returns it as bool.

    NaN, 0.5 or 2 would be ambiguous, so they are refused rather than read as "attend".

    >>> check_mask(torch.tensor([1.0, 0.0])).tolist()
    [True, False]
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a torch.Tensor or None, got {type(mask).__name__}")
    if mask.dtype == torch.bool:
        return mask
    if mask.is_complex():
        raise TypeError(f"mask must be bool or hold 0/1 values, got {mask.dtype}")
    values = distinct_view(mask)  # an expanded mask is converted once per stored value
    if not bool(((values == 0) | (values == 1)).all()):
        bad = values[(values != 0) & (values != 1)].flatten()[0].item()
        raise ValueError(
            "mask must be bool (True = attend) or hold only 0 and 1, "
            f"got a {mask.dtype} mask containing {bad}"
        )
    return (values != 0).expand(mask.shape)


#: Bytes ``check_mask`` allocates per stored value of a numeric mask at its peak: the two
#: comparisons with 0 and 1 and their union (then the bool mask it returns, one byte).
MASK_CHECK_BYTES = 3


def check_device(name: str, value: object) -> torch.device | None:
    """None, a ``torch.device`` or a name torch reads as one ("cpu", "cuda:0"), as a device.

    >>> check_device("device", "cpu")
    device(type='cpu')
    """
    if value is None or isinstance(value, torch.device):
        return value
    allowed = "None, a torch.device or a device name such as 'cpu' or 'cuda:0'"
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {allowed}, got {type(value).__name__} {value!r}")
    try:
        return torch.device(value)
    except RuntimeError:
        raise ValueError(f"{name} must be {allowed}, got {value!r}") from None


def check_shape(name: str, value: object, ndim: int) -> tuple[int, ...]:
    """A shape of ``ndim`` sizes, each an int >= 0 (a tuple, list or ``torch.Size``).

    >>> check_shape("shape", torch.Size([1, 2]), 2)
    (1, 2)
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(
            f"{name} must be a sequence of {ndim} ints, got {type(value).__name__} {value!r}"
        )
    if len(value) != ndim:
        raise ValueError(f"{name} must hold {ndim} sizes, got {len(value)}: {tuple(value)!r}")
    return tuple(check_int(f"{name}[{i}]", size, 0) for i, size in enumerate(value))
