"""The Huang et al. (2018) skew and its inverses, against the index definition, against
tensor2tensor's pad/reshape construction (rewritten below in torch), and on seed 002's numbers.

Relative layout x[i, c]: distance r = c - (L - 1).  Absolute layout y[i, j]: key j.
Definition: y[i, j] = x[i, j - i + L - 1].
"""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    absolute_to_relative_masked,
    absolute_to_relative_unmasked,
    skew_masked,
    skew_unmasked,
    trace_skew_masked,
    trace_skew_unmasked,
)

DTYPES = (torch.float32, torch.float64)
LEADS = [(), (3,), (2, 3)]


# --- tensor2tensor, layers/common_attention.py, rewritten in torch for (batch, heads, ...) ---


def t2t_relative_to_absolute_masked(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, _ = x.shape
    x = F.pad(x, (1, 0))  # tf.pad(x, [[0, 0], [0, 0], [0, 0], [1, 0]])
    x = x.reshape(batch, heads, 1 + length, length)
    return x[:, :, 1:, :]  # tf.slice(x, [0, 0, 1, 0], [-1, -1, -1, -1])


def t2t_absolute_to_relative_masked(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, _ = x.shape
    x = F.pad(x, (0, 0, 1, 0))  # tf.pad(x, [[0, 0], [0, 0], [1, 0], [0, 0]])
    x = x.reshape(batch, heads, length, length + 1)
    return x[:, :, :, 1:]  # tf.slice(x, [0, 0, 0, 1], [batch, heads, length, length])


def t2t_relative_to_absolute_unmasked(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, _ = x.shape
    col_pad = torch.zeros(batch, heads, length, 1, dtype=x.dtype)
    x = torch.cat([x, col_pad], dim=3)
    flat_x = x.reshape(batch, heads, length * 2 * length)
    flat_pad = torch.zeros(batch, heads, length - 1, dtype=x.dtype)
    flat_x_padded = torch.cat([flat_x, flat_pad], dim=2)
    final_x = flat_x_padded.reshape(batch, heads, length + 1, 2 * length - 1)
    return final_x[:, :, :length, length - 1 :]


def t2t_absolute_to_relative_unmasked(x: torch.Tensor) -> torch.Tensor:
    batch, heads, length, _ = x.shape
    x = F.pad(x, (0, length - 1))
    x_flat = x.reshape(batch, heads, length**2 + length * (length - 1))
    x_flat = F.pad(x_flat, (length, 0))
    x = x_flat.reshape(batch, heads, length, 2 * length)
    return x[:, :, :, 1 : 2 * length]


# --- definitions, one cell at a time ---


def definition_skew(x: torch.Tensor, length: int) -> torch.Tensor:
    """out[..., i, j] = x[..., i, j - i + L - 1] (NaN where that column does not exist)."""
    out = torch.full((*x.shape[:-2], length, length), float("nan"), dtype=x.dtype)
    for i in range(length):
        for j in range(length):
            c = j - i + length - 1
            if 0 <= c < x.shape[-1]:
                out[..., i, j] = x[..., i, c]
    return out


def definition_to_relative(y: torch.Tensor, width: int) -> torch.Tensor:
    """out[..., i, c] = y[..., i, c + i - (L - 1)] where that key exists, else 0."""
    length = y.shape[-1]
    out = torch.zeros((*y.shape[:-1], width), dtype=y.dtype)
    for i in range(length):
        for c in range(width):
            j = c + i - (length - 1)
            if 0 <= j < length:
                out[..., i, c] = y[..., i, j]
    return out


def in_range(length: int, width: int) -> torch.Tensor:
    """Cells (i, c) of the relative layout whose key j = c + i - (L-1) lies in 0..L-1."""
    i = torch.arange(length)[:, None]
    j = torch.arange(width)[None, :] + i - (length - 1)
    return (j >= 0) & (j < length)


@st.composite
def relative_inputs(draw, unmasked: bool):
    length = draw(st.integers(1, 7))
    lead = draw(st.sampled_from(LEADS))
    dtype = draw(st.sampled_from(DTYPES))
    width = 2 * length - 1 if unmasked else length
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    return torch.randn(*lead, length, width, generator=gen, dtype=dtype), length


@st.composite
def absolute_inputs(draw):
    length = draw(st.integers(1, 7))
    lead = draw(st.sampled_from(LEADS))
    dtype = draw(st.sampled_from(DTYPES))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    return torch.randn(*lead, length, length, generator=gen, dtype=dtype), length


def as_4d(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1, 1, *x.shape[-2:])


# --- skew_unmasked ---


@given(inputs=relative_inputs(unmasked=True))
def test_skew_unmasked_is_the_definition_everywhere(inputs):
    """out[i, j] = x[i, j - i + L - 1] for every (i, j), with any leading dims."""
    x, length = inputs
    got = skew_unmasked(x)
    assert got.shape == (*x.shape[:-2], length, length)
    assert torch.equal(got, definition_skew(x, length))


@given(inputs=relative_inputs(unmasked=True))
def test_skew_unmasked_trace_shapes_and_steps(inputs):
    """padded (L, 2L) with a zero right column; reshaped (L+1, 2L-1); result = the skew."""
    x, length = inputs
    trace = trace_skew_unmasked(x)
    lead = x.shape[:-2]
    assert trace.masked is False
    assert trace.input.shape == x.shape
    assert trace.padded.shape == (*lead, length, 2 * length)
    assert trace.reshaped.shape == (*lead, length + 1, 2 * length - 1)
    assert trace.result.shape == (*lead, length, length)
    assert torch.equal(trace.padded[..., :-1], x)
    assert not trace.padded[..., -1].any()
    assert torch.equal(trace.result, trace.reshaped[..., :length, length - 1 :])
    assert torch.equal(trace.result, skew_unmasked(x))
    assert [s.name for s in trace.steps()] == ["input", "padded", "reshaped", "result"]


@given(inputs=relative_inputs(unmasked=True))
def test_skew_unmasked_matches_tensor2tensor(inputs):
    x, _ = inputs
    assert torch.equal(as_4d(skew_unmasked(x)), t2t_relative_to_absolute_unmasked(as_4d(x)))


# --- skew_masked ---


@given(inputs=relative_inputs(unmasked=False))
def test_skew_masked_on_and_below_diagonal_is_the_definition(inputs):
    """For j <= i, out[i, j] = x[i, j - i + L - 1]."""
    x, length = inputs
    got = skew_masked(x)
    assert got.shape == x.shape
    lower = torch.ones(length, length, dtype=torch.bool).tril()
    expected = definition_skew(x, length)
    assert torch.equal(got[..., lower], expected[..., lower])


@given(inputs=relative_inputs(unmasked=False))
def test_skew_masked_above_diagonal_is_as_documented(inputs):
    """out[i, i+1] is the zero pad and out[i, j] = x[i+1, j-i-2] for j > i+1."""
    x, length = inputs
    got = skew_masked(x)
    for i in range(length):
        for j in range(i + 1, length):
            expected = torch.zeros(()) if j == i + 1 else x[..., i + 1, j - i - 2]
            assert torch.equal(got[..., i, j], expected.to(x.dtype).expand(got.shape[:-2]))


@given(inputs=relative_inputs(unmasked=False))
def test_skew_masked_trace_shapes_and_steps(inputs):
    """padded (L, L+1) with a zero left column; reshaped (L+1, L); result drops row 0."""
    x, length = inputs
    trace = trace_skew_masked(x)
    lead = x.shape[:-2]
    assert trace.masked is True
    assert trace.padded.shape == (*lead, length, length + 1)
    assert trace.reshaped.shape == (*lead, length + 1, length)
    assert trace.result.shape == (*lead, length, length)
    assert not trace.padded[..., 0].any()
    assert torch.equal(trace.padded[..., 1:], x)
    assert torch.equal(trace.reshaped.flatten(-2), trace.padded.flatten(-2))
    assert torch.equal(trace.result, trace.reshaped[..., 1:, :])


@given(inputs=relative_inputs(unmasked=False))
def test_skew_masked_matches_tensor2tensor(inputs):
    x, _ = inputs
    assert torch.equal(as_4d(skew_masked(x)), t2t_relative_to_absolute_masked(as_4d(x)))


def test_skew_masked_hand_example():
    """3x3 by hand: pad left, reshape (4, 3), drop row 0 -> [[3, 0, 4], [5, 6, 0], [7, 8, 9]]."""
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    assert skew_masked(x).tolist() == [[3.0, 0.0, 4.0], [5.0, 6.0, 0.0], [7.0, 8.0, 9.0]]


# --- inverses ---


@given(inputs=absolute_inputs())
def test_absolute_to_relative_unmasked_is_the_definition(inputs):
    y, length = inputs
    got = absolute_to_relative_unmasked(y)
    assert got.shape == (*y.shape[:-1], 2 * length - 1)
    assert torch.equal(got, definition_to_relative(y, 2 * length - 1))
    assert torch.equal(as_4d(got), t2t_absolute_to_relative_unmasked(as_4d(y)))


@given(inputs=relative_inputs(unmasked=True))
def test_unmasked_round_trip_from_relative(inputs):
    """to_relative(skew(x)) == x on the in-range cells and 0 elsewhere."""
    x, length = inputs
    back = absolute_to_relative_unmasked(skew_unmasked(x))
    keep = in_range(length, 2 * length - 1)
    assert torch.equal(back, torch.where(keep, x, torch.zeros((), dtype=x.dtype)))


@given(inputs=absolute_inputs())
def test_unmasked_round_trip_from_absolute(inputs):
    """skew(to_relative(y)) == y exactly."""
    y, _ = inputs
    assert torch.equal(skew_unmasked(absolute_to_relative_unmasked(y)), y)


@given(inputs=absolute_inputs())
def test_absolute_to_relative_masked_is_the_definition(inputs):
    """out[i, c] = y[i, c + i - (L-1)] for keys j <= i that exist, 0 before the sequence start."""
    y, length = inputs
    got = absolute_to_relative_masked(y)
    assert got.shape == y.shape
    assert torch.equal(got, definition_to_relative(y.tril(), length))


@given(inputs=absolute_inputs())
def test_absolute_to_relative_masked_matches_tensor2tensor(inputs):
    """Equal to tensor2tensor on in-range cells for any y, and everywhere for lower-triangular y
    (tensor2tensor leaves the j > i values in the out-of-range cells; ours zeroes them)."""
    y, length = inputs
    ours = as_4d(absolute_to_relative_masked(y))
    keep = in_range(length, length)
    assert torch.equal(ours[..., keep], t2t_absolute_to_relative_masked(as_4d(y))[..., keep])
    assert torch.equal(ours, t2t_absolute_to_relative_masked(as_4d(y.tril())))


@given(inputs=relative_inputs(unmasked=False))
def test_masked_round_trip_from_relative(inputs):
    """to_relative(skew(x)) == x on the in-range cells and 0 elsewhere."""
    x, length = inputs
    back = absolute_to_relative_masked(skew_masked(x))
    keep = in_range(length, length)
    assert torch.equal(back, torch.where(keep, x, torch.zeros((), dtype=x.dtype)))


@given(inputs=absolute_inputs())
def test_masked_round_trip_from_absolute(inputs):
    """skew(to_relative(y)) == y on and below the diagonal."""
    y, length = inputs
    lower = torch.ones(length, length, dtype=torch.bool).tril()
    back = skew_masked(absolute_to_relative_masked(y))
    assert torch.equal(back[..., lower], y[..., lower])


# --- seed 002 ---

SEED002_TOEPLITZ = [
    [0.0, 1.0, 2.0, 3.0, 4.0],
    [-1.0, 0.0, 1.0, 2.0, 3.0],
    [-2.0, -1.0, 0.0, 1.0, 2.0],
    [-3.0, -2.0, -1.0, 0.0, 1.0],
    [-4.0, -3.0, -2.0, -1.0, 0.0],
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_seed002_unmasked_skew(dtype):
    """L = 5, Q = ones, Er = -4..4: skew(Q Er^T) is seed 002's printed Toeplitz matrix."""
    q = torch.ones(5, 1, dtype=dtype)
    e_r = torch.arange(-4, 5, dtype=dtype)[:, None]
    q_er = q @ e_r.T
    assert q_er.shape == (5, 9)
    assert skew_unmasked(q_er).tolist() == SEED002_TOEPLITZ


def test_seed002_masked_skew_lower_triangle():
    """Masked: Er holds distances -4..0 only; the lower triangle is the same Toeplitz matrix."""
    q_er = torch.ones(5, 1) @ torch.arange(-4.0, 1.0)[None, :]
    got = skew_masked(q_er)
    for i in range(5):
        assert got[i, : i + 1].tolist() == SEED002_TOEPLITZ[i][: i + 1]
