"""ALiBi against Press et al. 2022: the slopes the paper prints, the reference code's rule for
a head count that is not a power of two (worked out below), the bias -m_h |j - i| as a loop,
and the reference code's causal form m_h · (key position), which differs from -m_h |j - i| by
a constant per query row and so gives the same softmax.
"""

import pytest
import torch

from relpos_core.schemes import ALiBi, alibi_slopes
from tests.schemes.plain import (
    EXACT,
    SHAPES,
    assert_blocks_match_whole,
    assert_gradients,
    assert_scheme_matches,
    cell_loop,
    content_loop,
    qkv,
    softmax_loop,
)

ROOT_HALF = 2**-0.5


def test_slopes_printed_in_the_paper():
    """8 heads: 1/2, 1/4, ..., 1/256. 16 heads: start at 1/2^0.5, ratio 1/2^0.5."""
    assert alibi_slopes(8).tolist() == [1 / 2**h for h in range(1, 9)]
    torch.testing.assert_close(
        alibi_slopes(16), torch.tensor([ROOT_HALF**h for h in range(1, 17)], dtype=torch.float64)
    )


# Not a power of two: the slopes of the largest power of two below H, then every other slope of
# the next power of two (its 1st, 3rd, ...) until there are H.
#   H = 3:  H' = 2 -> 2^-4, 2^-8;          from 4 (2^-2, 2^-4, 2^-6, 2^-8) -> 2^-2
#   H = 5:  H' = 4 -> 2^-2, 2^-4, 2^-6, 2^-8; from 8 (2^-1, .., 2^-8)      -> 2^-1
#   H = 6:  H' = 4 -> as for 5;             from 8 the 1st and 3rd       -> 2^-1, 2^-3
#   H = 12: H' = 8 -> 2^-1 .. 2^-8;         from 16 (2^-0.5 h) the 1st, 3rd, 5th, 7th
#                                           -> 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
NON_POWERS = {
    1: [2**-8],
    3: [2**-4, 2**-8, 2**-2],
    5: [2**-2, 2**-4, 2**-6, 2**-8, 2**-1],
    6: [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3],
    12: [2.0**-h for h in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
}


@pytest.mark.parametrize("heads", list(NON_POWERS))
def test_slopes_for_other_head_counts(heads):
    torch.testing.assert_close(
        alibi_slopes(heads), torch.tensor(NON_POWERS[heads], dtype=torch.float64)
    )


def test_max_bias_sets_the_exponent():
    """m_h = 2^(-max_bias h / H): max_bias 4 with 4 heads gives 1/2, 1/4, 1/8, 1/16."""
    assert alibi_slopes(4, max_bias=4.0).tolist() == [0.5, 0.25, 0.125, 0.0625]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), SHAPES)
def test_bias_is_minus_slope_times_distance(n_q, n_k, offset, causal):
    scheme = ALiBi(3, 4)
    q, k, v = qkv(n_q, n_k)
    slopes = NON_POWERS[3]

    def bias(b, h, i, j):
        return -slopes[h] * abs(j - (offset + i))

    want = {"content": content_loop(q, k), "bias": cell_loop((2, 3, n_q, n_k), bias)}
    assert_scheme_matches(scheme, q, k, v, want, causal=causal, offset=offset)


@pytest.mark.parametrize(("n_q", "n_k", "offset"), [(6, 6, 0), (3, 7, 4)])
def test_the_reference_codes_causal_form_gives_the_same_weights(n_q, n_k, offset):
    """The reference code adds m_h · j (the key position) to every row, then the causal mask.
    On j <= i, m_h (j - i) = -m_h |j - i| and m_h j - m_h (j - i) = m_h i is constant along
    the row, which the softmax ignores."""
    scheme = ALiBi(4, 4)
    q, k, v = qkv(n_q, n_k, heads=4)
    slopes = alibi_slopes(4)
    bias = scheme.terms(q, k, causal=True, query_offset=offset)["bias"]
    past = torch.arange(n_k)[None, :] <= torch.arange(offset, offset + n_q)[:, None]
    signed = cell_loop((1, 4, n_q, n_k), lambda b, h, i, j: slopes[h] * (j - (offset + i)))
    torch.testing.assert_close(bias[0][:, past], signed[0][:, past], **EXACT)

    by_key = cell_loop((2, 4, n_q, n_k), lambda b, h, i, j: slopes[h] * j)
    reference = softmax_loop(content_loop(q, k) + by_key, offset, causal=True)
    _, alpha = scheme(q, k, v, causal=True, query_offset=offset)
    torch.testing.assert_close(alpha, reference, **EXACT)


@pytest.mark.parametrize("causal", [False, True])
def test_row_blocks_equal_the_rows_of_the_whole(causal):
    assert_blocks_match_whole(ALiBi(3, 4), 7, causal)


def test_gradients_and_nothing_learned():
    assert assert_gradients(ALiBi(2, 2), 3, 3, 0, True) == []
    assert assert_gradients(ALiBi(2, 2), 2, 4, 1, False) == []


# What the tests over every scheme expect of this one, from the paper (tests/schemes/expected.py)
SHIFT_INVARIANT_WITH_CONTENT = True  # -m_h |j - i|: a bias of j - i alone


def learned_parameters(h: int, d: int, settings: dict) -> int:
    """Its learned parameters at h heads of width d and the given settings."""
    return 0  # the slopes are fixed
