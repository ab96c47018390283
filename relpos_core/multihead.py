"""Multi-head attention step by step, and why the dot product is scaled by 1/sqrt(d_k).

Vaswani et al. 2017, section 3.2.2: project x to Q, K, V (d_model wide), split the channels
into h heads of c = d_model / h, attend in every head (relpos_core.basics), set the heads'
outputs side by side and project with W^O:

    MultiHead(x_q, x_kv) = Concat(head_1, ..., head_h) W^O,
    head_h = softmax(Q_h K_h^T / sqrt(c)) V_h

Section 3.2.1's footnote gives the reason for the scale: for q, k with independent unit-variance
entries, q · k has variance d_k; ``score_spread`` and ``softmax_saturation`` measure it.
"""

# b batch · h heads · i query pos · j key pos · d d_model · c head width (d_model / heads)

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from relpos_core.basics import dot_product_scores, scaled_dot_product_attention
from relpos_core.guard import check_fits
from relpos_core.trace import Trace
from relpos_core.validation import check_generator, check_int, check_tensor


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(b, n, d_model) -> (b, heads, n, d_model / heads): head h gets channels
    [h * c, (h + 1) * c) with c = d_model / heads.

    >>> split_heads(torch.arange(4.0).view(1, 1, 4), 2).tolist()
    [[[[0.0, 1.0]], [[2.0, 3.0]]]]
    """
    x = check_tensor("x (b, n, d_model)", x, 3, finite=False)
    b, n, d_model = x.shape
    heads = _check_heads(d_model, heads)
    return x.view(b, n, heads, d_model // heads).transpose(1, 2)  # (b,n,h,c) -> (b,h,n,c)


def _check_heads(d_model: int, heads: int) -> int:
    heads = check_int("heads", heads, 1)
    if d_model % heads:
        divisors = [h for h in range(1, min(d_model, 4096) + 1) if d_model % h == 0]
        shown = ", ".join(map(str, divisors[:8])) + (", ..." if len(divisors) > 8 else "")
        raise ValueError(
            f"heads must divide d_model = {d_model} (allowed: {shown}), got heads = {heads}"
        )
    return heads


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(b, heads, n, c) -> (b, n, heads * c): the heads' outputs side by side, the inverse of
    ``split_heads``.

    >>> merge_heads(torch.tensor([[[[0.0, 1.0]], [[2.0, 3.0]]]])).tolist()
    [[[0.0, 1.0, 2.0, 3.0]]]
    """
    x = check_tensor("x (b, heads, n, c)", x, 4, finite=False)
    b, h, n, c = x.shape
    return x.transpose(1, 2).reshape(b, n, h * c)  # (b,h,n,c) -> (b,n,h,c) -> (b,n,h*c)


@dataclass(frozen=True)
class MultiHeadTrace(Trace):
    """Every step of one multi-head attention (Vaswani et al. 2017, section 3.2.2)."""

    q: torch.Tensor  # (b,i,d)  x_q W^Q
    k: torch.Tensor  # (b,j,d)  x_kv W^K
    v: torch.Tensor  # (b,j,d)  x_kv W^V
    q_heads: torch.Tensor  # (b,h,i,c)
    k_heads: torch.Tensor  # (b,h,j,c)
    v_heads: torch.Tensor  # (b,h,j,c)
    logits: torch.Tensor  # (b,h,i,j)  q_i · k_j / sqrt(c), before any mask
    weights: torch.Tensor  # (b,h,i,j)  0 where the mask hides j
    head_outputs: torch.Tensor  # (b,h,i,c)  head_h = sum_j alpha_ij v_j
    concat: torch.Tensor  # (b,i,d)  Concat(head_1, ..., head_h)
    output: torch.Tensor  # (b,i,d)  Concat(...) W^O

    FORMULAS = {
        "q": "Q = x_q W^Q + b^Q",
        "k": "K = x_kv W^K + b^K",
        "v": "V = x_kv W^V + b^V",
        "q_heads": "Q split into heads",
        "k_heads": "K split into heads",
        "v_heads": "V split into heads",
        "logits": "q_i · k_j / sqrt(d)",
        "weights": "alpha_ij = softmax_j(logits), 0 where the mask hides j",
        "head_outputs": "head = sum_j alpha_ij v_j",
        "concat": "Concat(head_1, ..., head_h)",
        "output": "Concat(head_1, ..., head_h) W^O + b^O",
    }


