"""Deterministic example inputs for one explorer view, and the provenance of skew cells.

A token's content vector depends only on the seed and the token string, so identical tokens get
identical content: their queries, keys and values match, and only the relative term can tell
two copies of a word apart. Projections and relative tables come from their own seeded
generators; the global RNG is never touched.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.params import ViewParams
from relpos_core.lookup import relative_table
from relpos_core.masks import trailing_padding_mask
from relpos_core.skew import SkewTrace, trace_skew_masked, trace_skew_unmasked


def derived_seed(seed: int, label: str) -> int:
    """A 63-bit seed for the stream named ``label`` under the view's ``seed``.

    >>> derived_seed(0, "w_q") == derived_seed(0, "w_q") != derived_seed(1, "w_q")
    True
    """
    digest = hashlib.sha256(f"{seed}\x00{label}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def view_array(t: torch.Tensor) -> np.ndarray:
    """A tensor as the float32 numpy array a view caches and draws (detached, on the CPU)."""
    return t.detach().cpu().numpy().astype(np.float32)


@dataclass(frozen=True)
class ExampleInputs:
    """Inputs of relative attention for one view (b = 1), float32.

    x (n, d_model) content embeddings · q, k, v (1, h, n, d) · table_k, table_v (2k+1, d)
    · mask bool (1, 1, 1, n) or None (True = key may be attended) · causal.
    """

    x: torch.Tensor
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    table_k: torch.Tensor
    table_v: torch.Tensor
    mask: torch.Tensor | None
    causal: bool

    @property
    def scaled_q(self) -> torch.Tensor:
        """q / sqrt(d) (1, h, n, d): the queries as every logit term uses them. Scaling the
        queries first (as tensor2tensor does) makes each product with them a term of the logit
        exactly as it enters the softmax; every page takes its 1/sqrt(d) from here."""
        return self.q / math.sqrt(self.q.shape[-1])


def content_vector(token: str, d_model: int, seed: int) -> torch.Tensor:
    """Embedding of one token: a function of (seed, token) only, standard normal, float32."""
    gen = torch.Generator().manual_seed(derived_seed(seed, "token:" + token))
    return torch.randn(d_model, generator=gen)


def example_inputs(params: ViewParams, scheme: str = "shaw") -> ExampleInputs:
    """q, k, v and the relative tables w^K, w^V for ``params``.

    With trained weights: the trained model's own, at the view's layer
    (``explorer.weights.trained``): Shaw's at the view's k, or with ``scheme`` the family's model
    of that position scheme (its tables are then empty). Otherwise seeded random draws (the
    same for every ``scheme``); without typed text, position i has the token "#i", so every
    position differs.
    """
    if params.trained:
        from explorer.weights.trained import trained_for  # the app side: cached, streamlit

        t = trained_for(params, scheme)
        q, k, v = torch.from_numpy(t.qkv)[:, None]  # (1, h, n, d) each
        table_k, table_v = torch.from_numpy(t.tables)
        return ExampleInputs(torch.from_numpy(t.x), q, k, v, table_k, table_v, None, True)
    n, d_model, heads, d = params.length, params.d_model, params.heads, params.head_dim
    names = params.tokens or tuple(f"#{i}" for i in range(n))
    x = torch.stack([content_vector(name, d_model, params.seed) for name in names])  # (n,d_model)

    def projection(label: str) -> torch.Tensor:
        gen = torch.Generator().manual_seed(derived_seed(params.seed, label))
        w = torch.randn(d_model, d_model, generator=gen) / math.sqrt(d_model)
        return (x @ w).reshape(n, heads, d).transpose(0, 1)[None]  # (n,h*d) -> (1,h,n,d)

    table_k, table_v = random_tables(params.seed, params.k, d)
    mask = trailing_padding_mask(n, params.n_pad) if "padding" in params.mask else None
    return ExampleInputs(
        x=x,
        q=projection("w_q"),
        k=projection("w_k"),
        v=projection("w_v"),
        table_k=table_k,
        table_v=table_v,
        mask=mask,
        causal=params.causal,
    )


def random_tables(seed: int, k: int, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Shaw's seeded random tables (w^K, w^V), (2k+1, d) each, under the view's ``seed``: the
    one draw every page with Shaw's relative terms reads, the scheme pages included."""
    table_seed = derived_seed(seed, "tables") % (2**31)
    return relative_table(k, d, seed=table_seed), relative_table(k, d, seed=table_seed + 1)


def skew_provenance(length: int, masked: bool) -> SkewTrace:
    """Run a skew on cell codes instead of logits, to show where every output cell came from.

    The input cell [i, c] holds ``1 + i * W + c`` (W its width), so each later cell holds 0 (a
    pad) or the code of the input cell it copies: decode with :func:`decode_provenance`.
    float64 keeps the codes exact for every length the explorer allows.
    """
    width = length if masked else 2 * length - 1
    rows = torch.arange(length, dtype=torch.float64)[:, None]
    cols = torch.arange(width, dtype=torch.float64)[None, :]
    codes = 1 + rows * width + cols  # (L, W)
    return trace_skew_masked(codes) if masked else trace_skew_unmasked(codes)


def decode_provenance(
    codes: torch.Tensor, length: int, masked: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(source query row, relative distance r, is_pad) of each cell of a provenance tensor.

    Column c of the skew input holds distance r = c - (L - 1). Pad cells get row -1, r = 0.
    """
    width = length if masked else 2 * length - 1
    code = codes.round().to(torch.int64)
    is_pad = code == 0
    flat = (code - 1).clamp(min=0)
    row = torch.where(is_pad, -1, flat // width)
    distance = torch.where(is_pad, 0, flat % width - (length - 1))
    return row, distance, is_pad
