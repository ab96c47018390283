"""DeBERTa's disentangled attention against transformers' ``DebertaV2``
``DisentangledSelfAttention`` (the reference code, a test-only dependency), forward and
backward, with and without log buckets, with its own position projections and sharing the
content ones (``share_att_key``); and against the paper's formula written as a loop over i, j.

    A_ij = (q_i · k_j + q_i · P^K[c(i, j)] + k_j · P^Q[c(i, j)]) / sqrt(3 d)
    c(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1)
"""

from __future__ import annotations

import math
import re
import warnings

import pytest
import torch
from transformers import DebertaV2Config

with warnings.catch_warnings():  # transformers scripts two helpers with torch.jit.script
    warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)
    from transformers.models.deberta_v2 import modeling_deberta_v2
    from transformers.models.deberta_v2.modeling_deberta_v2 import (
        DisentangledSelfAttention,
        make_log_bucket_position,
    )

from relpos_core.schemes import make_scheme
from relpos_core.schemes.deberta import DeBERTa, log_bucket, relative_rows
from tests.schemes.plain import (
    EXACT,
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    qkv,
)

F64 = torch.float64
REFERENCE = {"rtol": 1e-10, "atol": 1e-12}  # float64 on both sides, summed in other orders
SETTINGS = [  # (position_buckets, max_relative_positions): buckets, no buckets, DeBERTa-v3's
    (8, 16),
    (0, 4),
    (256, 512),
]


def make(heads=3, d=4, buckets=8, top=16, seed=0) -> DeBERTa:
    scheme = make_scheme(
        "deberta", heads, d, seed=seed, position_buckets=buckets, max_relative_positions=top
    )
    return scheme.double()


def reference_layer(scheme: DeBERTa, share: bool, seed: int = 5) -> DisentangledSelfAttention:
    """transformers' layer with the scheme's relative projections (or, sharing, the scheme
    tied to the layer's own content projections), in float64, dropout off."""
    config = DebertaV2Config(
        hidden_size=scheme.d_model,
        num_attention_heads=scheme.heads,
        relative_attention=True,
        position_buckets=scheme.position_buckets or -1,
        max_relative_positions=scheme.max_relative_positions,
        pos_att_type=["c2p", "p2c"],
        share_att_key=share,
        attention_probs_dropout_prob=0.0,
        hidden_dropout_prob=0.0,
    )
    torch.manual_seed(seed)
    layer = DisentangledSelfAttention(config).double().eval()
    if share:
        scheme.share_projections(layer.key_proj, layer.query_proj)
    else:
        layer.pos_key_proj.load_state_dict(scheme.pos_key_proj.state_dict())
        layer.pos_query_proj.load_state_dict(scheme.pos_query_proj.state_dict())
    return layer


@pytest.fixture
def float64_scale(monkeypatch):
    """transformers takes sqrt(3 d) in float32 (``scaled_size_sqrt``) whatever the inputs'
    dtype, a relative error near 3e-8 in every float64 logit: the same root in float64 here."""

    def scaled_size_sqrt(layer: torch.Tensor, scale_factor: int) -> torch.Tensor:
        return torch.sqrt(torch.tensor(layer.size(-1), dtype=F64) * scale_factor)

    monkeypatch.setattr(modeling_deberta_v2, "scaled_size_sqrt", scaled_size_sqrt)


