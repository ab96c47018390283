"""Plain attention (relpos_core.basics and relpos_core.multihead): each function against its
definition written as Python loops, against torch's own attention, and against the attention
introduction notebook's printed numbers."""

import math
import re

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

import relpos_core.guard as guard
from relpos_core.basics import (
    additive_scores,
    create_look_ahead_mask,
    create_padding_mask,
    dot_product_scores,
    scaled_dot_product_attention,
)
from relpos_core.masks import causal_mask, padding_mask
from relpos_core.multihead import (
    MultiHeadAttention,
    merge_heads,
    score_spread,
    softmax_saturation,
    split_heads,
)
from tests.largest_tensor import LargestTensor

sizes = st.integers(1, 5)


def randn(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def matrices(rows: int, columns: int, elements: st.SearchStrategy) -> st.SearchStrategy:
    """Lists of ``rows`` lists of ``columns`` elements."""
    row = st.lists(elements, min_size=columns, max_size=columns)
    return st.lists(row, min_size=rows, max_size=rows)


def message_with(*parts: str) -> str:
    """A regex that matches a message containing every part, in any order."""
    return "(?s)" + "".join(f"(?=.*{re.escape(p)})" for p in parts)


# --- the definitions, one scalar at a time ---


def additive_by_loops(s, h, w_a, u_a, v_a):
    b, n_q, n_k = s.shape[0], s.shape[1], h.shape[1]
    e = torch.empty(b, n_q, n_k, dtype=s.dtype)
    for n in range(b):
        for i in range(n_q):
            for j in range(n_k):
                e[n, i, j] = v_a @ torch.tanh(w_a @ s[n, i] + u_a @ h[n, j])
    return e


def attention_by_loops(q, k, v, hidden=None):
    """(n_q, d), (n_k, d), (n_k, e), bool (n_q, n_k) -> weights, output; a row with every key
    hidden gets zero weights, as the module documents."""
    n_q, n_k = q.shape[0], k.shape[0]
    weights = torch.zeros(n_q, n_k, dtype=q.dtype)
    for i in range(n_q):
        visible = [j for j in range(n_k) if hidden is None or not hidden[i, j]]
        logits = {j: float(q[i] @ k[j]) / math.sqrt(q.shape[1]) for j in visible}
        top = max(logits.values(), default=0.0)
        total = sum(math.exp(x - top) for x in logits.values())
        for j, x in logits.items():
            weights[i, j] = math.exp(x - top) / total
    output = torch.stack([sum(weights[i, j] * v[j] for j in range(n_k)) for i in range(n_q)])
    return weights, output


# --- the notebook's worked examples ---

KEYS = torch.tensor([[10.0, 0, 0], [0, 10, 0], [0, 0, 10], [0, 0, 10]])
VALUES = torch.tensor([[1.0, 0], [10, 0], [100, 5], [1000, 6]])
QUERIES = torch.tensor([[0.0, 0, 10], [0, 10, 0], [10, 10, 0]])


def test_the_notebooks_three_queries():
    """The notebook prints these weights and outputs for its (4, 3) keys and (4, 2) values."""
    result = scaled_dot_product_attention(QUERIES, KEYS, VALUES)
    want_weights = torch.tensor([[0, 0, 0.5, 0.5], [0, 1, 0, 0], [0.5, 0.5, 0, 0]])
    want_output = torch.tensor([[550, 5.5], [10, 0], [5.5, 0]])
    torch.testing.assert_close(result.weights, want_weights)
    torch.testing.assert_close(result.output, want_output)
    torch.testing.assert_close(result.logits, QUERIES @ KEYS.T / math.sqrt(3))


def test_the_notebooks_padding_mask():
    mask = create_padding_mask([[1, 21, 777, 0, 0]])
    assert mask.shape == (1, 1, 1, 5) and mask.dtype == torch.float32
    assert mask.flatten().tolist() == [0, 0, 0, 1, 1]


def test_the_look_ahead_mask_for_three():
    assert create_look_ahead_mask(3).tolist() == [[0, 1, 1], [0, 0, 1], [0, 0, 0]]


# --- additive (Bahdanau) scores ---


@given(b=sizes, n_q=sizes, n_k=sizes, d_s=sizes, d_h=sizes, d_a=sizes, seed=st.integers(0, 99))
def test_additive_scores_are_the_definition(b, n_q, n_k, d_s, d_h, d_a, seed):
    s, h = randn(b, n_q, d_s, seed=seed), randn(b, n_k, d_h, seed=seed + 1)
    w_a, u_a, v_a = randn(d_a, d_s, seed=seed + 2), randn(d_a, d_h, seed=seed + 3), randn(d_a)
    e = additive_scores(s, h, w_a, u_a, v_a)
    assert e.shape == (b, n_q, n_k)
    torch.testing.assert_close(e, additive_by_loops(s, h, w_a, u_a, v_a))


def test_additive_scores_depend_on_the_query_only_through_w_a():
    """With W_a = 0 every decoder state scores the keys alike."""
    s, h = randn(2, 3, 4), randn(2, 5, 6, seed=1)
    e = additive_scores(s, h, torch.zeros(7, 4, dtype=torch.float64), randn(7, 6), randn(7))
    torch.testing.assert_close(e, e[:, :1].expand_as(e))


# --- dot-product scores ---


@given(lead=st.lists(st.integers(1, 3), max_size=2), n_q=sizes, n_k=sizes, d=sizes)
def test_dot_product_scores_are_the_definition(lead, n_q, n_k, d):
    q, k = randn(*lead, n_q, d), randn(*lead, n_k, d, seed=1)
    scaled, plain = dot_product_scores(q, k), dot_product_scores(q, k, scaled=False)
    flat_q, flat_k = q.reshape(-1, n_q, d), k.reshape(-1, n_k, d)
    want = torch.tensor(
        [
            [[float(flat_q[n, i] @ flat_k[n, j]) for j in range(n_k)] for i in range(n_q)]
            for n in range(flat_q.shape[0])
        ],
        dtype=torch.float64,
    ).reshape(*lead, n_q, n_k)
    torch.testing.assert_close(plain, want)
    torch.testing.assert_close(scaled, want / math.sqrt(d))


def test_dot_product_scores_broadcast_the_leading_axes():
    q, k = randn(2, 3, 4, 5), randn(1, 3, 6, 5)  # keys shared by the batch
    assert dot_product_scores(q, k).shape == (2, 3, 4, 6)


# --- scaled dot-product attention ---


@given(n_q=sizes, n_k=sizes, d=sizes, e=sizes, seed=st.integers(0, 99), data=st.data())
def test_attention_is_the_definition_with_any_mask(n_q, n_k, d, e, seed, data):
    q, k, v = randn(n_q, d, seed=seed), randn(n_k, d, seed=seed + 1), randn(n_k, e, seed=seed + 2)
    hidden = torch.tensor(data.draw(matrices(n_q, n_k, st.booleans())))
    result = scaled_dot_product_attention(q, k, v, hidden.double())
    weights, output = attention_by_loops(q, k, v, hidden)
    torch.testing.assert_close(result.weights, weights)
    torch.testing.assert_close(result.output, output)
    assert bool((result.weights[hidden] == 0).all())  # exactly 0, not e^-1e9


@pytest.mark.parametrize("masked", [False, True])
def test_attention_matches_torchs_scaled_dot_product_attention(masked):
    """Cross-attention (n_q = 5, n_k = 7) with a padding mask; torch's mask is True = attend."""
    q, k, v = randn(2, 3, 5, 8), randn(2, 3, 7, 8, seed=1), randn(2, 3, 7, 4, seed=2)
    tokens = torch.tensor([[4, 9, 2, 7, 1, 0, 0], [3, 3, 0, 0, 0, 0, 0]])
    mask = create_padding_mask(tokens) if masked else None
    result = scaled_dot_product_attention(q, k, v, mask)
    allowed = None if mask is None else mask == 0
    torch.testing.assert_close(result.output, F.scaled_dot_product_attention(q, k, v, allowed))


def test_the_minus_1e9_trick_gives_the_same_numbers_where_a_key_is_visible():
    """The notebook adds mask * -1e9 to the logits; hidden weights then underflow to 0."""
    q, k, v = randn(4, 3, dtype=torch.float32), randn(4, 3, seed=1), randn(4, 2, seed=2)
    k, v = k.float(), v.float()
    mask = create_look_ahead_mask(4)
    result = scaled_dot_product_attention(q, k, v, mask)
    notebook = torch.softmax(q @ k.T / math.sqrt(3) + mask * -1e9, dim=-1)
    torch.testing.assert_close(result.weights, notebook)


def test_a_query_with_every_key_hidden_gets_zero_weights_and_output():
    q, k, v = randn(2, 3), randn(3, 3, seed=1), randn(3, 2, seed=2)
    mask = torch.tensor([[1.0, 1, 1], [0, 1, 0]])
    result = scaled_dot_product_attention(q, k, v, mask)
    assert result.weights[0].tolist() == [0, 0, 0] and result.output[0].tolist() == [0, 0]
    torch.testing.assert_close(result.weights[1].sum(), torch.tensor(1.0, dtype=torch.float64))


def test_attention_gradients_are_right_and_skip_hidden_keys():
    q, k, v = (randn(1, 3, 4, seed=s).requires_grad_() for s in range(3))
    mask = create_look_ahead_mask(3)
    assert torch.autograd.gradcheck(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, mask).output, (q, k, v)
    )
    scaled_dot_product_attention(q, k, v, mask).output[0, 0].sum().backward()
    assert bool((v.grad[0, 1:] == 0).all())  # query 0 sees only key 0


