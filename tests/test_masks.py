"""Attention masks as bool tensors, True = the query may attend to the key.

Seed 004's padding mask marks pads with 1; ours is its logical negation.
"""

import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import causal_mask, padding_mask, trailing_padding_mask

lengths = st.integers(1, 9)


@given(n_q=lengths, n_k=lengths)
def test_causal_mask_is_key_not_after_query(n_q, n_k):
    """mask[i, j] is True exactly when j <= i."""
    mask = causal_mask(n_q, n_k)
    assert mask.dtype == torch.bool
    assert mask.tolist() == [[j <= i for j in range(n_k)] for i in range(n_q)]


@given(n=lengths)
def test_causal_mask_defaults_to_square(n):
    assert torch.equal(causal_mask(n), causal_mask(n, n))


def test_seed004_padding_mask_is_the_negated_seed_mask():
    """Seed 004 prints [[[[0, 0, 0, 1, 1]]]] (1 = pad) for ids [[1, 21, 777, 0, 0]]."""
    mask = padding_mask(torch.tensor([[1, 21, 777, 0, 0]]))
    assert mask.shape == (1, 1, 1, 5)
    assert mask.dtype == torch.bool
    seed_mask = torch.tensor([[[[0.0, 0.0, 0.0, 1.0, 1.0]]]])
    assert torch.equal(mask, seed_mask == 0)


def test_padding_mask_with_other_pad_id_and_batch():
    tokens = torch.tensor([[5, 9, 9], [9, 1, 2]])
    mask = padding_mask(tokens, pad_id=9)
    assert mask.shape == (2, 1, 1, 3)
    assert mask[:, 0, 0].tolist() == [[True, False, False], [False, True, True]]


@given(n=lengths, data=st.data())
def test_trailing_padding_mask_hides_the_last_keys(n, data):
    n_pad = data.draw(st.integers(0, n))
    mask = trailing_padding_mask(n, n_pad)
    assert mask.shape == (1, 1, 1, n)
    assert mask.flatten().tolist() == [j < n - n_pad for j in range(n)]


def test_a_key_mask_or_a_scalar_works_on_the_default_fused_path_and_the_layer():
    """A (n_k,) key mask crashed the fused path (IndexError); every rank now means its
    broadcast to (b, h, n_q, n_k), on every method and through the layer."""
    from relpos_core import METHOD_NAMES, RelativeMultiHeadAttention, relative_attention

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 2, 5, 4, generator=gen) for _ in "qkv")
    table = torch.randn(5, 4, generator=gen)
    keys = torch.tensor([True, True, False, True, False])
    for mask in (keys, torch.tensor(True), keys[None, :], keys[None, None, :]):
        full = mask.expand(2, 2, 5, 5)
        want = relative_attention(q, k, v, table, table, mask=full, method="loop")
        for method in ("auto", *METHOD_NAMES):
            got = relative_attention(q, k, v, table, table, mask=mask, method=method)
            torch.testing.assert_close(got, want)
    layer = RelativeMultiHeadAttention(8, 2, 2)
    x = torch.randn(2, 5, 8, generator=gen)
    torch.testing.assert_close(layer(x, x, x, keys), layer(x, x, x, keys.expand(2, 2, 5, 5)))
    torch.testing.assert_close(layer(x, x, x, keys.int()), layer(x, x, x, keys))
