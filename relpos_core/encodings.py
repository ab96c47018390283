"""Sinusoidal absolute position encoding (Vaswani et al. 2017), the baseline relative
representations replace.

PE[pos, 2m]   = sin(pos / 10000^(2m/d))
PE[pos, 2m+1] = cos(pos / 10000^(2m/d))
"""

from __future__ import annotations

import torch

from relpos_core.guard import check_fits
from relpos_core.validation import check_int, check_tensor


def sinusoidal_encoding(n: int, d: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(n, d) encoding: [position, channel]. Odd d works (the last channel is a sine).

    >>> sinusoidal_encoding(2, 3)
    tensor([[0.0000, 1.0000, 0.0000],
            [0.8415, 0.5403, 0.0022]])
    """
    n = check_int("n (sequence length)", n, 1)
    d = check_int("d (encoding size)", d, 1)
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    check_fits(  # float64 work: the table, the angles and one sin or cos of them at once
        f"sinusoidal_encoding with n = {n}, d = {d} (a ({n}, {d}) table)",
        8 * n * (2 * d + 3),
        None,
    )
    pos = torch.arange(n, dtype=torch.float64)[:, None]  # (n,1)
    pair = torch.arange(0, d, 2, dtype=torch.float64)  # 2m for m = 0..ceil(d/2)-1
    angle = pos / torch.pow(10000.0, pair / d)  # (n, ceil(d/2))
    pe = torch.empty(n, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe.to(dtype)


def encoding_similarity(pe: torch.Tensor) -> torch.Tensor:
    """PE_i · PE_j: (n, d) -> (n, n). For the sinusoid it depends only on j - i (for even d).

    sum_m sin(a_m i) sin(a_m j) + cos(a_m i) cos(a_m j) = sum_m cos(a_m (j - i)).
    """
    pe = check_tensor("pe", pe, 2, finite=False)
    n = pe.shape[0]
    check_fits(
        f"encoding_similarity of {n} positions (a ({n}, {n}) matrix)",
        n * n * pe.element_size(),
        None,
        pe.device,
    )
    check_tensor("pe", pe, 2)  # finite: a pass over pe, once it is known to fit
    return pe @ pe.T  # (i,d),(d,j) -> (i,j)