@given(tokens=sizes.flatmap(lambda b: matrices(b, 4, st.integers(0, 3))), pad_id=st.integers(0, 3))
def test_padding_mask_is_the_complement_of_the_allowed_mask(tokens, pad_id):
    mask = create_padding_mask(tokens, pad_id)
    allowed = padding_mask(torch.tensor(tokens), pad_id)
    assert torch.equal(mask == 0, allowed)


@given(n=st.integers(1, 12))
def test_look_ahead_mask_is_the_complement_of_the_causal_mask(n):
    mask = create_look_ahead_mask(n)
    assert mask.tolist() == [[float(j > i) for j in range(n)] for i in range(n)]
    assert torch.equal(mask == 0, causal_mask(n))


# --- heads ---


@given(b=sizes, n=sizes, heads=sizes, c=sizes)
def test_split_heads_is_the_definition_and_merge_undoes_it(b, n, heads, c):
    x = randn(b, n, heads * c)
    split = split_heads(x, heads)
    assert split.shape == (b, heads, n, c)
    for h in range(heads):
        torch.testing.assert_close(split[:, h], x[:, :, h * c : (h + 1) * c])
    assert torch.equal(merge_heads(split), x)


def copy_into_torch(mha: MultiHeadAttention) -> torch.nn.MultiheadAttention:
    ref = torch.nn.MultiheadAttention(mha.d_model, mha.heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.w_q.weight, mha.w_k.weight, mha.w_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([mha.w_q.bias, mha.w_k.bias, mha.w_v.bias]))
        ref.out_proj.weight.copy_(mha.w_o.weight)
        ref.out_proj.bias.copy_(mha.w_o.bias)
    return ref.eval()


