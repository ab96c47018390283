"""A tiny encoder in two position flavours that differ in nothing else.

    tokens -> embedding * sqrt(d_model) [+ sinusoidal PE if absolute]
           -> layers x [ x = LN(x + Attn(x));  x = LN(x + FFN(x)) ]     (post-LN, as Shaw et al.)
           -> Linear -> logits over the vocabulary, at every position

``position="relative"``: Attn is ``RelativeMultiHeadAttention`` with clip distance k and learned
tables w^K, w^V; no absolute signal anywhere.

``position="absolute"``: the sinusoidal encoding (Vaswani et al.) is added to the embeddings and
Attn is the *same* layer with k = 0 and its one-row tables fixed at zero (not trained). With k = 0
every pair (i, j) would share one vector w_0, and at zero it adds nothing: the layer is exactly
plain multi-head attention. Same parameter count up to those 2 x head_dim zeros per layer, same
code path, same initialization: the only difference is where position enters.

Randomness is explicit: ``init_parameters(model, generator)`` fills every trainable tensor from
the given generator.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from relpos_core.attention import ATTENTION_METHODS, AttentionTrace
from relpos_core.encodings import sinusoidal_encoding
from relpos_core.layer import RelativeMultiHeadAttention
from relpos_core.validation import check_choice, check_int

POSITIONS = ("relative", "absolute")


@dataclass(frozen=True)
class EncoderConfig:
    """Architecture of ``Encoder``; saved with its weights."""

    position: str = "relative"
    vocab: int = 16
    d_model: int = 64
    heads: int = 4
    layers: int = 2
    ffn: int = 128  # hidden width of the position-wise feed-forward net
    k: int = 4  # clip distance of the relative tables (ignored when absolute)
    method: str = "bucket"  # how the relative terms are computed (all exact)

    def __post_init__(self) -> None:
        check_choice("position", self.position, POSITIONS)
        check_int("vocab", self.vocab, 2)
        check_int("d_model", self.d_model, 1)
        check_int("heads", self.heads, 1)
        if self.d_model % self.heads:
            raise ValueError(
                "d_model must be divisible by heads, "
                f"got d_model={self.d_model}, heads={self.heads}"
            )
        check_int("layers", self.layers, 1)
        check_int("ffn", self.ffn, 1)
        check_int("k (clip distance)", self.k, 0)
        check_choice("method", self.method, ATTENTION_METHODS)

    @property
    def clip(self) -> int:
        """The clip distance the attention layers actually use."""
        return self.k if self.position == "relative" else 0


class EncoderBlock(nn.Module):
    """x = LN(x + Attn(x)); x = LN(x + FFN(x))."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.attention = RelativeMultiHeadAttention(
            config.d_model, config.heads, config.clip, method=config.method
        )
        if config.position == "absolute":
            for table in (self.attention.relative_position_k, self.attention.relative_position_v):
                table.embeddings_table.requires_grad_(False)
        self.norm_attention = nn.LayerNorm(config.d_model)
        self.ffn = nn.Sequential(
            nn.Linear(config.d_model, config.ffn), nn.ReLU(), nn.Linear(config.ffn, config.d_model)
        )
        self.norm_ffn = nn.LayerNorm(config.d_model)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, AttentionTrace]:
        attended, trace = self.attention.forward_with_trace(x, x, x)  # (b,n,d_model)
        x = self.norm_attention(x + attended)
        return self.norm_ffn(x + self.ffn(x)), trace


class Encoder(nn.Module):
    """tokens (b, n) long -> logits (b, n, vocab). Works at any length n >= 1."""

    def __init__(self, config: EncoderConfig) -> None:
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab, config.d_model)
        self.blocks = nn.ModuleList(EncoderBlock(config) for _ in range(config.layers))
        self.readout = nn.Linear(config.d_model, config.vocab)

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """(b, n) -> (b, n, d_model): scaled embeddings, plus the sinusoid if absolute."""
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise TypeError(
                f"tokens must be a (b, n) long tensor, got {tokens.dtype} {tokens.shape}"
            )
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.config.vocab):
            raise ValueError(
                f"tokens must be ids in [0, {self.config.vocab - 1}], "
                f"got values in [{int(tokens.min())}, {int(tokens.max())}]"
            )
        x = self.embedding(tokens) * math.sqrt(self.config.d_model)
        if self.config.position == "absolute":
            x = x + sinusoidal_encoding(tokens.shape[1], self.config.d_model, dtype=x.dtype)
        return x

    def forward_with_traces(
        self, tokens: torch.Tensor
    ) -> tuple[torch.Tensor, tuple[AttentionTrace, ...]]:
        """Logits (b, n, vocab) and one ``AttentionTrace`` per layer, first layer first."""
        x = self.embed(tokens)
        traces = []
        for block in self.blocks:
            x, trace = block(x)
            traces.append(trace)
        return self.readout(x), tuple(traces)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.forward_with_traces(tokens)[0]

    def save(self, path: str | Path, **metadata: Any) -> None:
        """torch.save of {config, state_dict, metadata}; metadata holds plain values only
        (str, int, float, bool, lists and dicts of them) so ``weights_only`` loading works."""
        torch.save(
            {"config": asdict(self.config), "state_dict": self.state_dict(), "metadata": metadata},
            path,
        )

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> tuple[Encoder, dict[str, Any]]:
        """The model saved at ``path`` (in eval mode, loaded strictly) and its metadata."""
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
        model = cls(EncoderConfig(**checkpoint["config"]))
        model.load_state_dict(checkpoint["state_dict"], strict=True)
        return model.eval(), checkpoint["metadata"]


def init_parameters(model: Encoder, generator: torch.Generator) -> Encoder:
    """Refill every parameter from ``generator`` (never the global RNG), in a fixed order.

    Linear: torch's default (kaiming-uniform weights, uniform(+-1/sqrt(fan_in)) biases);
    embedding: N(0, 1/d_model) so that embedding * sqrt(d_model) has unit scale;
    relative tables: Xavier-uniform as ``RelativePosition`` does, or zero when frozen (absolute).
    LayerNorm keeps its (1, 0) start. The tables are filled last, so a relative and an absolute
    model built from the same seed start from identical weights everywhere else.
    """
    params = list(model.named_parameters())
    # tables last, so both flavours draw the same numbers for everything else
    params.sort(key=lambda item: "embeddings_table" in item[0])
    with torch.no_grad():
        for name, param in params:
            if "embeddings_table" in name:
                if param.requires_grad:
                    nn.init.xavier_uniform_(param, generator=generator)
                else:
                    param.zero_()
            elif name.startswith("embedding."):
                nn.init.normal_(param, std=model.config.d_model**-0.5, generator=generator)
            elif ".norm" in name:
                continue
            elif param.dim() == 2:
                nn.init.kaiming_uniform_(param, a=math.sqrt(5), generator=generator)
            else:  # a Linear bias: same bound torch uses, 1 / sqrt(fan_in)
                weight = model.get_parameter(name.removesuffix("bias") + "weight")
                bound = 1.0 / math.sqrt(weight.shape[1])
                nn.init.uniform_(param, -bound, bound, generator=generator)
    return model


def build_encoder(config: EncoderConfig, seed: int) -> Encoder:
    """``Encoder(config)`` initialized from ``torch.Generator().manual_seed(seed)``."""
    return init_parameters(Encoder(config), torch.Generator().manual_seed(seed))
