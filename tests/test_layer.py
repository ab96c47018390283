"""RelativeMultiHeadAttention against seed 001's widely copied PyTorch layer.

The reference below is seed 001's code with one change: ``max_relative_position`` is an argument
instead of the hard-coded 2 (and ``torch.LongTensor(...)`` on an already-long tensor is dropped).
Our layer runs method "auto" (the fused banded path, with its own backward) unless told otherwise.
"""

import pytest
import torch
from torch import nn

from relpos_core import (
    ATTENTION_METHODS,
    RelativeMultiHeadAttention,
    RelativePosition,
    causal_mask,
    relative_attention,
)

HID, HEADS = 16, 4


class SeedRelativePosition(nn.Module):
    def __init__(self, num_units, max_relative_position):
        super().__init__()
        self.num_units = num_units
        self.max_relative_position = max_relative_position
        self.embeddings_table = nn.Parameter(torch.Tensor(max_relative_position * 2 + 1, num_units))
        nn.init.xavier_uniform_(self.embeddings_table)

    def forward(self, length_q, length_k):
        range_vec_q = torch.arange(length_q)
        range_vec_k = torch.arange(length_k)
        distance_mat = range_vec_k[None, :] - range_vec_q[:, None]
        distance_mat_clipped = torch.clamp(
            distance_mat, -self.max_relative_position, self.max_relative_position
        )
        final_mat = distance_mat_clipped + self.max_relative_position
        embeddings = self.embeddings_table[final_mat]
        return embeddings


