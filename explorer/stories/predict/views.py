"""What a family model does with a text: the next character's distribution, the attention of
the last character in every layer and head, the bits it spends on each character, and a seeded
generation, character by character.

Every number is the model's own forward pass (``CharLM``, through ``explorer.weights.trained``):
p(next) = softmax(logits of the last position); bits_t = -log2 p(x_(t+1) | x_0..x_t); the
attention of the last character is each layer's position scheme (or plain causal attention for
the models without one) on that layer's own q, k, v.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.budget import plan_scheme
from explorer.frame.memory import cached
from explorer.frame.params import ViewParams
from explorer.weights.example import view_array
from explorer.weights.reading import held_out_passage, shown
from explorer.weights.trained import family_model
from relpos_core.basics import scaled_dot_product_attention
from relpos_lab.family.corpus import UNKNOWN
from relpos_lab.family.registry import scheme_models
from relpos_lab.family.train import eval_span

TOP = 10  # characters listed for the next position
CONTEXT_MAX = 512  # a generated character reads at most this many characters before it
PASSAGE_LENGTHS = (64, 128, 256, 512, 1024)  # 1x to 16x the training length
TEXT_MAX = PASSAGE_LENGTHS[-1]  # characters the next-character view reads, at most
GENERATE_MAX = 200  # characters one generation draws, at most
TEMPERATURES = (0.2, 0.5, 0.8, 1.0, 1.2, 1.5, 2.0)


def shown_text(text: str) -> tuple[str, ...]:
    """A text's characters as axis labels (whitespace made visible)."""
    return tuple(shown(c) for c in text)


def text_of(params: ViewParams) -> str:
    """The characters the page reads: the sidebar's sentence (every character, whatever the
    weights switch made of n), else n held-out characters (as on every page with trained
    weights), at most the last TEXT_MAX of them."""
    return (params.text or held_out_passage()[: params.length])[-TEXT_MAX:]


def model_config(name: str):
    """The architecture of model ``name`` (layers, heads, width, training length ``context``)."""
    return family_model(name)[0].config


@dataclass(frozen=True)
class NextView:
    """Model ``name`` on ``text``: what it predicts after the last character, and how."""

    name: str
    text: str
    top_chars: tuple[str, ...]  # the TOP most likely next characters, most likely first
    top_probs: np.ndarray  # (TOP,) their probabilities
    attention: np.ndarray  # (layers, heads, n) the last character's weights over the text
    bits: np.ndarray  # (n - 1,) bits spent on characters 1..n-1, each given those before it
    unread: tuple[str, ...]  # characters of the text the model reads as its unknown id

    @property
    def labels(self) -> tuple[str, ...]:
        """The text's characters as axis labels (whitespace made visible)."""
        return shown_text(self.text)


def _char(vocabulary, token: int) -> str:
    """The character of id ``token``; the unknown id as U+FFFD."""
    return vocabulary.decode([token])


def plan_forward(model, n_q: int, n_k: int, what: str) -> None:
    """Refuse, before the forward pass, a text whose attention terms would not fit."""
    scheme = model.blocks[0].attention.scheme
    if scheme is not None:  # the others attend by SDPA, O(n) memory
        plan_scheme(what, scheme, min(n_q, 256), n_k, traces=1)  # the model's row blocks


def attention_rows(model, ids: torch.Tensor, first: int = 0) -> torch.Tensor:
    """(layers, heads, n - first, n): the weights of queries ``first``..n-1 over every key, per
    layer and head, as each layer's attention computed them (its scheme, causal; a key after
    its query gets weight 0)."""
    n = ids.shape[1]
    rows = []
    for block, (q, k, v) in zip(model.blocks, model.attention_inputs(ids), strict=True):
        scheme = block.attention.scheme
        queries = q[:, :, first:]  # (1, h, n - first, d)
        if scheme is None:  # plain causal attention
            ahead = torch.arange(n)[None, :] > torch.arange(first, n)[:, None]
            weights = scaled_dot_product_attention(queries, k, v, mask=ahead).weights
        else:
            weights = scheme(queries, k, v, causal=True, query_offset=first)[1]
        rows.append(weights[0])  # (h, n - first, n)
    return torch.stack(rows)


def last_attention(model, ids: torch.Tensor) -> torch.Tensor:
    """(layers, heads, n): the weights of the last position over every key."""
    return attention_rows(model, ids, ids.shape[1] - 1)[:, :, 0]


@cached(8)
def next_view(name: str, text: str) -> NextView:
    """Model ``name`` (a family model) on ``text`` (at least one character)."""
    if not text:
        raise ValueError("text must hold at least 1 character, got ''")
    model, vocabulary = family_model(name)
    ids = vocabulary.encode(text)[None]  # (1, n)
    plan_forward(model, ids.shape[1], ids.shape[1], "next character")
    with torch.no_grad():
        log_p = torch.log_softmax(model(ids)[0].double(), -1)  # (n, vocab)
        top = torch.topk(log_p[-1], TOP)
        bits = -log_p[:-1].gather(1, ids[0, 1:, None])[:, 0] / math.log(2)
        attention = last_attention(model, ids)
    return NextView(
        name=name,
        text=text,
        top_chars=tuple(_char(vocabulary, int(t)) for t in top.indices),
        top_probs=top.values.exp().numpy().astype(np.float32),
        attention=view_array(attention),
        bits=bits.numpy().astype(np.float32),
        unread=tuple(c for c, i in zip(text, ids[0].tolist(), strict=True) if i == UNKNOWN),
    )


