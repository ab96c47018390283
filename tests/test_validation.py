"""Errors a user can cause: ValueError (TypeError for a wrong type) whose message names the
argument and shows the value received (and the allowed range where there is one).
"""

import re
from collections.abc import Callable

import numpy as np
import pytest
import torch

import relpos_core as rc
import relpos_core.guard as memory_module
from relpos_core.schemes import make_scheme
from scripts.measure_memory import peak_bytes
from tests.largest_tensor import LargestTensor

NAN = float("nan")
INF = float("inf")


def q4(n=3, d=4):
    return torch.randn(1, 2, n, d)


def with_value(shape, index, value):
    t = torch.randn(shape)
    t[index] = value
    return t


def message_with(*parts: str) -> str:
    """A regex that matches a message containing every part, in any order."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


# (id, call, exception, parts the message must contain)
CASES: list[tuple[str, Callable[[], object], type[Exception], tuple[str, ...]]] = [
    # lookup
    ("distances n_q < 1", lambda: rc.relative_distances(0, 3), ValueError, ("n_q", ">= 1", "0")),
    ("distances n_k < 1", lambda: rc.relative_distances(3, -2), ValueError, ("n_k", ">= 1", "-2")),
    (
        "index k < 0",
        lambda: rc.relative_index(3, 3, -1),
        ValueError,
        ("max_relative_position", ">= 0", "-1"),
    ),
    (
        "index k bool",
        lambda: rc.relative_index(3, 3, True),
        TypeError,
        ("max_relative_position", "bool", "True"),
    ),
    (
        "index k float",
        lambda: rc.relative_index(3, 3, 1.5),
        TypeError,
        ("max_relative_position", "float", "1.5"),
    ),
    (
        "table k < 0",
        lambda: rc.relative_table(-1, 4),
        ValueError,
        ("max_relative_position", ">= 0", "-1"),
    ),
    ("table d < 1", lambda: rc.relative_table(1, 0), ValueError, ("d (", ">= 1", "got 0")),
    ("table seed < 0", lambda: rc.relative_table(1, 4, seed=-3), ValueError, ("seed", "-3")),
    ("table d bool", lambda: rc.relative_table(1, True), TypeError, ("d (", "bool")),
    (
        "table dtype",
        lambda: rc.relative_table(1, 4, dtype=torch.int64),
        TypeError,
        ("dtype", "float32", "torch.int64"),
    ),
    (
        "gather index range",
        lambda: rc.gather_relative(torch.eye(3), torch.tensor([[0, 3]])),
        ValueError,
        ("index", "[0, 2]", "[0, 3]"),
    ),
    (
        "gather index dtype",
        lambda: rc.gather_relative(torch.eye(3), torch.zeros(2, 2)),
        TypeError,
        ("index", "int64", "torch.float32"),
    ),
    (
        "gather index rank",
        lambda: rc.gather_relative(torch.eye(3), torch.zeros(4, dtype=torch.int64)),
        ValueError,
        ("index", "(n_q, n_k)", "(4,)"),
    ),
    (
        "gather table nan",
        lambda: rc.gather_relative(
            with_value((3, 2), (0, 0), NAN), torch.zeros(1, 1, dtype=torch.int64)
        ),
        ValueError,
        ("table", "finite", "NaN"),
    ),
    # logits
    (
        "logits q 3-D",
        lambda: rc.relative_logits(torch.randn(2, 3, 4), torch.randn(3, 4)),
        ValueError,
        ("q", "4", "(2, 3, 4)"),
    ),
    (
        "logits table width",
        lambda: rc.relative_logits(q4(d=4), torch.randn(5, 3)),
        ValueError,
        ("table", "(5, 3)", "4"),
    ),
    (
        "logits table rows even",
        lambda: rc.relative_logits(q4(), torch.randn(4, 4)),
        ValueError,
        ("table", "2k+1", "4 rows"),
    ),
    (
        "logits q nan",
        lambda: rc.relative_logits(with_value((1, 1, 2, 4), (0, 0, 1, 2), NAN), torch.randn(3, 4)),
        ValueError,
        ("q", "finite"),
    ),
    (
        "logits q inf",
        lambda: rc.relative_logits(with_value((1, 1, 2, 4), (0, 0, 0, 0), INF), torch.randn(3, 4)),
        ValueError,
        ("q", "finite"),
    ),
    (
        "logits table inf",
        lambda: rc.relative_logits(q4(), with_value((3, 4), (1, 1), -INF)),
        ValueError,
        ("table", "finite"),
    ),
    (
        "logits q int",
        lambda: rc.relative_logits(torch.ones(1, 1, 2, 4, dtype=torch.int64), torch.randn(3, 4)),
        TypeError,
        ("q", "float", "torch.int64"),
    ),
    (
        "logits dtype mix",
        lambda: rc.relative_logits(q4(), torch.randn(3, 4, dtype=torch.float64)),
        TypeError,
        ("q=torch.float32", "table=torch.float64"),
    ),
    (
        "logits method",
        lambda: rc.relative_logits(q4(), torch.randn(3, 4), method="fast"),
        ValueError,
        ("method", "loop, einsum, matmul, skew, bucket, banded", "'fast'"),
    ),
    (
        "logits skew cross",
        lambda: rc.relative_logits(q4(n=3), torch.randn(3, 4), 5, method="skew"),
        ValueError,
        ("skew", "n_q=3", "n_k=5"),
    ),
    (
        "logits n_k < 1",
        lambda: rc.relative_logits(q4(), torch.randn(3, 4), 0),
        ValueError,
        ("n_k", ">= 1", "0"),
    ),
    (
        "logits n_k bool",
        lambda: rc.relative_logits(q4(), torch.randn(3, 4), True),
        TypeError,
        ("n_k", "bool"),
    ),
    (
        "trace matmul q 3-D",
        lambda: rc.trace_matmul_logits(torch.randn(2, 3, 4), torch.randn(3, 4)),
        ValueError,
        ("q", "(2, 3, 4)"),
    ),
    (
        "skew_embeddings length",
        lambda: rc.skew_embeddings(torch.randn(3, 2), 0),
        ValueError,
        ("length", ">= 1", "0"),
    ),
    (
        "skew_embeddings table nan",
        lambda: rc.skew_embeddings(with_value((3, 2), (0, 0), NAN), 2),
        ValueError,
        ("table", "finite"),
    ),
    # values
    (
        "values weights 3-D",
        lambda: rc.relative_values(torch.rand(2, 3, 3), torch.randn(3, 4)),
        ValueError,
        ("weights", "4", "(2, 3, 3)"),
    ),
    (
        "values weights nan",
        lambda: rc.relative_values(with_value((1, 1, 2, 2), (0, 0, 0, 1), NAN), torch.randn(3, 4)),
        ValueError,
        ("weights", "finite"),
    ),
    (
        "values table rows even",
        lambda: rc.relative_values(torch.rand(1, 1, 2, 2), torch.randn(2, 4)),
        ValueError,
        ("table", "2k+1", "2 rows"),
    ),
    (
        "values method",
        lambda: rc.relative_values(torch.rand(1, 1, 2, 2), torch.randn(3, 4), method="Skew"),
        ValueError,
        ("method", "loop, einsum, matmul, skew, bucket, banded", "'Skew'"),
    ),
    (
        "values skew cross",
        lambda: rc.relative_values(torch.rand(1, 1, 2, 3), torch.randn(3, 4), method="skew"),
        ValueError,
        ("skew", "n_q=2", "n_k=3"),
    ),
    # skew
    (
        "skew_masked not square",
        lambda: rc.skew_masked(torch.randn(3, 4)),
        ValueError,
        ("x", "(3, 4)"),
    ),
    ("skew_masked 1-D", lambda: rc.skew_masked(torch.randn(3)), ValueError, ("x", "(3,)")),
    (
        "skew_masked nan",
        lambda: rc.skew_masked(with_value((2, 2), (1, 1), NAN)),
        ValueError,
        ("x", "finite"),
    ),
    ("skew_masked list", lambda: rc.skew_masked([[1.0]]), TypeError, ("x", "list")),
    (
        "skew_unmasked width",
        lambda: rc.skew_unmasked(torch.randn(3, 3)),
        ValueError,
        ("x", "2L-1", "(3, 3)"),
    ),
    ("skew_unmasked 1-D", lambda: rc.skew_unmasked(torch.randn(5)), ValueError, ("x", "(5,)")),
    ("skew_unmasked list", lambda: rc.skew_unmasked([[1.0, 2.0, 3.0]]), TypeError, ("x", "list")),
    (
        "skew_unmasked inf",
        lambda: rc.skew_unmasked(with_value((2, 3), (0, 2), INF)),
        ValueError,
        ("x", "finite"),
    ),
    (
        "trace_skew_masked",
        lambda: rc.trace_skew_masked(torch.randn(2, 3)),
        ValueError,
        ("x", "(2, 3)"),
    ),
    (
        "trace_skew_unmasked",
        lambda: rc.trace_skew_unmasked(torch.randn(2, 2)),
        ValueError,
        ("x", "(2, 2)"),
    ),
    (
        "to_relative_unmasked",
        lambda: rc.absolute_to_relative_unmasked(torch.randn(3, 5)),
        ValueError,
        ("y", "(3, 5)"),
    ),
    (
        "to_relative_masked",
        lambda: rc.absolute_to_relative_masked(torch.randn(2, 3, 4)),
        ValueError,
        ("y", "(2, 3, 4)"),
    ),
    (
        "to_relative_masked nan",
        lambda: rc.absolute_to_relative_masked(with_value((2, 2), (0, 0), NAN)),
        ValueError,
        ("y", "finite"),
    ),
    # masks
    ("causal n_q", lambda: rc.causal_mask(0), ValueError, ("n_q", ">= 1", "0")),
    ("causal n_k", lambda: rc.causal_mask(3, 0), ValueError, ("n_k", ">= 1", "0")),
    ("causal bool", lambda: rc.causal_mask(True), TypeError, ("n_q", "bool")),
    (
        "padding float ids",
        lambda: rc.padding_mask(torch.tensor([[1.0, 0.0]])),
        TypeError,
        ("tokens", "torch.float32"),
    ),
    (
        "padding 1-D ids",
        lambda: rc.padding_mask(torch.tensor([1, 0])),
        ValueError,
        ("tokens", "2", "(2,)"),
    ),
    (
        "trailing n_pad > n",
        lambda: rc.trailing_padding_mask(4, 5),
        ValueError,
        ("n_pad", "[0, 4]", "5"),
    ),
    ("trailing n < 1", lambda: rc.trailing_padding_mask(0, 0), ValueError, ("n (", ">= 1", "0")),
    # encodings
    ("pe n < 1", lambda: rc.sinusoidal_encoding(0, 4), ValueError, ("n (", ">= 1", "0")),
    ("pe d < 1", lambda: rc.sinusoidal_encoding(4, 0), ValueError, ("d (", ">= 1", "0")),
    ("pe d float", lambda: rc.sinusoidal_encoding(4, 2.0), TypeError, ("d (", "float", "2.0")),
    ("pe n bool", lambda: rc.sinusoidal_encoding(True, 4), TypeError, ("n (", "bool")),
    (
        "pe dtype",
        lambda: rc.sinusoidal_encoding(4, 4, dtype=torch.int64),
        TypeError,
        ("dtype", "float32", "torch.int64"),
    ),
    (
        "similarity 1-D",
        lambda: rc.encoding_similarity(torch.randn(4)),
        ValueError,
        ("pe", "2", "(4,)"),
    ),
    (
        "similarity nan",
        lambda: rc.encoding_similarity(with_value((3, 2), (1, 0), NAN)),
        ValueError,
        ("pe", "finite"),
    ),
    ("similarity list", lambda: rc.encoding_similarity([[1.0]]), TypeError, ("pe", "list")),
    # memory
    (
        "memory method",
        lambda: rc.memory_bytes("flash", 8, 4),
        ValueError,
        ("method", "loop, einsum, matmul, skew, bucket, banded", "'flash'"),
    ),
    ("memory n", lambda: rc.memory_bytes("einsum", 0, 4), ValueError, ("n (", ">= 1", "0")),
    ("memory d", lambda: rc.memory_bytes("einsum", 8, -1), ValueError, ("d (", ">= 1", "-1")),
    (
        "memory heads",
        lambda: rc.memory_bytes("bucket", 8, 4, heads=0, max_relative_position=1),
        ValueError,
        ("heads", ">= 1", "0"),
    ),
    (
        "memory batch",
        lambda: rc.memory_bytes("bucket", 8, 4, batch=0, max_relative_position=1),
        ValueError,
        ("batch", ">= 1", "0"),
    ),
    (
        "memory bytes",
        lambda: rc.memory_bytes("einsum", 8, 4, bytes_per_value=0),
        ValueError,
        ("bytes_per_value", ">= 1", "0"),
    ),
    (
        "memory bucket k",
        lambda: rc.memory_bytes("bucket", 8, 4, max_relative_position=-2),
        ValueError,
        ("max_relative_position", ">= 0", "-2"),
    ),
    (
        "memory bucket no k",
        lambda: rc.memory_bytes("bucket", 8, 4),
        ValueError,
        ("max_relative_position", "bucket", "None"),
    ),
    ("memory n bool", lambda: rc.memory_bytes("einsum", True, 4), TypeError, ("n (", "bool")),
    ("logits_bytes n", lambda: rc.logits_bytes(0), ValueError, ("n (", ">= 1", "0")),
    # layer
    (
        "layer divisible",
        lambda: rc.RelativeMultiHeadAttention(10, 3, 2),
        ValueError,
        ("hid_dim", "n_heads", "hid_dim=10", "n_heads=3"),
    ),
    (
        "layer hid_dim",
        lambda: rc.RelativeMultiHeadAttention(0, 1, 2),
        ValueError,
        ("hid_dim", ">= 1", "0"),
    ),
    (
        "layer n_heads",
        lambda: rc.RelativeMultiHeadAttention(8, 0, 2),
        ValueError,
        ("n_heads", ">= 1", "0"),
    ),
    (
        "layer max_rel",
        lambda: rc.RelativeMultiHeadAttention(8, 2, -1),
        ValueError,
        ("max_relative_position", ">= 0", "-1"),
    ),
    (
        "layer max_rel bool",
        lambda: rc.RelativeMultiHeadAttention(8, 2, True),
        TypeError,
        ("max_relative_position", "bool"),
    ),
    (
        "layer dropout",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2, dropout=1.0),
        ValueError,
        ("dropout", "[0, 1)", "1.0"),
    ),
    (
        "layer method",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2, method="fast"),
        ValueError,
        ("method", "loop, einsum, matmul, skew, bucket, banded", "'fast'"),
    ),
    (
        "position num_units",
        lambda: rc.RelativePosition(0, 2),
        ValueError,
        ("num_units", ">= 1", "0"),
    ),
    (
        "layer query width",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2)(
            torch.randn(1, 3, 6), torch.randn(1, 3, 8), torch.randn(1, 3, 8)
        ),
        ValueError,
        ("query", "hid_dim=8", "(1, 3, 6)"),
    ),
    (
        "layer key 2-D",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2)(
            torch.randn(1, 3, 8), torch.randn(3, 8), torch.randn(1, 3, 8)
        ),
        ValueError,
        ("key", "3", "(3, 8)"),
    ),
    (
        "layer kv length",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2)(
            torch.randn(1, 3, 8), torch.randn(1, 4, 8), torch.randn(1, 3, 8)
        ),
        ValueError,
        ("(1, 4, 8)", "(1, 3, 8)"),
    ),
    (
        "layer query nan",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2)(
            with_value((1, 3, 8), (0, 1, 1), NAN), torch.randn(1, 3, 8), torch.randn(1, 3, 8)
        ),
        ValueError,
        ("query", "finite"),
    ),
]


def attention_args(n_q=3, n_k=3, d=4, d_v=4):
    return (
        torch.randn(1, 2, n_q, d),
        torch.randn(1, 2, n_k, d),
        torch.randn(1, 2, n_k, d_v),
        torch.randn(3, d),
        torch.randn(3, d_v),
    )


def replaced(index, value, **shape):
    args = list(attention_args(**shape))
    args[index] = value
    return args


ATTENTION_CASES = [
    (
        "causal not a bool",
        lambda: rc.relative_attention(*attention_args(), causal="yes"),
        TypeError,
        ("causal", "bool", "'yes'"),
    ),
    (
        "causal 1 not a bool",
        lambda: rc.relative_attention(*attention_args(), causal=1),
        TypeError,
        ("causal", "bool", "1"),
    ),
    (
        "table_v even rows",
        lambda: rc.relative_attention(*replaced(4, torch.randn(4, 4))),
        ValueError,
        ("table_v", "(3, 4)", "(4, 4)"),
    ),
    (
        "padding pad_id not an int",
        lambda: rc.padding_mask(torch.tensor([[1, 0]]), pad_id="0"),
        TypeError,
        ("pad_id", "int", "'0'"),
    ),
    (
        "q 3-D",
        lambda: rc.relative_attention(*replaced(0, torch.randn(2, 3, 4))),
        ValueError,
        ("q", "4", "(2, 3, 4)"),
    ),
    (
        "k head dim",
        lambda: rc.relative_attention(*replaced(1, torch.randn(1, 2, 3, 5))),
        ValueError,
        ("k", "(1, 2, 3, 5)"),
    ),
    (
        "k batch",
        lambda: rc.relative_attention(*replaced(1, torch.randn(2, 2, 3, 4))),
        ValueError,
        ("k", "(2, 2, 3, 4)"),
    ),
    (
        "v length",
        lambda: rc.relative_attention(*replaced(2, torch.randn(1, 2, 5, 4))),
        ValueError,
        ("v", "(1, 2, 5, 4)"),
    ),
    (
        "table_k width",
        lambda: rc.relative_attention(*replaced(3, torch.randn(3, 5))),
        ValueError,
        ("table_k", "(3, 5)"),
    ),
    (
        "table_v width",
        lambda: rc.relative_attention(*replaced(4, torch.randn(3, 2))),
        ValueError,
        ("table_v", "(3, 2)"),
    ),
    (
        "table_k rows",
        lambda: rc.relative_attention(*replaced(3, torch.randn(2, 4))),
        ValueError,
        ("2k+1", "2 rows"),
    ),
    (
        "v nan (trace)",
        lambda: rc.relative_attention(
            *replaced(2, with_value((1, 2, 3, 4), (0, 1, 2, 3), NAN)), trace=True
        ),
        ValueError,
        ("v", "finite"),
    ),
    (
        "k inf (trace)",
        lambda: rc.relative_attention(
            *replaced(1, with_value((1, 2, 3, 4), (0, 0, 0, 0), INF)), trace=True
        ),
        ValueError,
        ("k", "finite"),
    ),
    (
        "table_v nan",
        lambda: rc.relative_attention(*replaced(4, with_value((3, 4), (2, 1), NAN))),
        ValueError,
        ("table_v", "finite"),
    ),
    (
        "dtype mix",
        lambda: rc.relative_attention(*replaced(2, torch.randn(1, 2, 3, 4, dtype=torch.float64))),
        TypeError,
        ("v=torch.float64", "q=torch.float32"),
    ),
    (
        "method",
        lambda: rc.relative_attention(*attention_args(), method="flash"),
        ValueError,
        ("method", "loop, einsum, matmul, skew, bucket, banded", "'flash'"),
    ),
    (
        "skew cross",
        lambda: rc.relative_attention(*attention_args(n_q=2, n_k=3), method="skew"),
        ValueError,
        ("skew", "n_q=2", "n_k=3"),
    ),
    (
        "mask width",
        lambda: rc.relative_attention(*attention_args(), mask=torch.ones(4, dtype=torch.bool)),
        ValueError,
        ("mask", "(4,)", "(1, 2, 3, 3)"),
    ),
    (
        "mask batch",
        lambda: rc.relative_attention(
            *attention_args(), mask=torch.ones(3, 1, 1, 1, dtype=torch.bool)
        ),
        ValueError,
        ("mask", "(3, 1, 1, 1)", "(1, 2, 3, 3)"),
    ),
    (
        "mask rank 5",
        lambda: rc.relative_attention(
            *attention_args(), mask=torch.ones(2, 1, 1, 1, 3, dtype=torch.bool)
        ),
        ValueError,
        ("mask", "(2, 1, 1, 1, 3)", "(1, 2, 3, 3)"),
    ),
    (
        "mask list",
        lambda: rc.relative_attention(*attention_args(), mask=[[1, 0]]),
        TypeError,
        ("mask", "list"),
    ),
    (
        "softmax allowed dtype",
        lambda: rc.masked_softmax(torch.randn(2, 3), torch.ones(2, 3)),
        TypeError,
        ("allowed", "bool", "torch.float32"),
    ),
    (
        "softmax allowed shape",
        lambda: rc.masked_softmax(torch.randn(2, 3), torch.ones(2, 4, dtype=torch.bool)),
        ValueError,
        ("allowed", "(2, 4)", "(2, 3)"),
    ),
    (
        "softmax logits nan",
        lambda: rc.masked_softmax(
            with_value((2, 3), (0, 0), NAN), torch.ones(2, 3, dtype=torch.bool)
        ),
        ValueError,
        ("logits", "NaN"),
    ),
]


BIG = 2**70  # beyond int64: refused with a ValueError, not an OverflowError from torch
BIG_TEXT = str(BIG)


def zero_keys(method, trace=False):
    q, _, _, table_k, table_v = attention_args()
    empty = torch.randn(1, 2, 0, 4)
    return lambda: rc.relative_attention(
        q, empty, empty, table_k, table_v, method=method, trace=trace
    )


# Reported problems: each a clear error naming the argument, what is allowed and what came in.
FINDING_CASES = [
    *(
        (f"zero keys {method}", zero_keys(method), ValueError, ("k", "n_k >= 1", "(1, 2, 0, 4)"))
        for method in ("auto", "banded")
    ),
    ("zero keys, trace", zero_keys("auto", True), ValueError, ("k", "n_k >= 1", "(1, 2, 0, 4)")),
    (
        "d = 0",
        lambda: rc.relative_attention(
            *(torch.randn(1, 2, 3, 0) for _ in range(3)), torch.randn(3, 0), torch.randn(3, 0)
        ),
        ValueError,
        ("q", "d >= 1", "(1, 2, 3, 0)"),
    ),
    (
        "zero queries",
        lambda: rc.relative_attention(*replaced(0, torch.randn(1, 2, 0, 4))),
        ValueError,
        ("q", "n_q >= 1", "(1, 2, 0, 4)"),
    ),
    (
        "return_weights not a bool",
        lambda: rc.relative_attention(*attention_args(), return_weights="no"),
        TypeError,
        ("return_weights", "bool", "'no'"),
    ),
    (
        "causal 'no'",
        lambda: rc.relative_attention(*attention_args(), causal="no"),
        TypeError,
        ("causal", "bool", "'no'"),
    ),
    (
        "trace not a bool",
        lambda: rc.relative_attention(*attention_args(), trace="no"),
        TypeError,
        ("trace", "bool", "'no'"),
    ),
    (
        "mask NaN",
        lambda: rc.relative_attention(*attention_args(), mask=torch.full((3, 3), NAN)),
        ValueError,
        ("mask", "bool", "0 and 1", "nan"),
    ),
    (
        "mask 0.5",
        lambda: rc.relative_attention(*attention_args(), mask=torch.full((1, 3), 0.5)),
        ValueError,
        ("mask", "bool", "0 and 1", "0.5"),
    ),
    (
        "mask 2 (int)",
        lambda: rc.relative_attention(
            *attention_args(), mask=torch.tensor([1, 2, 0]), method="bucket"
        ),
        ValueError,
        ("mask", "0 and 1", "2"),
    ),
    (
        "mask NaN, trace",
        lambda: rc.relative_attention(*attention_args(), mask=torch.tensor([NAN]), trace=True),
        ValueError,
        ("mask", "0 and 1", "nan"),
    ),
    (
        "query_offset 2**70",
        lambda: rc.relative_attention(*attention_args(), query_offset=BIG),
        ValueError,
        ("query_offset", "<= 2**62", BIG_TEXT),
    ),
    (
        "query_offset 2**70, trace",
        lambda: rc.relative_attention(*attention_args(), query_offset=BIG, trace=True),
        ValueError,
        ("query_offset", "<= 2**62", BIG_TEXT),
    ),
    (
        "query_offset negative",
        lambda: rc.relative_attention(*attention_args(), query_offset=-1),
        ValueError,
        ("query_offset", ">= 0", "-1"),
    ),
    (
        "index query_offset 2**70",
        lambda: rc.relative_index(3, 3, 1, query_offset=BIG),
        ValueError,
        ("query_offset", str(2**62), BIG_TEXT),
    ),
    (
        "index k 2**70",
        lambda: rc.relative_index(3, 3, BIG),
        ValueError,
        ("max_relative_position", "<= 2**62", BIG_TEXT),
    ),
    (
        "index n_q 2**70",
        lambda: rc.relative_index(BIG, 3, 1),
        ValueError,
        ("n_q", "<= 2**62", BIG_TEXT),
    ),
    (
        "distances n_k 2**70",
        lambda: rc.relative_distances(3, BIG),
        ValueError,
        ("n_k", "<= 2**62", BIG_TEXT),
    ),
    (
        "logits query_offset 2**70",
        lambda: rc.relative_logits(q4(), torch.randn(3, 4), query_offset=BIG),
        ValueError,
        ("query_offset", "<= 2**62", BIG_TEXT),
    ),
    (
        "values query_offset 2**70",
        lambda: rc.relative_values(torch.rand(1, 1, 2, 2), torch.randn(3, 4), query_offset=BIG),
        ValueError,
        ("query_offset", "<= 2**62", BIG_TEXT),
    ),
    (
        "memory n 2**70",
        lambda: rc.memory_bytes("einsum", BIG, 4),
        ValueError,
        ("n (", "<= 2**62", BIG_TEXT),
    ),
    (
        "causal first 2**70",
        lambda: rc.causal_mask(3, 3, first=BIG),
        ValueError,
        ("first", "<= 2**62", BIG_TEXT),
    ),
    (
        "dropout_p 1.0",
        lambda: rc.relative_attention(*attention_args(), dropout_p=1.0),
        ValueError,
        ("dropout_p", "[0, 1)", "1.0"),
    ),
    (
        "dropout_p a string",
        lambda: rc.relative_attention(*attention_args(), dropout_p="0.1"),
        TypeError,
        ("dropout_p", "float", "'0.1'"),
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "parts"),
    [c[1:] for c in CASES + ATTENTION_CASES + FINDING_CASES],
    ids=[c[0] for c in CASES + ATTENTION_CASES + FINDING_CASES],
)
def test_error_names_argument_and_value(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


def test_message_helper_requires_every_part():
    """The matcher itself: it fails when any one part is missing."""
    pattern = message_with("n_q", "got 0")
    assert re.search(pattern, "n_q (number of queries) must be >= 1, got 0")
    assert not re.search(pattern, "n_q (number of queries) must be >= 1, got 5")
    assert not re.search(pattern, "n_k (number of keys) must be >= 1, got 0")


def test_nan_in_the_inputs_propagates_on_the_fast_path():
    """trace=False skips the pass over q, k, v that looks for NaN (as torch's attention does):
    the NaN reaches the output instead of being hidden."""
    args = replaced(2, with_value((1, 2, 3, 4), (0, 1, 2, 3), NAN))
    out = rc.relative_attention(*args)
    assert out[0, 1].isnan().any()
    assert not out[0, 0].isnan().any()


# --- the memory guard: refused before anything large is allocated ---


MACHINE = 16 * 2**30  # the guard's default limit is the device's memory: fixed here


@pytest.fixture
def machine_16_gib(monkeypatch):
    monkeypatch.setattr(memory_module, "device_memory_bytes", lambda device=None: MACHINE)


@pytest.mark.parametrize("trace", [False, True])
def test_einsum_at_60000_is_refused_with_its_estimate(machine_16_gib, trace):
    """n = 60000, method="einsum": a^K alone is n·n·d floats (921.6 GB at d = 64)."""
    n, d = 60000, 64
    q = torch.zeros(1, 1, n, d)
    table = torch.zeros(33, d)
    need = rc.attention_bytes(rc.METHODS["einsum"], (1, 1, n, n, d, d), 16, trace=trace)
    assert need >= rc.memory_bytes("einsum", n, d) > MACHINE
    watch = LargestTensor()
    with watch, pytest.raises(ValueError) as error:
        rc.relative_attention(q, q, q, table, table, method="einsum", trace=trace)
    assert watch.largest <= q.numel()
    message = str(error.value)
    for part in (
        "method 'einsum'",
        f"q (1, 1, {n}, {d})",
        f"needs about {rc.format_bytes(need)}",
        f"max_bytes = {MACHINE}",
    ):
        assert part in message


ENORMOUS_TABLES = [
    ("layer", lambda: rc.RelativeMultiHeadAttention(8, 2, 10**9)),  # 2 tables of 32 GB
    ("relative_table", lambda: rc.relative_table(10**9, 8)),  # 128 GB of float64 draws
]


@pytest.mark.parametrize(
    "call", [c[1] for c in ENORMOUS_TABLES], ids=[c[0] for c in ENORMOUS_TABLES]
)
def test_an_enormous_table_is_refused_before_allocating(machine_16_gib, call):
    watch = LargestTensor()
    with watch, pytest.raises(ValueError, match=r"needs about .* GiB, more than max_bytes"):
        call()
    assert watch.largest < 10**6


@pytest.mark.parametrize(
    "call", [c[1] for c in ENORMOUS_TABLES], ids=[c[0] for c in ENORMOUS_TABLES]
)
def test_the_table_refusal_names_the_argument_and_value(machine_16_gib, call):
    """The user passed max_relative_position = 10**9: the message should say so."""
    with pytest.raises(ValueError, match=message_with("max_relative_position", "1000000000")):
        call()


# --- found by fuzzing the public API: each a named error, or now working ---


NUMPY_CASES = [
    (
        "a numpy float where an int is needed",
        lambda: rc.causal_mask(np.float32(8)),
        TypeError,
        ("n_q", "int", "float32", "8.0"),
    ),
    (
        "max_bytes a bool",
        lambda: rc.relative_attention(*attention_args(), max_bytes=True),
        TypeError,
        ("max_bytes", "int", "bool True"),
    ),
    (
        "max_bytes negative",
        lambda: rc.relative_attention(*attention_args(), max_bytes=-1),
        ValueError,
        ("max_bytes", ">= 0", "-1"),
    ),
    (
        "max_bytes a bool, skew that cannot run",  # named before the method is looked at
        lambda: rc.relative_attention(*attention_args(2, 3), method="skew", max_bytes=True),
        TypeError,
        ("max_bytes", "bool True"),
    ),
    (
        "check_fits max_bytes a bool",
        lambda: rc.check_fits("demo", 10, max_bytes=True),
        TypeError,
        ("max_bytes", "bool True"),
    ),
    (
        "generator a string",
        lambda: rc.relative_attention(*attention_args(), dropout_p=0.5, generator="0"),
        TypeError,
        ("generator", "torch.Generator", "'0'"),
    ),
    (
        "generator a string, unfused",
        lambda: rc.relative_attention(*attention_args(), method="bucket", generator=3),
        TypeError,
        ("generator", "torch.Generator", "int 3"),
    ),
    (
        "layer dropout a string",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2, dropout="0.1"),
        TypeError,
        ("dropout", "[0, 1)", "'0.1'"),
    ),
    (
        "layer dropout None",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2, dropout=None),
        TypeError,
        ("dropout", "None"),
    ),
    (
        "layer dropout 1",
        lambda: rc.RelativeMultiHeadAttention(8, 2, 2, dropout=1.0),
        ValueError,
        ("dropout", "[0, 1)", "1.0"),
    ),
    (
        "RelativePosition.forward length a float",
        lambda: rc.RelativePosition(4, 2)(3.0, 3),
        TypeError,
        ("length_q", "int", "3.0"),
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "parts"),
    [c[1:] for c in NUMPY_CASES],
    ids=[c[0] for c in NUMPY_CASES],
)
def test_fuzzed_arguments_are_named(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


def test_numpy_scalars_are_accepted_where_python_numbers_are():
    args = attention_args()
    want = rc.relative_attention(*args, causal=True, query_offset=1, max_bytes=10**9)
    got = rc.relative_attention(
        *args, causal=np.bool_(True), query_offset=np.int64(1), max_bytes=np.int64(10**9),
        dropout_p=np.float32(0.0),
    )  # fmt: skip
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    layer = rc.RelativeMultiHeadAttention(np.int64(8), np.int32(2), np.int64(2), np.float64(0.1))
    assert (layer.hid_dim, layer.n_heads, layer.dropout.p) == (8, 2, 0.1)
    assert type(layer.max_relative_position) is int
    assert rc.relative_index(np.int16(3), np.uint8(3), np.int64(1)).tolist() == [
        [1, 2, 2],
        [0, 1, 2],
        [0, 0, 1],
    ]


@pytest.mark.parametrize("method", rc.METHOD_NAMES)
@pytest.mark.parametrize("empty", ["batch", "heads"])
def test_zero_batch_or_heads_gives_an_empty_output_on_every_method(method, empty):
    """tensor2tensor's reshape (matmul) read a -1 it could not infer from zero batch."""
    b, h = (0, 2) if empty == "batch" else (2, 0)
    q = torch.randn(b, h, 4, 3)
    v = torch.randn(b, h, 4, 5)
    table_k, table_v = torch.randn(3, 3), torch.randn(3, 5)
    out = rc.relative_attention(q, q, v, table_k, table_v, method=method)
    assert out.shape == (b, h, 4, 5)
    trace = rc.relative_attention(q, q, v, table_k, table_v, method=method, trace=True)
    assert trace.weights.shape == (b, h, 4, 4) and trace.output.shape == (b, h, 4, 5)
    logits = rc.relative_logits(q, table_k, method=method)
    assert logits.shape == (b, h, 4, 4)


def expanded(*shape, dtype=torch.float32):
    """A tensor of any size that holds one value (a stride-0 view): no memory."""
    return torch.ones((), dtype=dtype).expand(*shape)


# sizes that would need terabytes: refused by the guard before anything is allocated
HUGE_INDEX = torch.zeros(1, 1, dtype=torch.int64).expand(10**5, 10**4)  # views: no memory
HUGE_ENCODING = torch.zeros(1, 8).expand(10**7, 8)
ALLOCATING_HELPERS = [
    ("relative_distances", lambda: rc.relative_distances(10**6, 10**6), ("n_q = 1000000",)),
    ("relative_index", lambda: rc.relative_index(10**6, 10**6, 2), ("n_k = 1000000",)),
    ("causal_mask", lambda: rc.causal_mask(10**6), ("n_q = 1000000", "bool")),
    ("trailing_padding_mask", lambda: rc.trailing_padding_mask(10**12, 0), ("n = 10000",)),
    (
        "sinusoidal_encoding",
        lambda: rc.sinusoidal_encoding(10**9, 1024),
        ("n = 1000000000", "d = 1024"),
    ),
    (
        "skew_embeddings",
        lambda: rc.skew_embeddings(torch.zeros(5, 64), 10**8),
        ("length = 100000000",),
    ),
    (
        "RelativePosition.forward",
        lambda: rc.RelativePosition(4, 2).forward(10**6, 10**6),
        ("length_q = 1000000", "length_k = 1000000"),
    ),
    (
        "gather_relative",
        lambda: rc.gather_relative(torch.zeros(3, 10**4), HUGE_INDEX),
        ("gather_relative", "(100000, 10000, 10000)"),
    ),
    (
        "encoding_similarity",
        lambda: rc.encoding_similarity(HUGE_ENCODING),
        ("10000000 positions",),
    ),
    # found at the limit: each of these allocated first (8 GB to 10^12 bytes) and raised
    # torch's own error, or ran on
    (
        "relative_logits n_k",
        lambda: rc.relative_logits(torch.zeros(1, 1, 4, 8), torch.zeros(9, 8), n_k=10**9),
        ("relative_logits", "'bucket'", "n_k = 1000000000"),
    ),
    (
        "trace_matmul_logits n_k",
        lambda: rc.trace_matmul_logits(torch.zeros(1, 1, 4, 8), torch.zeros(9, 8), n_k=10**9),
        ("trace_matmul_logits", "n_k = 1000000000"),
    ),
    (
        "relative_logits banded",
        lambda: rc.relative_logits(expanded(1, 1, 10**6, 8), torch.zeros(9, 8), method="banded"),
        ("relative_logits", "'banded'", "(1, 1, 1000000, 8)"),
    ),
    (
        "combine_masks causal",
        lambda: rc.combine_masks(None, True, (1, 1, 10**6, 10**6)),
        ("combine_masks", "(1, 1, 1000000, 1000000)"),
    ),
    (
        "relative_values",
        lambda: rc.relative_values(expanded(1, 1, 10**6, 10**6), torch.zeros(9, 8)),
        ("relative_values", "(1, 1, 1000000, 1000000)"),
    ),
    (
        "masked_softmax",
        lambda: rc.masked_softmax(expanded(1, 10**6, 10**6), torch.ones((), dtype=torch.bool)),
        ("masked_softmax", "(1, 1000000, 1000000)"),
    ),
    ("skew_masked", lambda: rc.skew_masked(expanded(10**6, 10**6)), ("L = 1000000",)),
    (
        "skew_unmasked",
        lambda: rc.skew_unmasked(expanded(10**6, 2 * 10**6 - 1)),
        ("L = 1000000",),
    ),
    ("trace_skew_masked", lambda: rc.trace_skew_masked(expanded(10**6, 10**6)), ("L = 1000000",)),
    (
        "trace_skew_unmasked",
        lambda: rc.trace_skew_unmasked(expanded(10**6, 2 * 10**6 - 1)),
        ("L = 1000000",),
    ),
    (
        "absolute_to_relative_masked",
        lambda: rc.absolute_to_relative_masked(expanded(10**6, 10**6)),
        ("absolute_to_relative_masked", "L = 1000000"),
    ),
    (
        "absolute_to_relative_unmasked",
        lambda: rc.absolute_to_relative_unmasked(expanded(10**6, 10**6)),
        ("absolute_to_relative_unmasked", "L = 1000000"),
    ),
    (
        "padding_mask",
        lambda: rc.padding_mask(expanded(10**6, 10**7, dtype=torch.int64)),
        ("padding_mask", "(1000000, 10000000)"),
    ),
    (
        "relative_attention with an expanded key",  # bmm would copy 32 GB of keys
        lambda: rc.relative_attention(
            torch.zeros(1, 1, 1, 8),
            expanded(1, 1, 10**9, 8),
            expanded(1, 1, 10**9, 8),
            torch.zeros(9, 8),
            torch.zeros(9, 8),
        ),  # fmt: skip
        ("relative_attention", "k (1, 1, 1000000000, 8)"),
    ),
]


@pytest.mark.parametrize(
    ("call", "parts"),
    [c[1:] for c in ALLOCATING_HELPERS],
    ids=[c[0] for c in ALLOCATING_HELPERS],
)
def test_an_allocating_helper_refuses_terabytes_with_its_estimate(machine_16_gib, call, parts):
    watch = LargestTensor()
    with watch, pytest.raises(ValueError) as error:
        call()
    assert watch.largest < 10**6
    message = str(error.value)
    assert re.search(r"needs about [\d.]+ [GT]iB, more than max_bytes = 17179869184", message)
    for part in parts:
        assert part in message


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8])
def test_a_numeric_mask_is_refused_before_it_is_converted(dtype):
    """The guard counted the mask's conversion to bools, but ran after it: a (2048, 2048) mask
    under max_bytes = 1 MiB made three 4 MiB bool copies before the refusal."""
    n = 2048
    q, table = torch.zeros(1, 1, n, 8), torch.zeros(9, 8)
    mask = torch.ones(n, n, dtype=dtype)

    def refused():
        with pytest.raises(ValueError, match=message_with("needs about", "max_bytes = 1048576")):
            rc.relative_attention(q, q, q, table, table, mask=mask, max_bytes=2**20)

    assert peak_bytes(refused) < n * n // 64  # what the allocator handed out meanwhile


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.uint8])
def test_an_expanded_mask_of_a_trillion_cells_is_refused_by_name(dtype):
    """An expanded (10^6, 10^6) mask holds one value: its conversion touches that value, and
    the call is refused by the guard (it raised torch's allocation error for 10^12 bools)."""
    n = 10**6
    q, table = expanded(1, 1, n, 8), torch.zeros(9, 8)
    watch = LargestTensor()
    with watch, pytest.raises(ValueError, match=message_with("needs about", "max_bytes = 1048576")):
        rc.relative_attention(
            q, q, q, table, table, mask=expanded(n, n, dtype=dtype), max_bytes=2**20
        )
    assert watch.largest < 10**6


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("method", ["banded", "bucket"])
def test_an_expanded_numeric_mask_means_what_its_copy_means(method, causal):
    """A mask expanded over the queries (one key mask per row, stride 0) is converted once per
    stored value and gives exactly what its dense copy gives."""
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(2, 2, 24, 4, generator=gen) for _ in range(3))
    table = torch.randn(5, 4, generator=gen)
    keys = (torch.arange(24) % 5 != 1).to(torch.int64)
    mask = keys.expand(2, 1, 24, 24)
    got = rc.relative_attention(q, k, v, table, table, mask=mask, causal=causal, method=method)
    want = rc.relative_attention(
        q, k, v, table, table, mask=mask.contiguous(), causal=causal, method=method
    )
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    combined = rc.combine_masks(mask, causal, (2, 2, 24, 24), 0)
    assert torch.equal(combined, rc.combine_masks(mask.contiguous(), causal, (2, 2, 24, 24)))