class SeedMultiHeadAttentionLayer(nn.Module):
    def __init__(self, hid_dim, n_heads, dropout, device, max_relative_position):
        super().__init__()
        assert hid_dim % n_heads == 0
        self.hid_dim = hid_dim
        self.n_heads = n_heads
        self.head_dim = hid_dim // n_heads
        self.max_relative_position = max_relative_position
        self.relative_position_k = SeedRelativePosition(self.head_dim, self.max_relative_position)
        self.relative_position_v = SeedRelativePosition(self.head_dim, self.max_relative_position)
        self.fc_q = nn.Linear(hid_dim, hid_dim)
        self.fc_k = nn.Linear(hid_dim, hid_dim)
        self.fc_v = nn.Linear(hid_dim, hid_dim)
        self.fc_o = nn.Linear(hid_dim, hid_dim)
        self.dropout = nn.Dropout(dropout)
        self.scale = torch.sqrt(torch.FloatTensor([self.head_dim])).to(device)

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]
        len_k = key.shape[1]
        len_q = query.shape[1]
        len_v = value.shape[1]
        query = self.fc_q(query)
        key = self.fc_k(key)
        value = self.fc_v(value)
        r_q1 = query.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        r_k1 = key.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        attn1 = torch.matmul(r_q1, r_k1.permute(0, 1, 3, 2))
        r_k2 = self.relative_position_k(len_q, len_k)
        attn2 = torch.einsum("bhqe,qke->bhqk", r_q1, r_k2)
        attn = (attn1 + attn2) / self.scale
        if mask is not None:
            attn = attn.masked_fill(mask == 0, -1e10)
        attn = self.dropout(torch.softmax(attn, dim=-1))
        r_v1 = value.view(batch_size, -1, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        weight1 = torch.matmul(attn, r_v1)
        r_v2 = self.relative_position_v(len_q, len_v)
        weight2 = torch.einsum("bhav,ave->bhae", attn, r_v2)
        x = weight1 + weight2
        x = x.permute(0, 2, 1, 3).contiguous()
        x = x.view(batch_size, -1, self.hid_dim)
        x = self.fc_o(x)
        return x


def pair(max_rel: int, method: str = "auto", dropout: float = 0.0, seed: int = 0):
    """A randomly initialised seed layer and ours with its weights loaded strictly."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        ref = SeedMultiHeadAttentionLayer(HID, HEADS, dropout, "cpu", max_rel)
    ours = RelativeMultiHeadAttention(HID, HEADS, max_rel, dropout=dropout, method=method)
    ours.load_state_dict(ref.state_dict(), strict=True)
    return ref.eval(), ours.eval()


def inputs(batch: int, n: int, seed: int) -> torch.Tensor:
    return torch.randn(batch, n, HID, generator=torch.Generator().manual_seed(seed))


def test_state_dict_keys_and_shapes_match_the_seed():
    ref, ours = pair(3)
    ref_shapes = {name: t.shape for name, t in ref.state_dict().items()}
    our_shapes = {name: t.shape for name, t in ours.state_dict().items()}
    assert our_shapes == ref_shapes
    assert ours.relative_position_k.embeddings_table.shape == (7, HID // HEADS)


@pytest.mark.parametrize("max_rel", [0, 2, 9])
@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_self_attention_matches_the_seed(method, max_rel):
    ref, ours = pair(max_rel, method, seed=max_rel)
    x = inputs(3, 6, seed=1)
    with torch.no_grad():
        torch.testing.assert_close(ours(x, x, x), ref(x, x, x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("max_rel", [0, 2, 9])
@pytest.mark.parametrize("method", [m for m in ATTENTION_METHODS if m != "skew"])
def test_cross_attention_matches_the_seed(method, max_rel):
    """len_q = 3 queries against len_k = 5 keys/values."""
    ref, ours = pair(max_rel, method, seed=10 + max_rel)
    query, memory = inputs(2, 3, seed=2), inputs(2, 5, seed=3)
    with torch.no_grad():
        expected = ref(query, memory, memory)
        got = ours(query, memory, memory)
    assert got.shape == (2, 3, HID)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_padding_mask_with_seed_semantics(method):
    """An int (b, 1, 1, n) mask, 0 = masked, as the seed reads it; each query sees a key."""
    ref, ours = pair(2, method, seed=4)
    x = inputs(2, 5, seed=5)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]])[:, None, None, :]
    with torch.no_grad():
        torch.testing.assert_close(ours(x, x, x, mask), ref(x, x, x, mask), rtol=1e-5, atol=1e-6)


def test_forward_with_trace_weights_match_the_seed():
    """The trace's weights equal the seed's softmax output (read from its dropout module)."""
    ref, ours = pair(3, seed=6)
    captured = []
    ref.dropout.register_forward_hook(lambda module, args, out: captured.append(out))
    query, memory = inputs(2, 4, seed=7), inputs(2, 6, seed=8)
    mask = torch.tensor([[1, 1, 1, 1, 1, 0], [1, 1, 0, 0, 0, 0]])[:, None, None, :]
    with torch.no_grad():
        expected = ref(query, memory, memory, mask)
        out, trace = ours.forward_with_trace(query, memory, memory, mask)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    assert trace.weights.shape == (2, HEADS, 4, 6)
    torch.testing.assert_close(trace.weights, captured[0], rtol=1e-5, atol=1e-6)


def test_gradients_match_the_seed():
    """Both relative tables get the same gradients as in the seed layer."""
    ref, ours = pair(2, seed=9)
    x = inputs(2, 5, seed=10)
    ref(x, x, x).square().sum().backward()
    ours(x, x, x).square().sum().backward()
    ref_params = dict(ref.named_parameters())
    for name, param in ours.named_parameters():
        torch.testing.assert_close(param.grad, ref_params[name].grad, rtol=1e-4, atol=1e-6)


def split_heads(x: torch.Tensor) -> torch.Tensor:
    b, n, _ = x.shape
    return x.view(b, n, HEADS, HID // HEADS).permute(0, 2, 1, 3)


def test_training_dropout_acts_on_the_shared_weights_like_the_seed():
    """In training mode the weights both terms share are dropped (each kept with 1 - p, scaled
    by 1 / (1 - p)) as in the seed: given the same dropped weights, the seed's layer computes
    the same output. The keep-mask comes from relative_attention's own draw of the global RNG."""
    p = 0.5
    ref, ours = pair(2, dropout=p, seed=11)
    ref.train()
    ours.train()
    x = inputs(2, 6, seed=12)
    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(0)
        train_ours = ours(x, x, x)
        torch.manual_seed(0)  # the same draw, through the function the layer calls
        q, k, v = (split_heads(fc(x)) for fc in (ours.fc_q, ours.fc_k, ours.fc_v))
        tables = (
            ours.relative_position_k.embeddings_table,
            ours.relative_position_v.embeddings_table,
        )
        out, used = relative_attention(q, k, v, *tables, dropout_p=p, return_weights=True)
        _, trace = ours.eval().forward_with_trace(x, x, x)
        eval_ours = ours(x, x, x)
        ref.dropout.register_forward_hook(lambda module, args, result: used)
        train_ref = ref(x, x, x)
    assert torch.isfinite(train_ours).all()
    assert not torch.allclose(train_ours, eval_ours)
    torch.testing.assert_close(train_ours, ours.fc_o(out.permute(0, 2, 1, 3).reshape(2, 6, HID)))
    torch.testing.assert_close(train_ours, train_ref, rtol=1e-5, atol=1e-6)
    kept = used != 0
    torch.testing.assert_close(used[kept], trace.weights[kept] / (1 - p))
    assert 0.3 < 1 - kept.float().mean().item() < 0.7


@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_forward_equals_forward_with_trace_in_eval_mode(method):
    _, ours = pair(3, method, seed=14)
    x = inputs(2, 7, seed=15)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 0, 0, 0]])[:, None, None, :]
    with torch.no_grad():
        for options in ({}, {"causal": True}):
            out, trace = ours.forward_with_trace(x, x, x, mask, **options)
            torch.testing.assert_close(ours(x, x, x, mask, **options), out)
            assert trace.weights.shape == (2, HEADS, 7, 7)
            if method != "auto":
                assert trace.method == method