@dataclass(frozen=True)
class Generation:
    """Characters drawn one at a time after ``prompt``, each from the model's distribution
    (divided by the temperature, cut to the ``top_k`` most likely), with ``seed``."""

    prompt: str
    chars: tuple[str, ...]
    probs: np.ndarray  # (count,) each drawn character's probability in the cut distribution
    tops: tuple[tuple[str, ...], ...]  # per draw, the 3 characters it was most likely to be

    @property
    def text(self) -> str:
        return "".join(self.chars)

    @property
    def bits(self) -> np.ndarray:
        """(count,) -log2 p: the bits each draw cost, what the written strip colours."""
        return -np.log2(self.probs)


@cached(16)
def generate(
    name: str, prompt: str, count: int, temperature: float, top_k: int, seed: int
) -> Generation:
    """Draw ``count`` characters after ``prompt`` from model ``name``: p = softmax(logits / T)
    over the ``top_k`` most likely characters (the unknown id is never drawn: it is not one
    character), sampled with a generator seeded by ``seed``."""
    if not prompt:
        raise ValueError("prompt must hold at least 1 character, got ''")
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    model, vocabulary = family_model(name)
    if count == 0:
        return Generation(prompt, (), np.zeros(0, np.float32), ())
    ids = vocabulary.encode(prompt)
    window = min(CONTEXT_MAX, len(ids) + count)
    plan_forward(model, window, window, "generation")
    generator = torch.Generator().manual_seed(seed)
    chars, probs, tops = [], [], []
    # The model reads each drawn character once, against the keys and values it kept of the
    # characters before (CharLM.extend); once the text outgrows CONTEXT_MAX the window slides
    # and every position moves, so it reads the window anew.
    logits, cache = model.extend(ids[-CONTEXT_MAX:][None])
    for step in range(count):
        last = logits[0, -1].double() / temperature
        last[UNKNOWN] = -math.inf
        cut = torch.topk(last, min(top_k, last.numel() - 1))
        p = torch.softmax(cut.values, -1)
        pick = int(torch.multinomial(p, 1, generator=generator))
        token = int(cut.indices[pick])
        chars.append(_char(vocabulary, token))
        probs.append(float(p[pick]))
        tops.append(tuple(_char(vocabulary, int(t)) for t in cut.indices[:3]))
        ids = torch.cat([ids, torch.tensor([token])])
        if step + 1 < count:
            if len(ids) <= CONTEXT_MAX:
                logits, cache = model.extend(ids[-1:][None], cache)
            else:
                logits, cache = model.extend(ids[-CONTEXT_MAX:][None])
    return Generation(prompt, tuple(chars), np.asarray(probs, np.float32), tuple(tops))


@dataclass(frozen=True)
class WritingStep:
    """What model ``name`` read when it drew character ``t`` of a generation: the characters
    before it (at most CONTEXT_MAX, the last ``written`` of them its own), and the attention of
    the last of them, every layer and head."""

    name: str
    t: int
    text: str  # the characters read
    written: int  # how many of them, at the end, the model wrote itself
    attention: np.ndarray  # (layers, heads, len(text))

    @property
    def labels(self) -> tuple[str, ...]:
        return shown_text(self.text)


@cached(8)
def writing_step(
    name: str, prompt: str, count: int, temperature: float, top_k: int, seed: int, t: int
) -> WritingStep:
    """The attention behind character ``t`` of ``generate(name, prompt, count, ...)``: the
    last position's weights when the model read the prompt and the t characters it had drawn
    before (the forward pass whose logits drew character t)."""
    gen = generate(name, prompt, count, temperature, top_k, seed)
    if not 0 <= t < len(gen.chars):
        raise ValueError(f"t must be in [0, {len(gen.chars) - 1}], got {t}")
    model, vocabulary = family_model(name)
    ids = vocabulary.encode(prompt + gen.text[:t])[-CONTEXT_MAX:]
    with torch.no_grad():
        attention = last_attention(model, ids[None])
    read = (prompt + gen.text[:t])[-CONTEXT_MAX:]  # one id per character
    return WritingStep(name, t, read, min(t, len(read)), view_array(attention))


@dataclass(frozen=True)
class LossAlong:
    """Every scheme's model on the same held-out passage: the bits each spends on each
    character, scored as the length table scores one window of ``length`` characters."""

    length: int
    text: str  # the characters predicted (the first of the span is context only)
    bits: dict[str, np.ndarray]  # model name -> (length,) bits per character

    def running_mean(self, name: str) -> np.ndarray:
        """(length,) mean bits over characters 0..t: the curve whose last value is the
        passage's bits per character."""
        b = self.bits[name].astype(np.float64)
        return (np.cumsum(b) / np.arange(1, len(b) + 1)).astype(np.float32)


@cached(4)
def loss_along(length: int) -> LossAlong:
    """The bits of every scheme's model on the first ``length`` + 1 held-out ids (the span
    ``python -m relpos_lab.family eval`` scores), one window of ``length``."""
    if length not in PASSAGE_LENGTHS:
        raise ValueError(f"length must be one of {PASSAGE_LENGTHS}, got {length}")
    bits = {}
    for name in scheme_models():
        model, vocabulary = family_model(name)
        bits[name] = passage_bits(model, length)
    return LossAlong(length, vocabulary.decode(eval_span(length)[1:]), bits)


def passage_bits(model, length: int) -> np.ndarray:
    """(length,) bits_t = -log2 p(x_(t+1) | x_0..x_t) of ``model`` on the first ``length`` + 1
    held-out ids, read as one window."""
    span = eval_span(length)
    x, y = span[:-1][None], span[1:]
    plan_forward(model, length, length, "bits along the passage")
    with torch.no_grad():
        log_p = torch.log_softmax(model(x)[0].double(), -1)
    return (-log_p.gather(1, y[:, None])[:, 0] / math.log(2)).numpy().astype(np.float32)
