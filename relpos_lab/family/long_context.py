"""Long context on the trained family: RoPE's context extension zero-shot, and attention sinks.

    python -m relpos_lab.family long            every measurement below, into long_context.json
    python -m relpos_lab.family eval rope --length 256 --rope-scaling yarn --factor 4

**Zero-shot extension.** The family's RoPE model, trained at 64 characters, scored at 1x to 16x
that length (``bits_per_character``: non-overlapping windows, as the length table cuts them, of
the first ``LONG_CHARS`` held-out characters, half the length table's) with its rotary frequencies
changed by each ``rope_scaling`` type of the catalogue: factor s = the length ratio, and one
fixed s. Nothing is trained; only theta_t (and YaRN's factor on q and k) change. Dynamic scaling
reads the window's length n.

**Attention sinks** (Xiao et al. 2023, "Efficient Streaming Language Models with Attention
Sinks"). Per model, layer and head, the share of attention the last ``SINK_ROWS`` queries of a
text of n characters give its first ``SINKS`` characters, for growing n; and bits per character
of a text of ``WINDOW_TEXT`` characters when every query sees only a window of ``CACHE`` keys:
the last ``CACHE`` (drop), or the first ``SINKS`` and the last ``CACHE - SINKS`` (keep). Keys keep
their positions in the text, so a kept first character sits at its true distance.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import torch
import torch.nn.functional as F

from relpos_core.schemes import Rotary
from relpos_core.schemes.catalogue import ROPE_SCALINGS, scheme_entry
from relpos_lab.family.model import CharLM
from relpos_lab.family.train import LENGTH_FACTORS, bits_per_character

ROPE_MODEL = scheme_entry("rope").model  # the family's RoPE model
FIXED_FACTOR = 4  # the one fixed factor, beside s = the length ratio
SINKS = 4  # the first characters a sink is looked for in
SINK_ROWS = 16  # the last queries of each text whose attention is measured
SINK_TEXTS = 2  # texts per length
CACHE = 64  # the keys a sliding-window query sees (the training length)
WINDOW_TEXT = 1024  # the text the windows slide over (16x the training length)
WINDOW_TEXTS = 2
LONG_CHARS = 8192  # the held-out characters the zero-shot table scores (8 windows at 16x)


def scaling_config(rope_type: str, factor: float, context: int) -> dict[str, object]:
    """A ``rope_scaling`` dict with the type's defaults: factor s over the training length."""
    return {
        "rope_type": rope_type,
        "factor": float(factor),
        "original_max_position_embeddings": context,
    }


def scaling_rows(context: int) -> dict[str, list[dict[str, object] | None]]:
    """Per row of the zero-shot table, the scaling at each length of LENGTH_FACTORS (None: none)."""
    rows: dict[str, list[dict[str, object] | None]] = {"none": [None] * len(LENGTH_FACTORS)}
    for declared in ROPE_SCALINGS:
        kind = declared.rope_type
        rows[f"{kind}, s = ratio"] = [scaling_config(kind, f, context) for f in LENGTH_FACTORS]
        rows[f"{kind}, s = {FIXED_FACTOR}"] = [
            scaling_config(kind, FIXED_FACTOR, context) for _ in LENGTH_FACTORS
        ]
    return rows


def rotary_layers(model: CharLM) -> list[Rotary]:
    layers = [block.attention.scheme for block in model.blocks]
    if not all(isinstance(scheme, Rotary) for scheme in layers):
        raise ValueError(f"rope_scaling needs a RoPE model, got position {model.config.position!r}")
    return layers  # type: ignore[return-value]


@contextmanager
def scaled(model: CharLM, scaling: dict | None, seq_len: int | None = None) -> Iterator[CharLM]:
    """``model`` with every layer's rotary frequencies scaled while the block runs (``seq_len``:
    the length dynamic scaling reads)."""
    layers = rotary_layers(model)
    kept = [(layer.scaling, layer.seq_len) for layer in layers]
    fresh = Rotary(1, model.config.head_dim, layers[0].base, scaling, seq_len)
    try:
        for layer in layers:
            layer.scaling, layer.seq_len = fresh.scaling, fresh.seq_len
        yield model
    finally:
        for layer, (scaling_before, seq_len_before) in zip(layers, kept, strict=True):
            layer.scaling, layer.seq_len = scaling_before, seq_len_before


def scaled_bpc(model: CharLM, span: torch.Tensor, length: int, scaling: dict | None) -> float:
    """Bits per character at window ``length`` with ``scaling`` on the RoPE model."""
    with scaled(model, scaling, seq_len=length):
        return bits_per_character(model, span, length)


