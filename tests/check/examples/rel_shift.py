"""Transformer-XL's rel_shift as people write it, right and wrong (the checker's tests).

Each takes x (b, h, n, m), m >= n, column c the distance query - key = m - 1 - c for query i at
position m - n + i, and returns (b, h, n, m) with out[..., i, j] = x[..., i, j + n - 1 - i] for
j <= i + m - n. None calls relpos_core.
"""

import torch
import torch.nn.functional as F


def transformer_xl(x):
    # right: Dai et al.'s _rel_shift: zero column on the left, view as (m + 1, n), drop row 0
    zero_pad = x.new_zeros(*x.shape[:-1], 1)
    x_padded = torch.cat([zero_pad, x], dim=-1)
    x_padded = x_padded.view(*x.shape[:-2], x.size(-1) + 1, x.size(-2))
    return x_padded[..., 1:, :].view_as(x)


def gather_shift(x):
    # right: query i is at position m - n + i: key j's distance m - n + i - j, column j + n - 1 - i
    n, m = x.shape[-2:]
    i, j = torch.arange(n)[:, None], torch.arange(m)[None, :]
    index = (j + n - 1 - i).clamp(max=m - 1).expand_as(x)
    return x.gather(-1, index).masked_fill(j > i + m - n, 0.0)


def pad_right(x):
    # wrong: the zero column padded on the right, so each row is read one column off
    zero_pad = x.new_zeros(*x.shape[:-1], 1)
    x_padded = torch.cat([x, zero_pad], dim=-1)
    x_padded = x_padded.view(*x.shape[:-2], x.size(-1) + 1, x.size(-2))
    return x_padded[..., 1:, :].view_as(x)


def drop_last_row(x):
    # wrong: x_padded[..., :-1, :] keeps row 0 and drops the last (labmlai's annotated code, #185)
    zero_pad = x.new_zeros(*x.shape[:-1], 1)
    x_padded = torch.cat([zero_pad, x], dim=-1)
    x_padded = x_padded.view(*x.shape[:-2], x.size(-1) + 1, x.size(-2))
    return x_padded[..., :-1, :].view_as(x)


def roll_other_way(x):
    # wrong: row i moved right by n - 1 - i (zeros in front) instead of left
    n, m = x.shape[-2:]
    rows = [F.pad(x[..., i, : m - (n - 1 - i)], (n - 1 - i, 0)) for i in range(n)]
    return torch.stack(rows, dim=-2)


def gather_without_memory(x):
    # wrong: query i taken at position i, not m - n + i (the memory ignored), and masked causally
    n, m = x.shape[-2:]
    i, j = torch.arange(n)[:, None], torch.arange(m)[None, :]
    index = (m - 1 - (i - j)).clamp(max=m - 1).expand_as(x)
    return x.gather(-1, index).masked_fill(j > i, 0.0)


def gather_one_off(x):
    # wrong: an off-by-one index, column j - i + n - 2: every key read one distance further
    n, m = x.shape[-2:]
    i, j = torch.arange(n)[:, None], torch.arange(m)[None, :]
    column = j - i + n - 2
    index = column.clamp(0, m - 1).expand_as(x)
    return x.gather(-1, index).masked_fill((column < 0) | (j > i + m - n), 0.0)


def gather_increasing(x):
    # wrong: R taken as arange(klen), distance c at column c, not Transformer-XL's klen - 1..0
    n, m = x.shape[-2:]
    i, j = torch.arange(n)[:, None], torch.arange(m)[None, :]
    distance = m - n + i - j
    index = distance.clamp(0, m - 1).expand_as(x)
    return x.gather(-1, index).masked_fill(j > i + m - n, 0.0)
