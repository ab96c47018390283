"""The Attention basics page's views: the copy model's alignment (additive scores, and the dot
product on the same states), and the worked example of scaled dot-product attention.

The copy model (``relpos_lab.copy_task``) is the attention introduction's toy problem: an
encoder-decoder with Bahdanau attention that copies the first n_out items of a random sequence.
With trained weights the page draws the shipped model; with random weights one built from the
view's seed. Every view returns frozen numpy and carries its check against the definition,
written here as plain Python loops.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from explorer.frame.memory import cached
from explorer.weights.source import TensorSource
from relpos_core.basics import dot_product_scores, scaled_dot_product_attention
from relpos_lab.copy_task import (
    CopyConfig,
    CopyModel,
    build_copy_model,
    copy_with_attention,
    load_copy_model,
)

# i output (query) · j input (key) · a additive width d_a · c state width

CONFIG = CopyConfig()  # the copy task and the widths of the model the page draws
ITEMS_DEFAULT = "1 3 5 2 4"  # the attention introduction's example sequence
ITEMS_MAX = 12  # inputs the page reads; the model was trained on CONFIG.n_in
MATRIX_ROWS_MAX = 8
MATRIX_COLS_MAX = 6
VALUE_MAX = 1e6
# The attention introduction's worked example: keys, values and three queries
EXAMPLE_K = "10 0 0; 0 10 0; 0 0 10; 0 0 10"
EXAMPLE_V = "1 0; 10 0; 100 5; 1000 6"
EXAMPLE_Q = "0 0 10; 0 10 0; 10 10 0"
EXAMPLE_SOURCES = ("typed Q (cross-attention)", "the keys themselves (self-attention)")


def parse_items(text: str, n_features: int, n_out: int) -> tuple[int, ...]:
    """Item ids from ``text`` (separated by spaces or commas), each in [1, n_features - 1].

    >>> parse_items("1 3, 5", 50, 2)
    (1, 3, 5)
    """
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        raise ValueError(
            f"items must be whole numbers in [1, {n_features - 1}] separated by spaces, got "
            f"{text!r}"
        )
    items = tuple(int(p) for p in parts)
    if not n_out <= len(items) <= ITEMS_MAX:
        raise ValueError(f"items must hold {n_out} to {ITEMS_MAX} numbers, got {len(items)}")
    if not all(1 <= item < n_features for item in items):
        raise ValueError(f"items must each be in [1, {n_features - 1}], got {text!r}")
    return items


def items_or_default(text: str) -> tuple[tuple[int, ...], str | None]:
    """The items typed, or the default ones and the warning that says why.

    >>> items_or_default("7 8 9")
    ((7, 8, 9), None)
    >>> items_or_default("7")[0]
    (1, 3, 5, 2, 4)
    """
    try:
        return parse_items(text, CONFIG.n_features, CONFIG.n_out), None
    except ValueError as error:
        default = parse_items(ITEMS_DEFAULT, CONFIG.n_features, CONFIG.n_out)
        return default, f"{error}; showing {ITEMS_DEFAULT} instead."


def parse_matrix(name: str, text: str, rows: tuple[int, int] | None = None) -> np.ndarray:
    """A small matrix typed as rows separated by ';', numbers by spaces or commas.

    ``rows``: the (least, most) rows allowed (default 1 to MATRIX_ROWS_MAX).

    >>> parse_matrix("V", "1 0; 10 0").tolist()
    [[1.0, 0.0], [10.0, 0.0]]
    """
    low, high = rows or (1, MATRIX_ROWS_MAX)
    form = f"rows separated by ';', numbers by spaces, at most {MATRIX_COLS_MAX} per row"
    lines = [line for line in text.split(";") if line.strip()]
    try:
        values = [[float(x) for x in re.split(r"[\s,]+", line.strip()) if x] for line in lines]
    except ValueError:
        raise ValueError(f"{name} must be numbers ({form}), got {text!r}") from None
    widths = {len(row) for row in values}
    if (
        not low <= len(values) <= high
        or len(widths) != 1
        or not 1 <= widths.pop() <= MATRIX_COLS_MAX
    ):
        raise ValueError(
            f"{name} must have {low} to {high} rows of one length from 1 to {MATRIX_COLS_MAX} "
            f"({form}), got {text!r}"
        )
    matrix = np.array(values, dtype=np.float64)
    if not np.all(np.isfinite(matrix)) or np.abs(matrix).max() > VALUE_MAX:
        raise ValueError(f"{name} must hold numbers of size at most {VALUE_MAX:g}, got {text!r}")
    return matrix


@cached(4, resource=True)
def copy_model(trained: bool, seed: int) -> CopyModel:
    """The shipped copy model, or an untrained one from ``seed`` (shared, read only)."""
    model = load_copy_model() if trained else build_copy_model(CopyConfig(), seed)
    return model.requires_grad_(False)


def copy_of(source: TensorSource, items: tuple[int, ...]) -> CopyView:
    """``items`` through the copy model of ``source``: the shipped one, or one drawn from the
    source's seed."""
    return copy_view(items, source.trained, source.seed)