def zero_shot(
    model: CharLM, span: torch.Tensor, context: int, log=None
) -> dict[str, dict[str, float]]:
    """Every row of ``scaling_rows`` at every length: {row: {str(L): bpc}}. A factor of 1
    changes nothing (every type then gives base^(-2t/d) and a factor 1): it is not re-run."""
    out: dict[str, dict[str, float]] = {}
    done: dict[tuple, float] = {}  # (length, config) measured already: s = ratio = 4 at 4x
    for row, configs in scaling_rows(context).items():
        out[row] = {}
        for f, config in zip(LENGTH_FACTORS, configs, strict=True):
            length = context * f
            plain = config is None or config["factor"] == 1
            key = (length, None if plain else tuple(sorted(config.items())))  # type: ignore[union-attr]
            if key not in done:
                done[key] = round(scaled_bpc(model, span, length, None if plain else config), 6)
            out[row][str(length)] = done[key]
        if log:
            log(f"{row}: {out[row]}")
    return out


def layer_weights(
    model: CharLM, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, rows: int
) -> torch.Tensor:
    """Attention weights (b, h, rows, n) of the last ``rows`` queries of one layer."""
    n = q.shape[2]
    scheme = model.blocks[layer].attention.scheme
    if scheme is None:
        logits = q[:, :, -rows:] @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        ahead = torch.arange(n)[None, :] > torch.arange(n - rows, n)[:, None]
        return logits.masked_fill(ahead, float("-inf")).softmax(-1)
    return scheme(q[:, :, -rows:], k, v, causal=True, query_offset=n - rows)[1]


@torch.no_grad()
def sink_shares(model: CharLM, span: torch.Tensor, lengths: Sequence[int]) -> list:
    """[layer][head][length]: the mean share of attention on the first SINKS characters."""
    layers, heads = model.config.layers, model.config.heads
    out = [[[0.0] * len(lengths) for _ in range(heads)] for _ in range(layers)]
    for at, n in enumerate(lengths):
        ids = span[: SINK_TEXTS * n].view(SINK_TEXTS, n)
        for layer, (q, k, v) in enumerate(model.attention_inputs(ids)):
            share = layer_weights(model, layer, q, k, v, SINK_ROWS)[..., :SINKS].sum(-1)
            for head in range(heads):
                out[layer][head][at] = round(float(share[:, head].mean()), 6)
    return out


def window_mask(n: int, cache: int, sinks: int) -> torch.Tensor:
    """(n, n) bool: query i sees keys i - (cache - sinks) < j <= i, and j < sinks.

    >>> window_mask(5, 3, 1).int().tolist()
    [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 0, 1, 1, 0], [1, 0, 0, 1, 1]]
    """
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    return (j <= i) & ((j > i - (cache - sinks)) | (j < sinks))