def test_multi_head_self_attention_matches_torch_with_a_look_ahead_mask():
    mha = MultiHeadAttention(12, 3, seed=4)
    x = randn(2, 6, 12, dtype=torch.float32)
    trace = mha(x, mask=create_look_ahead_mask(6))
    out, weights = copy_into_torch(mha)(
        x, x, x, attn_mask=create_look_ahead_mask(6).bool(), average_attn_weights=False
    )  # torch's attn_mask: True = not allowed, as ours
    torch.testing.assert_close(trace.output, out)
    torch.testing.assert_close(trace.weights, weights)


def test_multi_head_cross_attention_matches_torch_with_a_padding_mask():
    mha = MultiHeadAttention(8, 2, generator=torch.Generator().manual_seed(1))
    x_q, x_kv = randn(2, 3, 8, dtype=torch.float32), randn(2, 5, 8, seed=1, dtype=torch.float32)
    tokens = torch.tensor([[5, 6, 7, 0, 0], [1, 0, 0, 0, 0]])
    trace = mha(x_q, x_kv, create_padding_mask(tokens))
    out, _ = copy_into_torch(mha)(x_q, x_kv, x_kv, key_padding_mask=tokens == 0)
    torch.testing.assert_close(trace.output, out)


def test_the_trace_lists_every_step_in_order_with_its_shape():
    trace = MultiHeadAttention(6, 2, seed=0)(randn(1, 4, 6, dtype=torch.float32))
    shapes = {step.name: step.shape for step in trace.steps()}
    assert shapes == {
        "q": (1, 4, 6), "k": (1, 4, 6), "v": (1, 4, 6),
        "q_heads": (1, 2, 4, 3), "k_heads": (1, 2, 4, 3), "v_heads": (1, 2, 4, 3),
        "logits": (1, 2, 4, 4), "weights": (1, 2, 4, 4), "head_outputs": (1, 2, 4, 3),
        "concat": (1, 4, 6), "output": (1, 4, 6),
    }  # fmt: skip
    torch.testing.assert_close(trace.concat, merge_heads(trace.head_outputs))