@dataclass(frozen=True)
class CopyView:
    """One input sequence through the copy model: [output i, input j] unless noted."""

    items: tuple[int, ...]
    predicted: tuple[int, ...]  # (i,) the model's greedy outputs
    additive: np.ndarray  # e_ij = v_a^T tanh(W_a s_(i-1) + U_a h_j), the model's own scores
    weights: np.ndarray  # alpha_ij = softmax_j(e_ij), the alignment the model used
    dot: np.ndarray  # s_(i-1) · h_j / sqrt(c): scaled dot product on the same states
    dot_weights: np.ndarray  # softmax_j of ``dot``
    state_width: int  # c
    additive_width: int  # d_a
    trained_on: int  # the input length the model was trained on
    additive_diff: float  # max |model's e_ij - the definition by loops|
    dot_diff: float  # max |dot_product_scores - the definition by loops|


@cached(16)
def copy_view(items: tuple[int, ...], trained: bool, seed: int) -> CopyView:
    model = copy_model(trained, seed)
    with torch.no_grad():
        trace = copy_with_attention(model, list(items))
        s, h = trace.decoder_states[0].double(), trace.encoder_states[0].double()  # (i,c),(j,c)
        dot = dot_product_scores(s, h)  # (i,c),(j,c) -> (i,j)
    w_a, u_a = model.w_a.weight.double().numpy(), model.u_a.weight.double().numpy()
    v_a = model.v_a.double().numpy()
    s_np, h_np = s.numpy(), h.numpy()
    by_loops = np.array(  # the paper's a(s, h), one pair at a time
        [[v_a @ np.tanh(w_a @ s_i + u_a @ h_j) for h_j in h_np] for s_i in s_np]
    )
    dot_loops = np.array([[s_i @ h_j / math.sqrt(len(s_i)) for h_j in h_np] for s_i in s_np])
    additive = trace.scores[0].numpy()
    return CopyView(
        items=items,
        predicted=tuple(int(y) for y in trace.predicted[0]),
        additive=additive.astype(np.float32),
        weights=trace.weights[0].numpy().astype(np.float32),
        dot=dot.numpy().astype(np.float32),
        dot_weights=torch.softmax(dot, -1).numpy().astype(np.float32),
        state_width=model.config.hidden,
        additive_width=model.config.attention,
        trained_on=model.config.n_in,
        additive_diff=float(np.abs(additive - by_loops).max()),
        dot_diff=float(np.abs(dot.numpy() - dot_loops).max()),
    )


@dataclass(frozen=True)
class ExampleView:
    """softmax(Q K^T / sqrt(d)) V on small typed matrices."""

    q: np.ndarray  # (i, d_k)
    k: np.ndarray  # (j, d_k)
    v: np.ndarray  # (j, d_v)
    logits: np.ndarray  # (i, j)
    weights: np.ndarray  # (i, j)
    output: np.ndarray  # (i, d_v)
    max_diff: float  # max |core - the definition by loops| over weights and output


def example_view(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> ExampleView:
    """The core's scaled dot-product attention on (q, k, v), checked against loops."""
    if q.shape[1] != k.shape[1]:
        raise ValueError(
            f"Q and K must have the same number of columns (d): Q has {q.shape[1]}, K has "
            f"{k.shape[1]}"
        )
    if k.shape[0] != v.shape[0]:
        raise ValueError(
            f"K and V must have the same number of rows (one value per key): K has "
            f"{k.shape[0]}, V has {v.shape[0]}"
        )
    result = scaled_dot_product_attention(*(torch.from_numpy(m) for m in (q, k, v)))
    weights, output = result.weights.numpy(), result.output.numpy()
    d_k = q.shape[1]
    want_weights, want_output = [], []
    for q_i in q:  # softmax_j(q_i · k_j / sqrt(d)), then sum_j alpha_ij v_j
        scores = [float(q_i @ k_j) / math.sqrt(d_k) for k_j in k]
        top = max(scores)
        exp = [math.exp(x - top) for x in scores]
        alpha = [x / sum(exp) for x in exp]
        want_weights.append(alpha)
        want_output.append(sum(a * v_j for a, v_j in zip(alpha, v, strict=True)))
    diff = max(
        float(np.abs(weights - np.array(want_weights)).max()),
        float(np.abs(output - np.array(want_output)).max() / max(1.0, np.abs(v).max())),
    )
    return ExampleView(q, k, v, result.logits.numpy(), weights, output, diff)


def is_self_attention(source: str) -> bool:
    """Whether the queries are the keys themselves (one of EXAMPLE_SOURCES)."""
    return source == EXAMPLE_SOURCES[1]


def example_of(
    source: str, q_text: str, k_text: str, v_text: str
) -> tuple[ExampleView, str | None]:
    """The worked example on the matrices typed (Q = K for self-attention), or on the example's
    own matrices and the warning that says why."""
    try:
        k = parse_matrix("K", k_text)
        v = parse_matrix("V", v_text)
        q = k if is_self_attention(source) else parse_matrix("Q", q_text)
        return example_view(q, k, v), None
    except ValueError as error:
        q, k, v = (
            parse_matrix(name, text)
            for name, text in (("Q", EXAMPLE_Q), ("K", EXAMPLE_K), ("V", EXAMPLE_V))
        )
        return example_view(q, k, v), f"{error}. Showing the example's own matrices."