def windowed_forward(model: CharLM, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The model's logits (b, n, vocab) with every layer's attention limited to ``mask``."""
    x = model.embed(ids)
    for block in model.blocks:
        attention = block.attention
        q, k, v = attention.split(block.norm_attention(x))
        if attention.scheme is None:
            z = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:  # the scheme's definition (Shaw's too, not its fused path): it takes a mask
            z = attention.scheme(q, k, v, mask=mask, causal=True)[0]
        b, _, n, _ = z.shape
        x = x + attention.out(z.transpose(1, 2).reshape(b, n, -1))
        x = x + block.ffn(block.norm_ffn(x))
    return model.readout(model.norm(x))


@torch.no_grad()
def window_bpc(model: CharLM, span: torch.Tensor, keep: bool) -> float:
    """Bits per character of WINDOW_TEXTS texts of WINDOW_TEXT characters, each query seeing a
    window of CACHE keys that keeps the first SINKS characters (``keep``) or not."""
    n = WINDOW_TEXT
    mask = window_mask(n, CACHE, SINKS if keep else 0)
    nats = 0.0
    for t in range(WINDOW_TEXTS):
        text = span[t * n : (t + 1) * n + 1]
        logits = windowed_forward(model, text[None, :-1], mask)
        nats += float(F.cross_entropy(logits[0].double(), text[1:], reduction="sum"))
    return nats / (WINDOW_TEXTS * n) / math.log(2)


DECAY_TEXTS = 2  # held-out texts the trained mean logit by distance averages over
DECAY_LENGTH = 1024  # their length: 16x the training length


@torch.no_grad()
def mean_logit_by_distance(model: CharLM, span: torch.Tensor) -> list:
    """[layer][head][r]: the RoPE model's logit q_i^T R_(j-i) k_j / sqrt(d) averaged over every
    query i and text at each distance r = i - j (DECAY_TEXTS texts of DECAY_LENGTH)."""
    rotary_layers(model)
    ids = span[: DECAY_TEXTS * DECAY_LENGTH].view(DECAY_TEXTS, DECAY_LENGTH)
    out = []
    for layer, (q, k, _) in enumerate(model.attention_inputs(ids)):
        logits = model.blocks[layer].attention.scheme.logits(q, k)  # (b,h,i,j)
        means = [logits.diagonal(-r, -2, -1).mean((0, 2)) for r in range(DECAY_LENGTH)]
        out.append([[round(float(v), 4) for v in head] for head in torch.stack(means, 1)])
    return out


def measure(models: dict[str, CharLM], span: torch.Tensor, context: int, log=print) -> dict:
    """Every measurement of this module, as long_context.json holds it."""
    lengths = [context * f for f in LENGTH_FACTORS]
    out: dict = {
        "context": context,
        "characters": len(span) - 1,
        "lengths": lengths,
        "fixed_factor": FIXED_FACTOR,
        "zero_shot": zero_shot(models[ROPE_MODEL], span, context, log),
        "decay": {
            "texts": DECAY_TEXTS,
            "length": DECAY_LENGTH,
            "mean_logit": mean_logit_by_distance(models[ROPE_MODEL], span),
        },
        "sinks": {"first": SINKS, "rows": SINK_ROWS, "texts": SINK_TEXTS, "share": {}},
        "window": {"cache": CACHE, "text": WINDOW_TEXT, "texts": WINDOW_TEXTS, "bpc": {}},
    }
    return measure_sinks(out, models, span, log)


def measure_sinks(
    record: dict, models: dict[str, CharLM], span: torch.Tensor, log=print, order=()
) -> dict:
    """``record`` with each model's sink shares and sliding-window bits measured (a model
    already there measured again); its models listed in ``order``, then any others."""
    for name, model in models.items():
        record["sinks"]["share"][name] = sink_shares(model, span, record["lengths"])
        record["window"]["bpc"][name] = {
            "keep": round(window_bpc(model, span, keep=True), 6),
            "drop": round(window_bpc(model, span, keep=False), 6),
        }
        log(f"{name}: window {record['window']['bpc'][name]}")
    for table in (record["sinks"]["share"], record["window"]["bpc"]):
        ranked = sorted(table, key=lambda n: order.index(n) if n in order else len(order))
        kept = {name: table[name] for name in ranked}
        table.clear()
        table.update(kept)
    return record


LONG_FILE = Path(__file__).resolve().parent / "checkpoints" / "long_context.json"
BEGIN = "<!-- long-context tables: generated by `python -m relpos_lab.family long --table` -->"
END = "<!-- end of long-context tables -->"


def uniform_share(n: int) -> float:
    """The share on the first SINKS keys if the last SINK_ROWS queries attended uniformly."""
    return sum(SINKS / (i + 1) for i in range(n - SINK_ROWS, n)) / SINK_ROWS


def long_tables(record: dict) -> str:
    """The generated block for docs/experiments.md, markers included."""
    lengths, context = record["lengths"], record["context"]
    lines = [BEGIN, "", "**RoPE zero-shot, bits per character by evaluation length:**", ""]
    lines += ["| scaling | " + " | ".join(f"{n} ({n // context}x)" for n in lengths) + " |"]
    lines += ["|---|" + "---:|" * len(lengths)]
    for row, bpc in record["zero_shot"].items():
        lines.append(f"| {row} | " + " | ".join(f"{bpc[str(n)]:.3f}" for n in lengths) + " |")
    shown = [lengths[0], lengths[len(lengths) // 2], lengths[-1]]
    lines += ["", f"**Attention on the first {SINKS} characters** (mean over heads and layers; "]
    lines[-1] += "the largest head) **and a sliding window of "
    lines[-1] += f"{record['window']['cache']} keys over {record['window']['text']} characters:**"
    head = [f"share at {n}" for n in shown] + ["largest head at " + str(shown[-1])]
    lines += ["", "| model | " + " | ".join(head) + " | window bpc, drop | keep first 4 |"]
    lines += ["|---|" + "---:|" * (len(head) + 2)]
    lines.append(
        "| (uniform) | " + " | ".join(f"{uniform_share(n):.4f}" for n in shown) + " | | | |"
    )
    for name, share in record["sinks"]["share"].items():
        cells = []
        for n in shown:
            at = lengths.index(n)
            cells.append(
                f"{sum(h[at] for layer in share for h in layer) / sum(map(len, share)):.4f}"
            )
        top = max(
            (
                (layer, head, heads[-1])
                for layer, hs in enumerate(share)
                for head, heads in enumerate(hs)
            ),
            key=lambda cell: cell[2],
        )
        cells.append(f"{top[2]:.4f} (layer {top[0]}, head {top[1]})")  # counted from 0, as the app
        window = record["window"]["bpc"][name]
        cells += [f"{window['drop']:.3f}", f"{window['keep']:.3f}"]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    lines += ["", END]
    return "\n".join(lines)
