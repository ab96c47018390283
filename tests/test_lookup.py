"""relpos_core.lookup against Shaw et al. (2018) eq. (3)-(4) and seed 000's printed tables.

a_ij = w_{clip(j - i, k)},  clip(x, k) = max(-k, min(k, x)),  stored row clip(j - i, k) + k.
"""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    clip_index,
    gather_relative,
    relative_distances,
    relative_index,
    relative_table,
)

lengths = st.integers(1, 9)
clips = st.integers(0, 12)

# Seed 000, n = 4, k = 2: the printed look-up table and RPR vocab (np.random.seed(5)).
SEED000_LOOKUP = [[2, 3, 4, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 0, 1, 2]]
SEED000_CLIPPED = [[0, 1, 2, 2], [-1, 0, 1, 2], [-2, -1, 0, 1], [-2, -2, -1, 0]]
SEED000_VOCAB = [
    [-7, 4, 5, -4, 6],
    [-1, -2, -6, -3, 6],
    [6, -3, 2, 5, 7],
    [-3, 6, 2, 3, 1],
    [-9, 5, 8, -1, 0],
]
# Seed 000's printed a^K (4, 4, 5): embeddings[i][j] = vocab[lookup[i][j]].
SEED000_EMBEDDINGS = [
    [[6, -3, 2, 5, 7], [-3, 6, 2, 3, 1], [-9, 5, 8, -1, 0], [-9, 5, 8, -1, 0]],
    [[-1, -2, -6, -3, 6], [6, -3, 2, 5, 7], [-3, 6, 2, 3, 1], [-9, 5, 8, -1, 0]],
    [[-7, 4, 5, -4, 6], [-1, -2, -6, -3, 6], [6, -3, 2, 5, 7], [-3, 6, 2, 3, 1]],
    [[-7, 4, 5, -4, 6], [-7, 4, 5, -4, 6], [-1, -2, -6, -3, 6], [6, -3, 2, 5, 7]],
]


def clip(x: int, k: int) -> int:
    """The paper's clip(x, k) = max(-k, min(k, x))."""
    return max(-k, min(k, x))


@given(n_q=lengths, n_k=lengths)
def test_relative_distances_is_key_minus_query(n_q, n_k):
    """distances[i, j] = j - i for every query i and key j."""
    distances = relative_distances(n_q, n_k)
    assert distances.dtype == torch.int64
    expected = [[j - i for j in range(n_k)] for i in range(n_q)]
    assert distances.tolist() == expected


@given(n_q=lengths, n_k=lengths, offset=st.integers(-12, 12))
def test_relative_distances_with_an_offset(n_q, n_k, offset):
    """Query row r sits at position offset + r (a negative offset puts it before key 0)."""
    distances = relative_distances(n_q, n_k, query_offset=offset)
    assert distances.tolist() == [[j - (offset + r) for j in range(n_k)] for r in range(n_q)]


@given(n_q=lengths, n_k=lengths, k=clips, offset=st.integers(0, 12))
def test_relative_index_with_an_offset_matches_clip_definition(n_q, n_k, k, offset):
    index = relative_index(n_q, n_k, k, query_offset=offset)
    expected = [[clip(j - (offset + r), k) + k for j in range(n_k)] for r in range(n_q)]
    assert index.tolist() == expected


@given(n_q=lengths, n_k=lengths, k=clips)
def test_relative_index_matches_clip_definition(n_q, n_k, k):
    """index[i, j] = clip(j - i, k) + k, always inside the table's 2k+1 rows."""
    index = relative_index(n_q, n_k, k)
    assert index.dtype == torch.int64
    assert index.shape == (n_q, n_k)
    expected = [[clip(j - i, k) + k for j in range(n_k)] for i in range(n_q)]
    assert index.tolist() == expected
    assert 0 <= int(index.min()) and int(index.max()) <= 2 * k


@given(n_q=lengths, n_k=lengths, k=clips, offset=st.integers(-12, 12))
def test_clip_index_matches_clip_definition_and_relative_index(n_q, n_k, k, offset):
    """The numpy table a figure draws without torch: the definition, and relative_index's."""
    index = clip_index(n_q, n_k, k, query_offset=offset)
    expected = [[clip(j - (offset + r), k) + k for j in range(n_k)] for r in range(n_q)]
    assert index.dtype == "int64"
    assert index.tolist() == expected
    assert index.tolist() == relative_index(n_q, n_k, k, query_offset=offset).tolist()


def test_seed000_clip_index():
    assert clip_index(4, 4, 2).tolist() == SEED000_LOOKUP


