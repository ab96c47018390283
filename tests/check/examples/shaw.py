"""Shaw et al.'s attention as people write it: right, and wrong in each known way. None calls
the library. Each takes (q, k, v, table_k, table_v, clip, causal) and returns z (b, h, n, d)."""

import math

import numpy as np
import torch


def _index(n: int, clip: int, flip: bool = False, short: bool = False) -> torch.Tensor:
    pos = torch.arange(n)
    dist = pos[None, :] - pos[:, None]  # j - i
    if flip:
        dist = -dist
    limit = clip - 1 if short else clip
    return dist.clamp(-limit, limit) + clip


def _attend(q, k, v, a_k, a_v, causal, scale_rel=True, scale_content=True, values=True):
    d = q.shape[-1]
    content = q @ k.transpose(-1, -2)
    relative = torch.einsum("bhid,ijd->bhij", q, a_k)
    logits = content / (math.sqrt(d) if scale_content else 1) + relative / (
        math.sqrt(d) if scale_rel else 1
    )
    if causal:
        n = q.shape[2]
        logits = logits.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf"))
    w = logits.softmax(-1)
    out = w @ v
    return out + torch.einsum("bhij,ijd->bhid", w, a_v) if values else out


def right_gather(q, k, v, table_k, table_v, clip, causal):
    """The paper's eqs. 3-5 with a gathered (n, n, d) tensor."""
    idx = _index(q.shape[2], clip)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal)


def right_numpy_loops(q, k, v, table_k, table_v, clip, causal):
    """Plain loops in numpy, one query at a time."""
    q, k, v, tk, tv = (t.numpy() for t in (q, k, v, table_k, table_v))
    b, h, n, d = q.shape
    z = np.zeros_like(q)
    for i in range(n):
        keys = range(i + 1) if causal else range(n)
        rows = [min(max(j - i, -clip), clip) + clip for j in keys]
        e = np.stack(
            [(q[:, :, i] * (k[:, :, j] + tk[r])).sum(-1) for j, r in zip(keys, rows, strict=True)],
            -1,
        )
        e = e / math.sqrt(d)
        w = np.exp(e - e.max(-1, keepdims=True))
        w /= w.sum(-1, keepdims=True)
        z[:, :, i] = sum(
            w[..., t, None] * (v[:, :, j] + tv[r])
            for t, (j, r) in enumerate(zip(keys, rows, strict=True))
        )
    return z


def wrong_i_minus_j(q, k, v, table_k, table_v, clip, causal):
    # reads the tables at i - j: the rows are mirrored
    idx = _index(q.shape[2], clip, flip=True)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal)


def wrong_clipped_short(q, k, v, table_k, table_v, clip, causal):
    # clamps to clip - 1: the edge rows w_±clip are never read
    idx = _index(q.shape[2], clip, short=True)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal)


def wrong_no_value_term(q, k, v, table_k, table_v, clip, causal):
    # forgets eq. 3's a^V_ij in the output
    idx = _index(q.shape[2], clip)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal, values=False)


def wrong_scale_content_only(q, k, v, table_k, table_v, clip, causal):
    # divides q·k by sqrt(d) but adds q·a^K unscaled
    idx = _index(q.shape[2], clip)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal, scale_rel=False)


def wrong_scale_relative_only(q, k, v, table_k, table_v, clip, causal):
    # divides only the relative term by sqrt(d)
    idx = _index(q.shape[2], clip)
    return _attend(q, k, v, table_k[idx], table_v[idx], causal, scale_content=False)


def wrong_ignores_causal(q, k, v, table_k, table_v, clip, causal):
    # never masks: queries read keys ahead
    idx = _index(q.shape[2], clip)
    return _attend(q, k, v, table_k[idx], table_v[idx], False)
