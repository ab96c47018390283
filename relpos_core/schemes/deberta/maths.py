"""DeBERTa's disentangled attention: He et al. 2021, "DeBERTa: Decoding-enhanced BERT with
Disentangled Attention", Sec. 3.1, with DeBERTa-v2's log buckets (as transformers'
``DebertaV2`` ``DisentangledSelfAttention``).

    A_ij = ( q_i · k_j                       content-to-content
           + q_i · P^K[c(i, j)]               content-to-position (c2p)
           + k_j · P^Q[c(i, j)] ) / sqrt(3 d)  position-to-content (p2c)

P is a table of 2·span relative embeddings (span = position_buckets, or max_relative_positions
without buckets), projected per head: P^K = P W^K_r, P^Q = P W^Q_r, either projections of their
own or the content key and query projections themselves (``share_att_key``, DeBERTa-v3). The
row read for the pair (i, j) is

    c(i, j) = clamp(bucket(i - j) + span, 0, 2·span - 1)

with the relative position taken as i - j (query minus key, the reverse of Shaw's j - i), and
bucket the identity for |i - j| <= span / 2 and logarithmic beyond, up to max_relative_positions
(``log_bucket``). p2c reads the same row: the paper's delta(j, i) for the key j seen from the
query i is bucket(j - i) negated, and the bucket is odd, so -bucket(j - i) = bucket(i - j). Both
position terms, and the content term with them, are divided by sqrt(3 d) where Shaw's and the
others' logits use sqrt(d): three terms of the same spread, summed. DeBERTa shares one P across
its layers; here each layer's scheme holds its own, a reparametrisation of the same attention.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from relpos_core.guard import check_fits
from relpos_core.lookup import relative_distances_unguarded
from relpos_core.schemes.base import PositionScheme, init_normal
from relpos_core.validation import check_int, check_tensor

MAX_SPAN = 4096  # rows of the relative table per direction


def check_buckets(position_buckets: object, max_relative_positions: object) -> tuple[int, int]:
    """(position_buckets, max_relative_positions) checked: buckets 0 (none: plain clipping at
    max_relative_positions) or an even number >= 4 whose half the log range must exceed."""
    buckets = check_int("position_buckets", position_buckets, 0, 2 * MAX_SPAN)
    top = check_int("max_relative_positions", max_relative_positions, 1, 2**20)
    if buckets and (buckets < 4 or buckets % 2):
        raise ValueError(f"position_buckets must be 0 or an even number >= 4, got {buckets}")
    if buckets and top <= buckets // 2 + 1:
        raise ValueError(
            f"max_relative_positions must exceed position_buckets / 2 + 1 = {buckets // 2 + 1} "
            f"(the log buckets run from there to it), got {top}"
        )
    if not buckets and top > MAX_SPAN:
        raise ValueError(
            f"max_relative_positions without buckets is the table's span, at most {MAX_SPAN}, "
            f"got {top}"
        )
    return buckets, top


def log_bucket(
    relative_position: torch.Tensor, position_buckets: int, max_relative_positions: int
) -> torch.Tensor:
    """DeBERTa-v2's bucket of each relative position (int64 in, int64 out), as transformers'
    ``make_log_bucket_position``: itself where |r| <= mid = buckets / 2, else
    sign(r) · (mid + ceil(log(|r| / mid) / log((max - 1) / mid) · (mid - 1))), in float32.

    >>> log_bucket(torch.tensor([-300, -20, -16, -1, 0, 1, 16, 17, 20, 127, 128, 300]), 32, 128)
    tensor([-38, -18, -16,  -1,   0,   1,  16,  17,  18,  31,  32,  38])
    """
    check_tensor("relative_position", relative_position, tuple(range(9)), floating=False)
    buckets, top = check_buckets(position_buckets, max_relative_positions)
    if not buckets:
        raise ValueError("log_bucket needs position_buckets > 0 (0 means no buckets)")
    mid = buckets // 2
    size = relative_position.abs()
    # transformers puts mid - 1 under the logarithm where |r| < mid (the identity is kept there)
    under = torch.where(size < mid, mid - 1, size).to(torch.float32)
    base = torch.log(torch.tensor((top - 1) / mid, dtype=torch.float32))
    log = torch.ceil(torch.log(under / mid) / base * (mid - 1)) + mid
    bucket = torch.where(
        size <= mid, relative_position.to(torch.float32), log * relative_position.sign()
    )
    return bucket.to(torch.int64)


def relative_rows(
    n_q: int, n_k: int, query_offset: int, position_buckets: int, max_relative_positions: int,
    device: torch.device | None = None,
) -> torch.Tensor:  # fmt: skip
    """c(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1): the row of P each pair reads,
    (n_q, n_k) int64, for queries at positions query_offset + row.

    >>> relative_rows(3, 3, 0, 0, 2).tolist()  # no buckets, span 2: i - j + 2
    [[2, 1, 0], [3, 2, 1], [3, 3, 2]]
    """
    buckets, top = check_buckets(position_buckets, max_relative_positions)
    span = buckets or top
    back = -relative_distances_unguarded(n_q, n_k, query_offset, device)  # i - j
    if buckets:
        back = log_bucket(back, buckets, top)
    return (back + span).clamp(0, 2 * span - 1)


def projection(d_model: int, generator: torch.Generator | None) -> nn.Linear:
    """A (d_model -> d_model) projection with bias, drawn from ``generator`` (the layer's own
    initialisation would draw from the global RNG): the bias small, as BERT's 0.02."""
    proj = nn.Linear(d_model, d_model, device="meta")  # shapes only: both replaced below
    proj.weight = init_normal((d_model, d_model), d_model**-0.5, generator)
    proj.bias = init_normal((d_model,), 0.02, generator)
    return proj


