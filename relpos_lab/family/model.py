"""One causal character language model, with position entering through one scheme.

    ids -> embedding * sqrt(d_model) [+ sinusoid if "sinusoidal"]
        -> layers x [ x = x + Attn(LN(x));  x = x + FFN(LN(x)) ]      (pre-LN, as GPT-2)
        -> LN -> Linear -> logits over the next character

Attn splits x into heads q, k, v (b, h, n, d) and attends causally; what differs between the
models is only how position enters:

    nope         nothing: plain causal attention (torch's SDPA)
    sinusoidal   Vaswani et al.'s absolute encoding added to the embeddings, then plain attention
    shaw ...     a ``ShawRelative`` scheme per layer, computed by the fused banded path
                 (``relative_attention``), which equals the scheme's own definition
    music, xl, t5, alibi, rope
                 the ``relpos_core.schemes`` object per layer, called as ``scheme(q, k, v)``

Every model of the family is built from the same seed: all weights but the schemes' own are
drawn first, in one order, so two models start identical everywhere position does not enter.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from relpos_core.attention import relative_attention
from relpos_core.encodings import sinusoidal_encoding
from relpos_core.schemes import PositionScheme, ShawRelative, make_scheme, scheme_class
from relpos_core.schemes.catalogue import scheme_names
from relpos_core.validation import check_choice, check_int

PLAIN = ("nope", "sinusoidal")  # no scheme object: plain causal attention


def positions() -> tuple[str, ...]:
    """What a model's position can be: no scheme object, or a scheme of the catalogue."""
    return (*PLAIN, *scheme_names())