AT_THE_LIMIT = [
    (
        "combine_masks shape of one size",
        lambda: rc.combine_masks(None, True, (1,)),
        ValueError,
        ("shape", "4 sizes", "(1,)"),
    ),
    (
        "combine_masks negative size",
        lambda: rc.combine_masks(None, True, (1, 1, -2, 2)),
        ValueError,
        ("shape", ">= 0", "-2"),
    ),
    (
        "combine_masks query_offset 2**70",
        lambda: rc.combine_masks(None, True, (1, 1, 2, 2), query_offset=2**70),
        ValueError,
        ("query_offset", "2**62", str(2**70)),
    ),
    (
        "combine_masks query_offset -5",
        lambda: rc.combine_masks(None, True, (1, 1, 2, 2), query_offset=-5),
        ValueError,
        ("query_offset", ">= 0", "-5"),
    ),
    (
        "device_memory_bytes(-1)",
        lambda: rc.device_memory_bytes(-1),
        TypeError,
        ("device", "torch.device", "int -1"),
    ),
    (
        "device_memory_bytes of a name torch does not know",
        lambda: rc.device_memory_bytes("gpu0"),
        ValueError,
        ("device", "'cpu'", "'gpu0'"),
    ),
    (
        "device_memory_bytes of a card this machine lacks",
        lambda: rc.device_memory_bytes("cuda:99"),
        ValueError,
        ("device", "CUDA device", "cuda:99"),
    ),
    (
        "choose_method device 3",
        lambda: rc.choose_method(3, 3, device=3),
        TypeError,
        ("device", "torch.device", "int 3"),
    ),
    (
        "choose_method sizes as strings",
        lambda: rc.choose_method("x", "y"),
        TypeError,
        ("n_q", "int", "'x'"),
    ),
    (
        "choose_method n_k 0",
        lambda: rc.choose_method(3, 0),
        ValueError,
        ("n_k", ">= 1", "0"),
    ),
    (
        "choose_method trace a string",
        lambda: rc.choose_method(3, 3, trace="yes"),
        TypeError,
        ("trace", "bool", "'yes'"),
    ),
    (
        "format_bytes of a tensor",
        lambda: rc.format_bytes(torch.tensor([])),
        TypeError,
        ("count", "number", "Tensor"),
    ),
    ("format_bytes nan", lambda: rc.format_bytes(NAN), ValueError, ("count", ">= 0", "nan")),
    ("format_bytes -1", lambda: rc.format_bytes(-1), ValueError, ("count", ">= 0", "-1")),
    (
        "check_fits need -1",
        lambda: rc.check_fits("w", -1, 10),
        ValueError,
        ("need", ">= 0", "-1"),
    ),
    (
        "attention_bytes method a number",
        lambda: rc.attention_bytes(3, (1, 1, 4, 4, 4, 4), 2),
        TypeError,
        ("method", "Method", "int"),
    ),
    (
        "attention_bytes shape of three sizes",
        lambda: rc.attention_bytes("banded", (1, 1, 4), 2),
        ValueError,
        ("shape", "6 sizes", "(1, 1, 4)"),
    ),
    (
        "attention_bytes negative n_q",
        lambda: rc.attention_bytes("banded", (1, 1, -4, 4, 4, 4), 2),
        ValueError,
        ("shape", ">= 0", "-4"),
    ),
    (
        "attention_bytes negative k",
        lambda: rc.attention_bytes("banded", (1, 1, 4, 4, 4, 4), -2),
        ValueError,
        ("max_relative_position", ">= 0", "-2"),
    ),
    (
        "check_fits need a float",
        lambda: rc.check_fits("w", 1.5, 10),
        TypeError,
        ("need", "int", "1.5"),
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "parts"),
    [c[1:] for c in AT_THE_LIMIT],
    ids=[c[0] for c in AT_THE_LIMIT],
)
def test_junk_arguments_at_the_limit_are_named(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


@pytest.mark.parametrize("method", ["bucket", "banded"])
@pytest.mark.parametrize("trace", [False, True])
def test_a_max_bytes_above_the_device_memory_reaches_every_inner_guard(monkeypatch, method, trace):
    """max_bytes overrides the device's memory for the whole call: the mask's and the
    softmax's own guards take the caller's limit, not the (here tiny) device's."""
    gen = torch.Generator().manual_seed(5)
    q, k, v = (torch.randn(1, 2, 16, 4, generator=gen) for _ in range(3))
    table = torch.randn(5, 4, generator=gen)
    options = dict(mask=(torch.arange(16) % 4 != 0).float(), causal=True, trace=trace)

    def outputs():
        out = rc.relative_attention(
            q, k, v, table, table, **options, method=method, max_bytes=10**9
        )
        scheme = make_scheme("t5", 2, 4)(
            q, k, v, mask=options["mask"], causal=True, max_bytes=10**9
        )
        return (out.output if trace else out), scheme[0]

    want = outputs()
    monkeypatch.setattr(memory_module, "device_memory_bytes", lambda device=None: 1000)
    for got, expected in zip(outputs(), want, strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("method", ["auto", "banded"])
@pytest.mark.parametrize("options", [{}, {"causal": True}, {"return_weights": True}])
def test_finite_inputs_that_overflow_are_refused_in_words_on_the_fast_path(method, options):
    """q = k = v = 1e30 in float32: each logit q·k = 2e60 is past float32's largest number.
    The fast path says so, as the traced path refuses its non-finite logits, instead of
    returning NaN; the same call in float64 is exact (the weights are uniform, z = v)."""
    big = torch.full((1, 2, 5, 2), 1e30)
    table = torch.zeros(3, 2)
    with pytest.raises(ValueError, match=message_with("overflows torch.float32", "1.0e+30")):
        rc.relative_attention(big, big, big, table, table, method=method, **options)
    with pytest.raises(ValueError, match="logits must be finite"):
        rc.relative_attention(big, big, big, table, table, trace=True)
    wide = big.double()
    z = rc.relative_attention(wide, wide, wide, table.double(), table.double(), method=method)
    torch.testing.assert_close(z, wide)