def heads_of(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(b, n, h·d) -> (b, h, n, d)."""
    b, n, _ = x.shape
    return x.reshape(b, n, heads, -1).transpose(1, 2)


@pytest.mark.parametrize(("buckets", "top"), SETTINGS)
@pytest.mark.parametrize("share", [False, True])
@pytest.mark.usefixtures("float64_scale")
def test_equals_transformers_forward_and_backward(buckets, top, share):
    """Weights and outputs equal the reference layer's on a random sequence longer than the
    span (so the table's ends are clamped) and the gradients of the input, the relative
    embeddings and every projection equal it too."""
    heads, d, n = 2, 4, 40 if buckets != 256 else 12
    scheme = make(heads, d, buckets, top, seed=1)
    layer = reference_layer(scheme, share)
    x = torch.randn(2, n, heads * d, dtype=F64, generator=torch.Generator().manual_seed(2))
    x_ref = x.clone().requires_grad_()
    x_ours = x.clone().requires_grad_()
    rel = scheme.rel_embeddings
    context, probs = layer(
        x_ref, torch.ones(2, 1, n, n, dtype=torch.bool), output_attentions=True,
        rel_embeddings=rel,
    )  # fmt: skip
    q, k, v = (heads_of(proj(x_ours), heads) for proj in
               (layer.query_proj, layer.key_proj, layer.value_proj))  # fmt: skip
    z, alpha = scheme(q, k, v)
    torch.testing.assert_close(alpha, probs, **REFERENCE)
    torch.testing.assert_close(z.transpose(1, 2).reshape(2, n, -1), context, **REFERENCE)

    # the gradients of the input, P and every projection; unshared, the scheme's own
    # pos_key_proj and pos_query_proj stand for the layer's
    content = [p for name, p in layer.named_parameters() if not name.startswith("pos_")]
    pos_ref = (
        [] if share else [*layer.pos_key_proj.parameters(), *layer.pos_query_proj.parameters()]
    )
    pos_ours = (
        [] if share else [*scheme.pos_key_proj.parameters(), *scheme.pos_query_proj.parameters()]
    )
    want = torch.autograd.grad(context.square().sum(), [x_ref, rel, *content, *pos_ref])
    ours = z.transpose(1, 2).reshape(2, n, -1)
    got = torch.autograd.grad(ours.square().sum(), [x_ours, rel, *content, *pos_ours])
    assert len(got) == 2 + 6 + (0 if share else 4)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, **REFERENCE)


@pytest.mark.parametrize(("buckets", "top"), [(32, 128), (256, 512), (8, 16), (4, 4), (6, 10)])
def test_log_buckets_equal_transformers(buckets, top):
    r = torch.arange(-5000, 5001)
    want = make_log_bucket_position(r, buckets, top).to(torch.int64)
    assert torch.equal(log_bucket(r, buckets, top), want)


@pytest.mark.parametrize(("buckets", "top"), SETTINGS)
def test_rows_are_the_clamped_bucket_of_i_minus_j(buckets, top):
    """c(i, j) for a query block at an offset: bucket(i - j) + span, clamped, by a loop."""
    span = buckets or top
    n_q, n_k, offset = 5, 700, 600
    rows = relative_rows(n_q, n_k, offset, buckets, top)
    for i in range(n_q):
        for j in range(0, n_k, 7):
            r = offset + i - j
            b = r if not buckets else int(make_log_bucket_position(torch.tensor(r), buckets, top))
            assert int(rows[i, j]) == min(max(b + span, 0), 2 * span - 1)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
def test_three_terms_equal_the_paper(n_q, n_k, offset, causal):
    """Every term by a loop over (i, j), at queries placed at an offset among the keys."""
    scheme = make(buckets=4, top=5)  # span 4, |i - j| up to 8 here: buckets and clamps both
    q, k, v = qkv(n_q, n_k)
    pos_key, pos_query = (t.detach() for t in scheme.position_vectors(F64))
    root = math.sqrt(3 * q.shape[-1])
    shape = (2, 3, n_q, n_k)

    def row(i, j):
        r = offset + i - j
        b = int(make_log_bucket_position(torch.tensor(r), 4, 5))
        return min(max(b + 4, 0), 7)

    want = {
        "content": cell_loop(shape, lambda b, h, i, j: float(q[b, h, i] @ k[b, h, j]) / root),
        "c2p": cell_loop(
            shape, lambda b, h, i, j: float(q[b, h, i] @ pos_key[h, row(i, j)]) / root
        ),
        "p2c": cell_loop(
            shape, lambda b, h, i, j: float(k[b, h, j] @ pos_query[h, row(i, j)]) / root
        ),
    }
    assert_scheme_matches(scheme, q, k, v, want, causal=causal, offset=offset)


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(make(buckets=4, top=6), 9, causal)


def test_gradients():
    names = assert_gradients(make(heads=2, d=2, buckets=4, top=5), 3, 4, 1, True)
    assert names == [
        "rel_embeddings",
        "pos_key_proj.weight",
        "pos_key_proj.bias",
        "pos_query_proj.weight",
        "pos_query_proj.bias",
    ]


@pytest.mark.parametrize(
    ("buckets", "top", "words"),
    [
        (3, 16, "position_buckets must be 0 or an even number >= 4, got 3"),
        (8, 5, "max_relative_positions must exceed position_buckets / 2 + 1 = 5"),
        (0, 5000, "at most 4096, got 5000"),
        (-2, 16, "position_buckets"),
    ],
)
def test_settings_out_of_range_are_named(buckets, top, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        DeBERTa(2, 4, position_buckets=buckets, max_relative_positions=top)


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = False  # q_i · P^K and k_j · P^Q read the query and the key


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    span = int(settings["position_buckets"]) or int(settings["max_relative_positions"])
    d_model = h * d
    return 2 * span * d_model + 2 * (d_model * d_model + d_model)  # P, W^K_r, W^Q_r with biases