def test_default_method_is_auto():
    assert RelativeMultiHeadAttention(HID, HEADS, 2).method == "auto"


def parameter_grads(layer, x, mask=None, **options):
    layer.zero_grad()
    weight = torch.randn(x.shape, generator=torch.Generator().manual_seed(1), dtype=x.dtype)
    (layer(x, x, x, mask, **options) * weight).sum().backward()
    return {name: param.grad.clone() for name, param in layer.named_parameters()}


@pytest.mark.parametrize(
    "options", [{}, {"causal": True}, {"mask": torch.tensor([1, 1, 1, 1, 0])[None, None, None]}]
)
def test_auto_and_loop_give_the_same_parameter_gradients(options):
    """float64, forward + backward: the fused banded backward against autograd through the
    loop definition, for every parameter of the layer."""
    _, fused = pair(2, "auto", seed=16)
    _, loop = pair(2, "loop", seed=16)
    fused, loop = fused.double(), loop.double()
    loop.load_state_dict(fused.state_dict())
    x = inputs(2, 5, seed=17).double()
    got = parameter_grads(fused, x, **options)
    want = parameter_grads(loop, x, **options)
    assert got.keys() == want.keys()
    for name in got:
        torch.testing.assert_close(got[name], want[name], msg=name)
    assert got["relative_position_k.embeddings_table"].abs().sum() > 0
    assert got["relative_position_v.embeddings_table"].abs().sum() > 0


@pytest.mark.parametrize("method", ["auto", "bucket"])
def test_training_with_dropout_runs_forward_and_backward(method):
    _, ours = pair(2, method, dropout=0.3, seed=18)
    x = inputs(2, 8, seed=19)
    ours.train()
    with torch.random.fork_rng():
        torch.manual_seed(1)
        train = ours(x, x, x, causal=True)
        train.square().sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in ours.parameters())
    assert ours.relative_position_v.embeddings_table.grad.abs().sum() > 0
    with torch.no_grad():
        eval_out = ours.eval()(x, x, x, causal=True)
    assert not torch.allclose(train.detach(), eval_out)


def test_forward_with_trace_in_training_keeps_the_weights_before_dropout():
    _, ours = pair(2, dropout=0.5, seed=20)
    x = inputs(1, 6, seed=21)
    with torch.no_grad():
        eval_out, eval_trace = ours.eval().forward_with_trace(x, x, x)
        with torch.random.fork_rng():
            torch.manual_seed(2)
            train_out, train_trace = ours.train().forward_with_trace(x, x, x)
    torch.testing.assert_close(train_trace.weights, eval_trace.weights)
    assert not torch.allclose(train_out, eval_out)


@pytest.mark.parametrize("method", ATTENTION_METHODS)
def test_causal_matches_the_seed_with_a_causal_mask(method):
    """causal=True is the seed's layer given the lower-triangular mask (0 = masked)."""
    ref, ours = pair(2, method, seed=22)
    x = inputs(2, 6, seed=23)
    with torch.no_grad():
        expected = ref(x, x, x, causal_mask(6).int())
        torch.testing.assert_close(ours(x, x, x, causal=True), expected, rtol=1e-5, atol=1e-6)
        out, trace = ours.forward_with_trace(x, x, x, causal=True)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    assert (trace.weights[..., ~causal_mask(6)] == 0).all()


@pytest.mark.parametrize("method", [m for m in ATTENTION_METHODS if m != "skew"])
def test_query_offset_passes_through(method):
    """The last three queries at their positions (offset 3) are the last rows of the full
    causal attention; forward_with_trace reports the offset."""
    _, ours = pair(3, method, seed=24)
    x = inputs(2, 6, seed=25)
    with torch.no_grad():
        full = ours(x, x, x, causal=True)
        rows = ours(x[:, 3:], x, x, causal=True, query_offset=3)
        out, trace = ours.forward_with_trace(x[:, 3:], x, x, causal=True, query_offset=3)
    torch.testing.assert_close(rows, full[:, 3:])
    torch.testing.assert_close(out, full[:, 3:])
    assert trace.query_offset == 3 and trace.weights.shape == (2, HEADS, 3, 6)


def test_relative_position_module_matches_the_seed():
    """RelativePosition(length_q, length_k) gathers the same (n_q, n_k, d) tensor."""
    with torch.random.fork_rng():
        torch.manual_seed(13)
        ref = SeedRelativePosition(4, 2)
    ours = RelativePosition(4, 2)
    ours.load_state_dict(ref.state_dict(), strict=True)
    with torch.no_grad():
        assert torch.equal(ours(3, 6), ref(3, 6))