class DeBERTa(PositionScheme):
    name = "deberta"
    TERMS = ("content", "c2p", "p2c")
    POSITION_TERMS = ("c2p", "p2c")

    def __init__(
        self,
        heads: int,
        head_dim: int,
        *,
        position_buckets: int = 32,
        max_relative_positions: int = 128,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(heads, head_dim)
        self.position_buckets, self.max_relative_positions = check_buckets(
            position_buckets, max_relative_positions
        )
        self.span = self.position_buckets or self.max_relative_positions
        d_model = self.heads * self.head_dim
        self.d_model = d_model
        check_fits(  # float32, each drawn and then scaled: two copies at once
            f"deberta parameters with heads = {heads}, head_dim = {head_dim} and span "
            f"{self.span} (P: a ({2 * self.span}, {d_model}) table, two ({d_model}, {d_model}) "
            "projections)",
            8 * (2 * self.span * d_model + 2 * d_model * (d_model + 1)),
            None,
        )
        # P unit variance, W_r at 1/sqrt(d_model): each projected row has unit variance per
        # channel, so c2p and p2c spread as much as the content term for unit-variance q, k
        self.rel_embeddings = init_normal((2 * self.span, d_model), 1.0, generator)
        self.pos_key_proj, self.pos_query_proj = (projection(d_model, generator) for _ in "kq")

    @property
    def scale(self) -> float:
        return 1.0 / math.sqrt(3 * self.head_dim)  # three terms: content, c2p and p2c

    def share_projections(self, key_proj: nn.Linear, query_proj: nn.Linear) -> None:
        """DeBERTa-v3's ``share_att_key``: P^K and P^Q through the content projections."""
        self.pos_key_proj, self.pos_query_proj = key_proj, query_proj

    def position_vectors(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(P^K, P^Q), each (h, 2 span, d): the relative embeddings projected per head."""
        p = self.rel_embeddings.to(dtype)

        def per_head(proj: nn.Linear) -> torch.Tensor:
            out = p @ proj.weight.to(dtype).T + proj.bias.to(dtype)  # (2span, h·d)
            return out.reshape(-1, self.heads, self.head_dim).transpose(0, 1)

        return per_head(self.pos_key_proj), per_head(self.pos_query_proj)

    def rows(self, n_q: int, n_k: int, query_offset: int, device=None) -> torch.Tensor:
        """c(i, j) for this scheme's buckets: (n_q, n_k) int64."""
        return relative_rows(
            n_q, n_k, query_offset, self.position_buckets, self.max_relative_positions, device
        )

    def position_terms(self, q, k, causal, query_offset):
        n_q, n_k = q.shape[2], k.shape[2]
        rows = self.rows(n_q, n_k, query_offset, q.device)  # (i, j)
        pos_key, pos_query = self.position_vectors(q.dtype)  # (h, 2span, d) each
        c2p = q @ pos_key.transpose(-2, -1)  # (b,h,i,d),(h,d,2span) -> (b,h,i,2span)
        p2c = k @ pos_query.transpose(-2, -1)  # (b,h,j,d),(h,d,2span) -> (b,h,j,2span)
        by_query = rows.expand(*q.shape[:2], -1, -1)  # (b,h,i,j)
        by_key = rows.T.expand(*k.shape[:2], -1, -1)  # (b,h,j,i)
        return {
            "c2p": c2p.gather(-1, by_query) * self.scale,  # q_i · P^K[c(i, j)]
            "p2c": p2c.gather(-1, by_key).transpose(-2, -1) * self.scale,  # k_j · P^Q[c(i, j)]
        }

    def position_bytes(self, n_q, n_k, batch=1, itemsize=4):
        table = 2 * self.span
        projected = 2 * (table * self.d_model)  # P^K, P^Q
        by_row = batch * self.heads * (n_q + n_k) * table  # q P^K^T and k P^Q^T
        cells = batch * self.heads * n_q * n_k
        return (projected + by_row + cells) * itemsize + 3 * n_q * n_k * 8  # rows, expanded

    def extra_repr(self) -> str:
        return (
            super().extra_repr()
            + f", position_buckets={self.position_buckets}, "
            + f"max_relative_positions={self.max_relative_positions}"
        )