def test_multi_head_weights_come_from_the_seed_not_the_global_rng():
    before = torch.random.get_rng_state()
    a, b, c = (MultiHeadAttention(8, 2, seed=s) for s in (3, 3, 4))
    assert torch.equal(torch.random.get_rng_state(), before)
    assert torch.equal(a.w_q.weight, b.w_q.weight) and not torch.equal(a.w_q.weight, c.w_q.weight)


# --- why the 1 / sqrt(d_k) ---


def test_score_spread_grows_as_sqrt_d_k_and_the_scaled_score_does_not():
    spread = score_spread([1, 4, 64, 256], 20000, torch.Generator().manual_seed(1))
    assert spread.d_k == (1, 4, 64, 256)
    torch.testing.assert_close(
        spread.unscaled_std, torch.tensor([1.0, 2, 8, 16], dtype=torch.float64), rtol=0.03, atol=0
    )
    torch.testing.assert_close(
        spread.scaled_std, torch.ones(4, dtype=torch.float64), rtol=0.03, atol=0
    )


def test_unscaled_softmax_saturates_and_scaled_does_not():
    """Scaled, the logits have unit variance at every d_k; from d_k = 16 on they are close to
    N(0, 1) (at d_k = 1, q k is a product of two normals), so the max weight stops moving."""
    sat = softmax_saturation([1, 16, 64, 256], 10, 3000, torch.Generator().manual_seed(2))
    unscaled, scaled = sat.unscaled_max_weight.tolist(), sat.scaled_max_weight.tolist()
    assert unscaled == sorted(unscaled) and unscaled[-1] > 0.9
    assert max(scaled[1:]) - min(scaled[1:]) < 0.02 and max(scaled) < 0.4
    assert unscaled[0] == scaled[0]  # d_k = 1: the scale is 1


# --- errors a user can cause ---

