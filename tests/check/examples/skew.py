"""The Music Transformer's masked skew as people write it, right and wrong (the checker's tests).

Each takes rel (b, h, n, n), column r the distance key - query = r - (n - 1), and returns
(b, h, n, n) with out[..., i, j] = rel[..., i, n - 1 - i + j] for j <= i. None calls relpos_core.
"""

import numpy as np
import torch
import torch.nn.functional as F


def paper_skew(rel):
    # right: Huang et al. 2018, 3.4.1: pad a column on the left, reshape to (n + 1, n), drop row 0
    b, h, n, _ = rel.shape
    return F.pad(rel, (1, 0)).reshape(b, h, n + 1, n)[:, :, 1:]


def gather_skew(rel):
    # right: key j is at distance j - i, column j - i + n - 1; the future masked to 0
    n = rel.shape[-1]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    index = (j - i + n - 1).clamp(max=n - 1).expand_as(rel)
    return rel.gather(-1, index).masked_fill(j > i, 0.0)


def loop_skew(rel):
    # right: row i's distances -i..0 are its last i + 1 columns, written at keys 0..i
    rel = rel.numpy()
    n = rel.shape[-1]
    out = np.zeros_like(rel)
    for i in range(n):
        out[..., i, : i + 1] = rel[..., i, n - 1 - i :]
    return out


def pad_right(rel):
    # wrong: the zero column padded on the right, so every row lands one column off
    b, h, n, _ = rel.shape
    return F.pad(rel, (0, 1)).reshape(b, h, n + 1, n)[:, :, 1:]


def drop_last_row(rel):
    # wrong: keeps the first n rows of the (n + 1, n) view, dropping the last instead of the first
    b, h, n, _ = rel.shape
    return F.pad(rel, (1, 0)).reshape(b, h, n + 1, n)[:, :, :-1]


def loop_other_way(rel):
    # wrong: row i's first i + 1 columns written at the end of the row: shifted right, not left
    rel = rel.numpy()
    n = rel.shape[-1]
    out = np.zeros_like(rel)
    for i in range(n):
        out[..., i, n - 1 - i :] = rel[..., i, : i + 1]
    return out


def gather_query_minus_key(rel):
    # wrong: the distance taken as query - key, column i - j: the table read in reverse order
    n = rel.shape[-1]
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    index = (i - j).clamp(min=0).expand_as(rel)
    return rel.gather(-1, index).masked_fill(j > i, 0.0)