class MultiHeadAttention(nn.Module):
    """Multi-head attention with four d_model x d_model projections ``w_q``, ``w_k``, ``w_v``,
    ``w_o`` (``nn.Linear``, with biases), initialized as ``nn.Linear`` is (uniform in
    +-1/sqrt(d_model)) from ``generator``, or from ``torch.Generator().manual_seed(seed)``;
    the global RNG is never touched.

    ``forward(x_q, x_kv=None, mask=None)``: x_q (b, n_q, d_model), x_kv (b, n_k, d_model)
    (default x_q: self-attention), mask 1 / True = hidden, broadcastable to (b, heads, n_q,
    n_k) -> a ``MultiHeadTrace`` whose ``output`` is (b, n_q, d_model).

    >>> mha = MultiHeadAttention(d_model=4, heads=2, seed=0)
    >>> [step.shape for step in mha(torch.zeros(1, 3, 4)).steps()][3:7]
    [(1, 2, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2), (1, 2, 3, 3)]
    """

    def __init__(
        self,
        d_model: int,
        heads: int,
        seed: int = 0,
        *,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        d_model = check_int("d_model", d_model, 1)
        heads = _check_heads(d_model, heads)
        seed = check_int("seed", seed, 0)
        generator = check_generator("generator", generator)
        if generator is None:
            generator = torch.Generator().manual_seed(seed)
        check_fits(
            f"MultiHeadAttention with d_model = {d_model} (four ({d_model}, {d_model}) "
            "float32 weights)",
            16 * d_model * (d_model + 1),
            None,
        )
        self.d_model, self.heads = d_model, heads
        bound = 1 / math.sqrt(d_model)
        for name in ("w_q", "w_k", "w_v", "w_o"):
            # built on the meta device (no storage, no draw from the global RNG), then given
            # parameters drawn from ours, in this order. Not nn.utils.skip_init: its to_empty
            # imports torch's symbolic shapes and sympy (about 30 MB) on first use.
            layer = nn.Linear(d_model, d_model, device="meta")
            weight = torch.empty(d_model, d_model).uniform_(-bound, bound, generator=generator)
            bias = torch.empty(d_model).uniform_(-bound, bound, generator=generator)
            layer.weight, layer.bias = nn.Parameter(weight), nn.Parameter(bias)
            setattr(self, name, layer)

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> MultiHeadTrace:
        x_q = check_tensor("x_q (b, n_q, d_model)", x_q, 3)
        x_kv = x_q if x_kv is None else check_tensor("x_kv (b, n_k, d_model)", x_kv, 3)
        for name, x in (("x_q", x_q), ("x_kv", x_kv)):
            if x.shape[-1] != self.d_model or x.shape[1] < 1:
                raise ValueError(
                    f"{name} must be (b, n >= 1, d_model = {self.d_model}), got {tuple(x.shape)}"
                )
        if x_kv.shape[0] != x_q.shape[0]:
            raise ValueError(
                f"x_q and x_kv must share the batch size, got {x_q.shape[0]}, {x_kv.shape[0]}"
            )
        (b, n_q, d), n_k = x_q.shape, x_kv.shape[1]
        check_fits(  # ten (b, n, d)-sized steps, logits and weights, the masked copy
            f"MultiHeadAttention with b = {b}, n_q = {n_q}, n_k = {n_k}, heads = {self.heads}",
            x_q.element_size() * (10 * b * max(n_q, n_k) * d + 3 * b * self.heads * n_q * n_k),
            None,
            x_q.device,
        )
        q, k, v = self.w_q(x_q), self.w_k(x_kv), self.w_v(x_kv)  # (b,i,d),(b,j,d),(b,j,d)
        q_heads, k_heads, v_heads = (split_heads(t, self.heads) for t in (q, k, v))  # (b,h,n,c)
        attention = scaled_dot_product_attention(q_heads, k_heads, v_heads, mask)
        concat = merge_heads(attention.output)  # (b,h,i,c) -> (b,i,d)
        return MultiHeadTrace(
            q=q,
            k=k,
            v=v,
            q_heads=q_heads,
            k_heads=k_heads,
            v_heads=v_heads,
            logits=attention.logits,
            weights=attention.weights,
            head_outputs=attention.output,
            concat=concat,
            output=self.w_o(concat),
        )


@dataclass(frozen=True)
class ScoreSpread:
    """Per d_k: the standard deviation of q · k and of q · k / sqrt(d_k) over random pairs."""

    d_k: tuple[int, ...]
    unscaled_std: torch.Tensor  # (len(d_k),) float64, about sqrt(d_k)
    scaled_std: torch.Tensor  # (len(d_k),) float64, about 1


def score_spread(d_ks: Sequence[int], samples: int, generator: torch.Generator) -> ScoreSpread:
    """Why Vaswani et al. divide by sqrt(d_k): for q, k with independent N(0, 1) entries,
    q · k is a sum of d_k terms of variance 1, so its spread grows as sqrt(d_k); the scaled
    score keeps unit spread. ``samples`` pairs (q, k) per d_k, drawn from ``generator``.

    >>> spread = score_spread([1, 16, 64], 20000, torch.Generator().manual_seed(0))
    >>> [round(x) for x in spread.unscaled_std.tolist()], spread.scaled_std.round().tolist()
    ([1, 4, 8], [1.0, 1.0, 1.0])
    """
    d_ks, samples = _check_sizes(d_ks, samples, generator)
    check_fits(
        f"score_spread with samples = {samples}, d_k up to {max(d_ks)}",
        16 * samples * max(d_ks),
        None,
    )
    unscaled = []
    for d_k in d_ks:
        q, k = torch.randn(2, samples, d_k, generator=generator, dtype=torch.float64)
        unscaled.append((q * k).sum(-1).std())  # (samples,d_k) -> (samples,) -> ()
    unscaled_std = torch.stack(unscaled)
    scaled_std = unscaled_std / torch.tensor(d_ks, dtype=torch.float64).sqrt()
    return ScoreSpread(d_ks, unscaled_std, scaled_std)


@dataclass(frozen=True)
class Saturation:
    """Per d_k: the mean largest softmax weight of a row of n random logits."""

    d_k: tuple[int, ...]
    n: int  # keys per row; an even spread would give each 1 / n
    unscaled_max_weight: torch.Tensor  # (len(d_k),) float64, softmax_j(q · k_j)
    scaled_max_weight: torch.Tensor  # (len(d_k),) float64, softmax_j(q · k_j / sqrt(d_k))


def softmax_saturation(
    d_ks: Sequence[int], n: int, samples: int, generator: torch.Generator
) -> Saturation:
    """What the unscaled spread does to the softmax: for ``samples`` rows of one query and n
    keys, all entries N(0, 1), the mean over rows of max_j alpha_ij. Unscaled, the logits
    spread as sqrt(d_k), the largest pulls ahead and its weight creeps towards 1 (a nearly
    one-hot row, whose gradients vanish); scaled, the logits keep unit variance at every d_k
    and the max weight stays put (from d_k of about 16 on, where q · k / sqrt(d_k) is close
    to N(0, 1); at d_k = 1 it is a product of two normals, with heavier tails).

    >>> sat = softmax_saturation([1, 256], 8, 4000, torch.Generator().manual_seed(0))
    >>> sat.unscaled_max_weight.round(decimals=1), sat.scaled_max_weight.round(decimals=1)
    (tensor([0.3000, 0.9000], dtype=torch.float64), tensor([0.3000, 0.4000], dtype=torch.float64))
    """
    d_ks, samples = _check_sizes(d_ks, samples, generator)
    n = check_int("n (keys per row)", n, 1)
    check_fits(
        f"softmax_saturation with samples = {samples}, n = {n}, d_k up to {max(d_ks)}",
        8 * samples * (n + 1) * max(d_ks) + 32 * samples * n,
        None,
    )
    unscaled, scaled = [], []
    for d_k in d_ks:
        q = torch.randn(samples, 1, d_k, generator=generator, dtype=torch.float64)
        k = torch.randn(samples, n, d_k, generator=generator, dtype=torch.float64)
        logits = dot_product_scores(q, k, scaled=False)[:, 0]  # (s,1,d),(s,n,d) -> (s,n)
        unscaled.append(torch.softmax(logits, -1).amax(-1).mean())
        scaled.append(torch.softmax(logits / math.sqrt(d_k), -1).amax(-1).mean())
    return Saturation(d_ks, n, torch.stack(unscaled), torch.stack(scaled))


def _check_sizes(
    d_ks: Sequence[int], samples: int, generator: torch.Generator
) -> tuple[tuple[int, ...], int]:
    if isinstance(d_ks, (str, bytes)) or not isinstance(d_ks, Sequence) or not d_ks:
        raise ValueError(f"d_ks must be a non-empty sequence of ints >= 1, got {d_ks!r}")
    d_ks = tuple(check_int("d_k (key width)", d_k, 1) for d_k in d_ks)
    samples = check_int("samples", samples, 2)
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"generator must be a torch.Generator, got {type(generator).__name__} {generator!r}"
        )
    return d_ks, samples
