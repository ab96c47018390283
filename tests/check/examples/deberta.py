"""DeBERTa's two position terms as people write them: right, and wrong in each known way. None
calls the library. Each takes (q, k, pos_key, pos_query, buckets, max_position) and returns
(c2p + p2c) / sqrt(3 d), (b, h, n, n)."""

import math

import numpy as np
import torch


def _log_bucket(rel, buckets, max_position):
    # transformers' make_log_bucket_position, in float32
    sign = torch.sign(rel)
    mid = buckets // 2
    abs_pos = torch.where((rel < mid) & (rel > -mid), torch.tensor(mid - 1), rel.abs())
    log_pos = (
        torch.ceil(
            torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid)) * (mid - 1)
        )
        + mid
    )
    return torch.where(abs_pos <= mid, rel.float(), log_pos * sign).long()


def _relative(n, buckets, max_position, log_max=None, key_minus_query=False):
    ids = torch.arange(n)
    rel = ids[None, :] - ids[:, None] if key_minus_query else ids[:, None] - ids[None, :]
    if buckets > 0:
        rel = _log_bucket(rel, buckets, log_max or max_position)
    return rel


def _gather_terms(q, k, pos_key, pos_query, c2p_pos, p2c_pos, scale_factor=3):
    """transformers' way: score every row of the table, then gather the one each pair reads;
    p2c is gathered with the key first and transposed."""
    b, h, n, d = q.shape
    c2p = q @ pos_key.transpose(-1, -2)  # (b, h, i, 2 span)
    c2p = torch.gather(c2p, -1, c2p_pos.expand(b, h, n, n))
    p2c = k @ pos_query.transpose(-1, -2)  # (b, h, j, 2 span)
    p2c = torch.gather(p2c, -1, p2c_pos.expand(b, h, n, n)).transpose(-1, -2)
    return (c2p + p2c) / math.sqrt(d * scale_factor)


def right_transformers(q, k, pos_key, pos_query, buckets, max_position):
    """disentangled_attention_bias, as DeBERTa-v2 computes it."""
    span = buckets if buckets > 0 else max_position
    rel = _relative(q.shape[2], buckets, max_position)
    c2p_pos = torch.clamp(rel + span, 0, 2 * span - 1)
    p2c_pos = torch.clamp(-rel + span, 0, 2 * span - 1)  # key j first: -bucket(j - i)
    return _gather_terms(q, k, pos_key, pos_query, c2p_pos, p2c_pos)


def right_numpy_loops(q, k, pos_key, pos_query, buckets, max_position):
    """Plain loops over the pairs, the bucket in float64 math."""
    q, k, pk, pq = (t.numpy() for t in (q, k, pos_key, pos_query))
    b, h, n, d = q.shape
    span = buckets if buckets > 0 else max_position
    mid = buckets // 2

    def bucket(r):
        if buckets == 0 or abs(r) <= mid:
            return r
        steps = math.ceil(math.log(abs(r) / mid) / math.log((max_position - 1) / mid) * (mid - 1))
        return int(math.copysign(mid + steps, r))

    out = np.zeros((b, h, n, n))
    for i in range(n):
        for j in range(n):
            c = min(max(bucket(i - j) + span, 0), 2 * span - 1)
            out[:, :, i, j] = (q[:, :, i] * pk[:, c]).sum(-1) + (k[:, :, j] * pq[:, c]).sum(-1)
    return out / math.sqrt(3 * d)


def wrong_j_minus_i(q, k, pos_key, pos_query, buckets, max_position):
    # Shaw's j - i: both terms read the mirrored row
    span = buckets if buckets > 0 else max_position
    rel = _relative(q.shape[2], buckets, max_position, key_minus_query=True)  # bucket(j - i)
    pos = torch.clamp(rel + span, 0, 2 * span - 1)
    return _gather_terms(q, k, pos_key, pos_query, pos, pos.T)


def wrong_p2c_flipped(q, k, pos_key, pos_query, buckets, max_position):
    # the paper's delta(j, i) for p2c, taken as bucket(j - i) + span
    span = buckets if buckets > 0 else max_position
    rel = _relative(q.shape[2], buckets, max_position)
    c2p_pos = torch.clamp(rel + span, 0, 2 * span - 1)
    p2c_pos = torch.clamp(rel + span, 0, 2 * span - 1)  # forgot the minus sign
    return _gather_terms(q, k, pos_key, pos_query, c2p_pos, p2c_pos)


def wrong_scale_sqrt_d(q, k, pos_key, pos_query, buckets, max_position):
    # the usual attention scale, as if there were one term
    span = buckets if buckets > 0 else max_position
    pos = torch.clamp(_relative(q.shape[2], buckets, max_position) + span, 0, 2 * span - 1)
    return _gather_terms(q, k, pos_key, pos_query, pos, pos.T, scale_factor=1)


def wrong_scale_sqrt_2d(q, k, pos_key, pos_query, buckets, max_position):
    # counts the two position terms only, not the content term beside them
    span = buckets if buckets > 0 else max_position
    pos = torch.clamp(_relative(q.shape[2], buckets, max_position) + span, 0, 2 * span - 1)
    return _gather_terms(q, k, pos_key, pos_query, pos, pos.T, scale_factor=2)


def wrong_log_from_length(q, k, pos_key, pos_query, buckets, max_position):
    # the log range runs to the sequence length, not to max_position (as a TensorRT port did)
    n = q.shape[2]
    span = buckets if buckets > 0 else max_position
    pos = torch.clamp(_relative(n, buckets, max_position, log_max=n) + span, 0, 2 * span - 1)
    return _gather_terms(q, k, pos_key, pos_query, pos, pos.T)


def wrong_no_clamp(q, k, pos_key, pos_query, buckets, max_position):
    # no clamp at the table's ends: an index past either end wraps around the table
    span = buckets if buckets > 0 else max_position
    pos = (_relative(q.shape[2], buckets, max_position) + span) % (2 * span)
    return _gather_terms(q, k, pos_key, pos_query, pos, pos.T)