ERRORS = [
    (
        "heads not a divisor",
        lambda: split_heads(torch.zeros(1, 2, 6), 4),
        ValueError,
        ("heads", "d_model = 6", "1, 2, 3, 6", "4"),
    ),
    ("heads 0", lambda: split_heads(torch.zeros(1, 2, 6), 0), ValueError, ("heads", ">= 1", "0")),
    ("layer heads", lambda: MultiHeadAttention(10, 4), ValueError, ("heads", "10", "4")),
    ("merge rank", lambda: merge_heads(torch.zeros(2, 3, 4)), ValueError, ("x", "4", "(2, 3, 4)")),
    ("look-ahead n", lambda: create_look_ahead_mask(0), ValueError, ("n", ">= 1", "0")),
    (
        "padding rank",
        lambda: create_padding_mask([1, 0]),
        ValueError,
        ("tokens", "2 dimensions", "(2,)"),
    ),
    ("padding floats", lambda: create_padding_mask([[1.5]]), TypeError, ("tokens", "float")),
    (
        "q and k widths",
        lambda: dot_product_scores(torch.zeros(2, 3), torch.zeros(2, 4)),
        ValueError,
        ("q and k", "(2, 3)", "(2, 4)"),
    ),
    (
        "leading axes",
        lambda: dot_product_scores(torch.zeros(2, 1, 3), torch.zeros(3, 1, 3)),
        ValueError,
        ("broadcast", "(2, 1, 3)", "(3, 1, 3)"),
    ),
    (
        "v rows",
        lambda: scaled_dot_product_attention(
            torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(3, 2)
        ),
        ValueError,
        ("v", "n_k = 4", "(3, 2)"),
    ),
    (
        "mask values",
        lambda: scaled_dot_product_attention(*(torch.zeros(2, 2),) * 3, torch.full((2, 2), 0.5)),
        ValueError,
        ("mask", "0 and 1", "1 = hidden"),
    ),
    (
        "mask shape",
        lambda: scaled_dot_product_attention(*(torch.zeros(2, 2),) * 3, torch.zeros(3, 2)),
        ValueError,
        ("mask", "(3, 2)", "(2, 2)"),
    ),
    (
        "mask grows the logits",
        lambda: scaled_dot_product_attention(*(torch.zeros(2, 2),) * 3, torch.zeros(4, 2, 2)),
        ValueError,
        ("mask", "(4, 2, 2)"),
    ),
    (
        "nan query",
        lambda: scaled_dot_product_attention(
            torch.full((1, 2), math.nan), *(torch.zeros(1, 2),) * 2
        ),
        ValueError,
        ("q", "finite"),
    ),
    (
        "w_a shape",
        lambda: additive_scores(
            torch.zeros(1, 2, 3),
            torch.zeros(1, 4, 5),
            torch.zeros(6, 5),
            torch.zeros(6, 5),
            torch.zeros(6),
        ),
        ValueError,
        ("w_a", "(6, 3)", "(6, 5)"),
    ),
    (
        "additive batch",
        lambda: additive_scores(
            torch.zeros(1, 2, 3),
            torch.zeros(2, 4, 3),
            torch.zeros(1, 3),
            torch.zeros(1, 3),
            torch.zeros(1),
        ),
        ValueError,
        ("batch", "(1, 2, 3)", "(2, 4, 3)"),
    ),
    (
        "layer input width",
        lambda: MultiHeadAttention(4, 2)(torch.zeros(1, 3, 5)),
        ValueError,
        ("x_q", "d_model = 4", "(1, 3, 5)"),
    ),
    (
        "layer batch",
        lambda: MultiHeadAttention(4, 2)(torch.zeros(1, 3, 4), torch.zeros(2, 3, 4)),
        ValueError,
        ("x_q and x_kv", "batch", "1, 2"),
    ),
    ("seed", lambda: MultiHeadAttention(4, 2, seed=-1), ValueError, ("seed", ">= 0", "-1")),
    ("spread d_ks", lambda: score_spread([], 10, torch.Generator()), ValueError, ("d_ks", "[]")),
    (
        "spread d_k",
        lambda: score_spread([4, 0], 10, torch.Generator()),
        ValueError,
        ("d_k", ">= 1", "0"),
    ),
    ("spread rng", lambda: score_spread([4], 10, None), TypeError, ("generator", "None")),
    (
        "saturation n",
        lambda: softmax_saturation([4], 0, 10, torch.Generator()),
        ValueError,
        ("n", ">= 1", "0"),
    ),
]


@pytest.mark.parametrize("call, error, parts", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors_name_the_argument_the_allowed_values_and_the_value(call, error, parts):
    with pytest.raises(error, match=message_with(*parts)):
        call()


MACHINE = 16 * 2**30  # the guard's default limit is the device's memory: fixed here

ENORMOUS = [
    ("look-ahead mask", lambda: create_look_ahead_mask(10**6)),  # 4 TB of float32
    ("attention", lambda: scaled_dot_product_attention(*(torch.zeros(10**5, 1),) * 3)),  # 40 GB
    ("scores", lambda: dot_product_scores(torch.zeros(10**5, 1), torch.zeros(10**5, 1))),
    (
        "additive",
        lambda: additive_scores(
            torch.zeros(1, 10**4, 1),
            torch.zeros(1, 10**4, 1),
            torch.zeros(64, 1),
            torch.zeros(64, 1),
            torch.zeros(64),
        ),
    ),
    ("layer", lambda: MultiHeadAttention(10**5, 1)),
]


@pytest.mark.parametrize("call", [c[1] for c in ENORMOUS], ids=[c[0] for c in ENORMOUS])
def test_an_enormous_call_is_refused_before_allocating(monkeypatch, call):
    monkeypatch.setattr(guard, "device_memory_bytes", lambda device=None: MACHINE)
    watch = LargestTensor()
    with watch, pytest.raises(ValueError, match=r"needs about .*, more than max_bytes"):
        call()
    assert watch.largest <= 10**6
