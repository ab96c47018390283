"""The tiny encoders: shapes, the absolute flavour is plain attention, seeded initialization,
checkpoint round trip."""

import math

import pytest
import torch
import torch.nn.functional as F

from relpos_core.encodings import sinusoidal_encoding
from relpos_lab.generalization.models import Encoder, EncoderConfig, build_encoder, init_parameters

SMALL = EncoderConfig(vocab=7, d_model=16, heads=2, layers=2, ffn=24, k=3)


def small(position: str, seed: int = 0) -> Encoder:
    return build_encoder(EncoderConfig(**{**SMALL.__dict__, "position": position}), seed)


def tokens(n: int, batch: int = 3, seed: int = 0) -> torch.Tensor:
    return torch.randint(1, SMALL.vocab, (batch, n), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("position", ["relative", "absolute"])
@pytest.mark.parametrize("n", [1, 5, 40])
def test_logits_and_traces_at_any_length(position, n):
    model = small(position).eval()
    logits, traces = model.forward_with_traces(tokens(n))
    assert logits.shape == (3, n, SMALL.vocab)
    assert len(traces) == SMALL.layers
    for trace in traces:
        assert trace.weights.shape == (3, SMALL.heads, n, n)
        torch.testing.assert_close(trace.weights.sum(-1), torch.ones(3, SMALL.heads, n))
    torch.testing.assert_close(model(tokens(n)), logits)


def test_absolute_attention_is_plain_multi_head_attention():
    model = small("absolute").eval()
    attention = model.blocks[0].attention
    assert attention.max_relative_position == 0
    for table in (attention.relative_position_k, attention.relative_position_v):
        assert not table.embeddings_table.requires_grad
        assert torch.count_nonzero(table.embeddings_table) == 0
    x = torch.randn(2, 9, SMALL.d_model, generator=torch.Generator().manual_seed(1))

    def heads(t):  # (b,n,d_model) -> (b,h,n,dh)
        return t.view(2, 9, SMALL.heads, -1).transpose(1, 2)

    q, k, v = (heads(layer(x)) for layer in (attention.fc_q, attention.fc_k, attention.fc_v))
    plain = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, 9, -1)
    torch.testing.assert_close(attention(x, x, x), attention.fc_o(plain))


def test_absolute_relative_tables_get_no_gradient_and_stay_zero():
    model = small("absolute")
    model(tokens(6)).sum().backward()
    table = model.blocks[0].attention.relative_position_k.embeddings_table
    assert table.grad is None
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_embedding_adds_the_sinusoid_only_when_absolute():
    relative, absolute = small("relative"), small("absolute")
    ids = tokens(5)
    scaled = relative.embedding(ids) * math.sqrt(SMALL.d_model)
    torch.testing.assert_close(relative.embed(ids), scaled)
    pe = sinusoidal_encoding(5, SMALL.d_model)
    torch.testing.assert_close(absolute.embed(ids), absolute.embedding(ids) * 4.0 + pe)


def test_same_seed_same_weights_and_both_flavours_share_them():
    first, again, other = small("relative", 0), small("relative", 0), small("relative", 1)
    absolute = small("absolute", 0)
    for name, value in first.state_dict().items():
        assert torch.equal(value, again.state_dict()[name])
        if "embeddings_table" not in name:
            # identical starting point apart from where position enters
            assert torch.equal(value, absolute.state_dict()[name])
    assert not torch.equal(first.embedding.weight, other.embedding.weight)


def test_init_parameters_uses_only_its_generator():
    model = Encoder(SMALL)
    state = torch.random.get_rng_state()
    init_parameters(model, torch.Generator().manual_seed(0))
    assert torch.equal(state, torch.random.get_rng_state())
    assert torch.equal(model.blocks[1].norm_ffn.weight, torch.ones(SMALL.d_model))


def test_save_and_from_checkpoint_round_trip(tmp_path):
    model = small("relative", 4)
    model.save(tmp_path / "m.pt", task={"name": "shift"}, note="x")
    loaded, metadata = Encoder.from_checkpoint(tmp_path / "m.pt")
    assert loaded.config == model.config
    assert metadata == {"task": {"name": "shift"}, "note": "x"}
    assert not loaded.training
    ids = tokens(7)
    torch.testing.assert_close(loaded(ids), model.eval()(ids), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"position": "rotary"}, "position must be one of"),
        ({"d_model": 10, "heads": 4}, "d_model must be divisible by heads"),
        ({"k": -1}, "k \\(clip distance\\) must be >= 0, got -1"),
        ({"layers": 0}, "layers must be >= 1, got 0"),
    ],
)
def test_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EncoderConfig(**kwargs)


def test_out_of_vocabulary_tokens_are_rejected():
    with pytest.raises(ValueError, match="tokens must be ids in \\[0, 6\\], got values in"):
        small("relative")(torch.tensor([[1, 7]]))
    with pytest.raises(TypeError, match="long tensor"):
        small("relative")(torch.tensor([1, 2]))