@pytest.mark.parametrize(
    ("args", "error", "words"),
    [
        ((0, 4, 2), ValueError, "n_q (number of queries) must be >= 1, got 0"),
        ((4, 4, -1), ValueError, "max_relative_position (clip distance k) must be >= 0, got -1"),
        ((4, "4", 2), TypeError, "n_k (number of keys) must be an int, got str '4'"),
        ((2048, 1024, 2), ValueError, "n_q * n_k must be <= 1048576"),
    ],
)
def test_clip_index_names_the_argument_its_range_and_value(args, error, words):
    with pytest.raises(error) as raised:
        clip_index(*args)
    assert words in str(raised.value)


@given(n_q=lengths, n_k=lengths)
def test_relative_index_with_zero_clip_is_all_zero(n_q, n_k):
    """k = 0: every pair shares the single vector w_0."""
    assert relative_index(n_q, n_k, 0).tolist() == [[0] * n_k for _ in range(n_q)]


@given(n_q=lengths, n_k=lengths, extra=st.integers(0, 4))
def test_relative_index_without_clipping_is_shifted_distance(n_q, n_k, extra):
    """k >= max(n_q, n_k) - 1 clips nothing: index == (j - i) + k."""
    k = max(n_q, n_k) - 1 + extra
    expected = [[j - i + k for j in range(n_k)] for i in range(n_q)]
    assert relative_index(n_q, n_k, k).tolist() == expected


def test_seed000_lookup_table():
    """Seed 000 (n = 4, k = 2): the clipped distances and the final look-up table."""
    assert (relative_distances(4, 4).clamp(-2, 2)).tolist() == SEED000_CLIPPED
    assert relative_index(4, 4, 2).tolist() == SEED000_LOOKUP


def test_seed000_embeddings_from_vocab():
    """Seed 000's printed a^K is its RPR vocab gathered through the look-up table."""
    vocab = torch.tensor(SEED000_VOCAB, dtype=torch.float64)
    a_k = gather_relative(vocab, relative_index(4, 4, 2))
    assert a_k.shape == (4, 4, 5)
    assert a_k.tolist() == SEED000_EMBEDDINGS


@given(k=clips, d=st.integers(1, 16), seed=st.integers(0, 2**31 - 1))
def test_relative_table_reproducible_shaped_and_within_xavier_bound(k, d, seed):
    """Same seed, same table; shape (2k+1, d); |w| <= sqrt(6 / (2k+1 + d)) (Xavier uniform)."""
    table = relative_table(k, d, seed=seed)
    assert table.shape == (2 * k + 1, d)
    assert table.dtype == torch.float32
    torch.testing.assert_close(table, relative_table(k, d, seed=seed), rtol=0, atol=0)
    bound = math.sqrt(6.0 / (2 * k + 1 + d))
    assert float(table.abs().max()) <= bound * (1 + 1e-6)


def test_relative_table_spreads_over_the_xavier_range():
    """A large table fills [-bound, bound] roughly uniformly (mean ~0, extremes near the bound)."""
    k, d = 50, 200
    table = relative_table(k, d, seed=3, dtype=torch.float64)
    bound = math.sqrt(6.0 / (2 * k + 1 + d))
    assert float(table.max()) > 0.99 * bound
    assert float(table.min()) < -0.99 * bound
    assert abs(float(table.mean())) < 0.02 * bound
    # uniform on [-b, b] has variance b^2 / 3
    assert float(table.var()) == pytest.approx(bound**2 / 3, rel=0.05)


def test_relative_table_seeds_differ_and_dtypes_agree():
    """Different seeds give different tables; float64 and float32 hold the same draw."""
    assert not torch.equal(relative_table(2, 4, seed=0), relative_table(2, 4, seed=1))
    t64 = relative_table(2, 4, seed=7, dtype=torch.float64)
    assert t64.dtype == torch.float64
    torch.testing.assert_close(t64.float(), relative_table(2, 4, seed=7))


def test_relative_table_leaves_global_rng_alone():
    """Building a table neither reads nor advances torch's global generator."""
    with torch.random.fork_rng():
        torch.manual_seed(123)
        state = torch.random.get_rng_state()
        relative_table(3, 8, seed=5)
        assert torch.equal(torch.random.get_rng_state(), state)
        after = torch.rand(4)
        torch.manual_seed(123)
        assert torch.equal(torch.rand(4), after)
        # and the table itself does not depend on the global seed
        torch.manual_seed(999)
        other = relative_table(3, 8, seed=5)
    assert torch.equal(other, relative_table(3, 8, seed=5))


@given(n_q=lengths, n_k=lengths, k=clips, d=st.integers(1, 6))
def test_gather_relative_is_table_lookup(n_q, n_k, k, d):
    """gather_relative(table, index)[i, j] == table[index[i, j]], checked pair by pair."""
    table = relative_table(k, d, seed=n_q * 31 + n_k, dtype=torch.float64)
    index = relative_index(n_q, n_k, k)
    a = gather_relative(table, index)
    assert a.shape == (n_q, n_k, d)
    for i in range(n_q):
        for j in range(n_k):
            assert torch.equal(a[i, j], table[clip(j - i, k) + k])
