"""The clip index clip(j - i, k) + k in numpy, for a caller that draws it without torch.

Shaw et al. 2018 (eq. 3 and its lookup): pair (i, j) reads row clip(j - i, -k, k) + k of the
(2k + 1)-row tables w^K and w^V. ``relpos_core.lookup.relative_index`` computes the same in
torch for the kernels; this one serves a figure's small table (the explorer's landing page draws
it before torch has loaded) and the tests hold it to the same definition.
"""

from __future__ import annotations

import numpy as np

from relpos_core.ints import check_index_args

MAX_CELLS = 2**20  # an 8 MB int64 table: a figure's, not a model's (relative_index serves those)


def clip_index(n_q: int, n_k: int, max_relative_position: int, query_offset: int = 0) -> np.ndarray:
    """Row of the relative table each pair reads, (n_q, n_k) int64: query i = query_offset + a
    (a < n_q) and key j (j < n_k) read clip(j - i, -k, k) + k, in [0, 2k].

    >>> clip_index(4, 4, 2)
    array([[2, 3, 4, 4],
           [1, 2, 3, 4],
           [0, 1, 2, 3],
           [0, 0, 1, 2]])
    """
    n_q, n_k, k, offset = check_index_args(n_q, n_k, max_relative_position, query_offset)
    if n_q * n_k > MAX_CELLS:
        raise ValueError(
            f"n_q * n_k must be <= {MAX_CELLS} (a figure's table; relative_index builds larger "
            f"ones), got {n_q} * {n_k} = {n_q * n_k}"
        )
    distance = (
        np.arange(n_k, dtype=np.int64)[None, :] - (offset + np.arange(n_q, dtype=np.int64))[:, None]
    )
    return np.clip(distance, -k, k) + k