SCHEME_SEED = 1000  # layer l's scheme is drawn from seed SCHEME_SEED + l
INFERENCE_ROWS = 256  # without gradients, a long text's attention runs in blocks of this many rows


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of one ``CharLM``; saved with its weights."""

    position: str  # one of positions(): PLAIN, then every scheme of the catalogue
    vocab: int
    scheme_params: dict[str, Any] = field(default_factory=dict)  # the scheme's own keywords
    keys: bool = True  # shaw only: learn w^K (False fixes it at zero)
    values: bool = True  # shaw only: learn w^V (False fixes it at zero)
    d_model: int = 128
    heads: int = 4
    layers: int = 3
    ffn: int = 256
    context: int = 64  # the training length

    def __post_init__(self) -> None:
        check_choice("position", self.position, positions())
        check_int("vocab", self.vocab, 2)
        check_int("heads", self.heads, 1)
        check_int("d_model", self.d_model, self.heads)
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        check_int("layers", self.layers, 1)
        check_int("ffn", self.ffn, 1)
        check_int("context", self.context, 1)
        known = self.position in scheme_names()
        if not (known and issubclass(scheme_class(self.position), ShawRelative)) and not (
            self.keys and self.values
        ):
            raise ValueError(f"keys/values switches are Shaw's ablation, not {self.position}'s")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SchemeAttention(nn.Module):
    """Causal multi-head self-attention whose position terms come from one scheme."""

    def __init__(self, config: ModelConfig, layer: int) -> None:
        super().__init__()
        self.heads = config.heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)
        self.scheme: PositionScheme | None = None
        if config.position not in PLAIN:
            self.scheme = make_scheme(
                config.position,
                config.heads,
                config.head_dim,
                seed=SCHEME_SEED + layer,
                **config.scheme_params,
            )
        if isinstance(self.scheme, ShawRelative):  # the ablations fix a table at zero
            for on, table in (
                (config.keys, self.scheme.table_k),
                (config.values, self.scheme.table_v),
            ):
                if not on:
                    table.requires_grad_(False)
                    with torch.no_grad():
                        table.zero_()

    def split(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(b, n, d_model) -> q, k, v, each (b, h, n, head_dim)."""
        b, n, _ = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.heads, -1)  # (b,n,3,h,d)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        return q, k, v

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """z (b, h, n, d): causal attention with this layer's position scheme."""
        if self.scheme is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if isinstance(self.scheme, ShawRelative):  # the fused banded path, same maths
            return relative_attention(
                q, k, v, self.scheme.table_k, self.scheme.table_v, causal=True
            )
        n = q.shape[2]
        if torch.is_grad_enabled() or n <= INFERENCE_ROWS:
            return self.scheme(q, k, v, causal=True)[0]
        # Inference on a long text, in blocks of query rows: each row's softmax is its own, so
        # the blocks are exact, and a block's keys end where its last row's causal mask does.
        # The schemes build (h, rows, keys) terms: a quarter of the (h, n, n) at n = 1024.
        return torch.cat(
            [
                self.scheme(
                    q[:, :, start : start + INFERENCE_ROWS],
                    k[:, :, : start + INFERENCE_ROWS],
                    v[:, :, : start + INFERENCE_ROWS],
                    causal=True,
                    query_offset=start,
                )[0]
                for start in range(0, n, INFERENCE_ROWS)
            ],
            dim=2,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.attend(*self.split(x))  # (b,h,n,d)
        b, _, n, _ = z.shape
        return self.out(z.transpose(1, 2).reshape(b, n, -1))

    def extend(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Attention of m new positions x (b, m, d_model) that follow the p positions whose keys
        and values ``cache`` holds (None: p = 0): the same rows ``forward`` gives them on the
        whole sequence, as each new query sees every key up to its own position. Returns the
        output (b, m, d_model) and the cache of all p + m positions."""
        q, k, v = self.split(x)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        m, keys = q.shape[2], k.shape[2]
        offset = keys - m  # the first new query's position
        if self.scheme is None:
            ahead = torch.arange(keys)[None, :] > torch.arange(offset, keys)[:, None]
            z = F.scaled_dot_product_attention(q, k, v, attn_mask=~ahead)
        else:
            z = self.scheme(q, k, v, causal=True, query_offset=offset)[0]
        b = z.shape[0]
        return self.out(z.transpose(1, 2).reshape(b, m, -1)), (k, v)


class Block(nn.Module):
    def __init__(self, config: ModelConfig, layer: int) -> None:
        super().__init__()
        self.norm_attention = nn.LayerNorm(config.d_model)
        self.attention = SchemeAttention(config, layer)
        self.norm_ffn = nn.LayerNorm(config.d_model)
        self.ffn = nn.Sequential(
            nn.Linear(config.d_model, config.ffn), nn.GELU(), nn.Linear(config.ffn, config.d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm_attention(x))
        return x + self.ffn(self.norm_ffn(x))

    def extend(self, x: torch.Tensor, cache):
        """``forward`` for new positions after the cached ones (see ``SchemeAttention.extend``)."""
        attended, cache = self.attention.extend(self.norm_attention(x), cache)
        x = x + attended
        return x + self.ffn(self.norm_ffn(x)), cache


class CharLM(nn.Module):
    """ids (b, n) -> next-character logits (b, n, vocab), causal, at any length n >= 1."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab, config.d_model)
        self.blocks = nn.ModuleList(Block(config, layer) for layer in range(config.layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.readout = nn.Linear(config.d_model, config.vocab)

    def embed(self, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(b, n) long -> (b, n, d_model): scaled embeddings, plus the sinusoid if absolute
        (of positions start..start+n-1)."""
        if ids.dim() != 2 or ids.dtype != torch.long:
            raise TypeError(f"ids must be a (b, n) long tensor, got {ids.dtype} {tuple(ids.shape)}")
        if ids.numel() and (ids.min() < 0 or ids.max() >= self.config.vocab):
            raise ValueError(
                f"ids must be in [0, {self.config.vocab - 1}], "
                f"got values in [{int(ids.min())}, {int(ids.max())}]"
            )
        x = self.embedding(ids) * math.sqrt(self.config.d_model)
        if self.config.position == "sinusoidal":
            n = start + ids.shape[1]
            x = x + sinusoidal_encoding(n, self.config.d_model, dtype=x.dtype)[start:]
        return x

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.readout(self.norm(x))

    @torch.no_grad()
    def extend(self, ids: torch.Tensor, cache: list | None = None) -> tuple[torch.Tensor, list]:
        """Next-character logits (b, m, vocab) of m new ids (b, m) that follow the positions
        ``cache`` holds (from an earlier call; None: none), and the cache of them all: per
        layer, its keys and values. Equal to the last m rows of ``forward`` on the whole
        sequence, at O(n) per new position instead of O(n^2): what generation reads."""
        start = 0 if cache is None else cache[0][0].shape[2]
        x = self.embed(ids, start)
        caches = []
        for layer, block in enumerate(self.blocks):
            x, kept = block.extend(x, None if cache is None else cache[layer])
            caches.append(kept)
        return self.readout(self.norm(x)), caches

    @torch.no_grad()
    def attention_inputs(
        self, ids: torch.Tensor, layers: int | None = None
    ) -> list[tuple[torch.Tensor, ...]]:
        """Per layer, the (q, k, v) its attention saw for ``ids``: each (b, h, n, head_dim);
        with ``layers``, those of the first ``layers`` layers only (the blocks above them are
        not run).

        What the explorer draws a layer's position terms from: ``scheme.terms(q, k,
        causal=True)`` on them is the trained layer's own logit."""
        x = self.embed(ids)
        blocks = self.blocks[:layers]
        out = []
        for depth, block in enumerate(blocks, start=1):
            out.append(block.attention.split(block.norm_attention(x)))
            if depth < len(blocks):  # the last block's output is not needed
                x = block(x)
        return out


def init_weights(model: CharLM, seed: int) -> CharLM:
    """Every weight outside the schemes from ``torch.Generator().manual_seed(seed)``, in a fixed
    order (GPT-2's: N(0, 0.02) matrices, residual outputs scaled by 1/sqrt(2 layers), zero
    biases); the embedding is N(0, 1/d_model), so embedding * sqrt(d_model) has unit scale.
    The schemes keep what ``make_scheme`` drew from their own seeds."""
    generator = torch.Generator().manual_seed(seed)
    residual_std = 0.02 / math.sqrt(2 * model.config.layers)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".scheme." in name or ".norm" in name or name.startswith("norm."):
                continue
            if name == "embedding.weight":
                nn.init.normal_(param, std=model.config.d_model**-0.5, generator=generator)
            elif param.dim() == 1:
                param.zero_()
            elif name.endswith("attention.out.weight") or name.endswith("ffn.2.weight"):
                nn.init.normal_(param, std=residual_std, generator=generator)
            else:
                nn.init.normal_(param, std=0.02, generator=generator)
    return model


def build_model(config: ModelConfig, seed: int = 0) -> CharLM:
    return init_weights(CharLM(config), seed)
