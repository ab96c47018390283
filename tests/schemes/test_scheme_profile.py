"""Distance profiles against brute force: each diagonal's cells listed one by one, then counted,
averaged, spread (population standard deviation), min and max; ``pooled`` over every matrix;
``toeplitz_deviation`` against the nearest Toeplitz matrix built cell by cell.
"""

import math
import subprocess
import sys

import pytest
import torch

import relpos_core.schemes.profile as profile_module
from relpos_core.schemes import (
    content_free,
    distance_profile,
    make_scheme,
    scheme_profile,
)
from relpos_core.schemes.catalogue import scheme_names
from tests.schemes.plain import randn

SCHEME_PARAMS = {"shaw": {"max_relative_position": 2}, "music": {"max_relative_position": 3}}


def diagonals(term: torch.Tensor, offset: int, causal: bool) -> dict[tuple, list[float]]:
    """(b, h, r) -> the values of the allowed cells with j - (offset + i) = r."""
    term = term.detach()
    b, h, n_q, n_k = term.shape
    cells: dict[tuple, list[float]] = {}
    for bi in range(b):
        for hi in range(h):
            for r in range(-(offset + n_q - 1), n_k - offset):
                cells[bi, hi, r] = [
                    float(term[bi, hi, i, j])
                    for i in range(n_q)
                    for j in range(n_k)
                    if j - (offset + i) == r and (not causal or j <= offset + i)
                ]
    return cells


def assert_profile(profile, cells: dict[tuple, list[float]], tol: float = 1e-12) -> None:
    for (bi, hi, r), values in cells.items():
        at = int((profile.distance == r).nonzero())
        stats = [
            profile.count[bi, hi, at], profile.mean[bi, hi, at], profile.std[bi, hi, at],
            profile.low[bi, hi, at], profile.high[bi, hi, at],
        ]  # fmt: skip
        count, mean, std, low, high = (float(s) for s in stats)
        assert count == len(values)
        if not values:
            assert all(math.isnan(s) for s in (mean, std, low, high))
            continue
        want_mean = sum(values) / len(values)
        want_std = math.sqrt(sum((x - want_mean) ** 2 for x in values) / len(values))
        assert abs(mean - want_mean) <= tol
        assert abs(std - want_std) <= tol
        # the term of a block of rows is its own matrix product: the last bit may differ from
        # the whole term's (it does on some CPUs' kernels), so extremes agree to tol, as above
        assert abs(low - min(values)) <= tol and abs(high - max(values)) <= tol


def nearest_toeplitz_distance(term: torch.Tensor, offset: int, causal: bool) -> float:
    """max |t - T| over allowed cells, T the Toeplitz matrix (per batch item and head) holding
    the midrange of each diagonal, the best constant for the max norm."""
    worst = 0.0
    for values in diagonals(term, offset, causal).values():
        if values:
            middle = (min(values) + max(values)) / 2
            worst = max(worst, max(abs(x - middle) for x in values))
    return worst


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "offset"), [(4, 4, 0), (3, 6, 2), (5, 3, 0), (2, 2, 3)])
def test_distance_profile_is_the_brute_force(n_q, n_k, offset, causal):
    term = randn(2, 3, n_q, n_k, seed=n_q + n_k)
    profile = distance_profile(term, offset, causal)
    assert profile.distance.tolist() == list(range(-(offset + n_q - 1), n_k - offset))
    cells = diagonals(term, offset, causal)
    assert_profile(profile, cells)
    assert math.isclose(
        profile.toeplitz_deviation, nearest_toeplitz_distance(term, offset, causal), rel_tol=1e-15
    )


@pytest.mark.parametrize("causal", [False, True])
def test_pooled_is_the_brute_force_over_every_matrix(causal):
    term = randn(2, 3, 4, 5, seed=1)
    pooled = distance_profile(term, 1, causal).pooled()
    assert pooled.count.shape == (1, 1, 8)
    merged: dict[tuple, list[float]] = {}
    for (_, _, r), values in diagonals(term, 1, causal).items():
        merged.setdefault((0, 0, r), []).extend(values)
    assert_profile(pooled, merged)


def test_the_nearest_toeplitz_matrix_is_no_closer_than_the_midrange():
    """No other value on any diagonal brings the matrix closer: the deviation is optimal."""
    term = randn(1, 1, 4, 4, seed=8)
    best = distance_profile(term).toeplitz_deviation
    for values in diagonals(term, 0, False).values():
        middle = (min(values) + max(values)) / 2
        for shift in (-1e-3, 1e-3):
            assert max(abs(x - middle - shift) for x in values) >= (max(values) - min(values)) / 2
    assert math.isclose(best, nearest_toeplitz_distance(term, 0, False), rel_tol=1e-15)


def test_a_toeplitz_term_has_deviation_zero():
    toeplitz = torch.tensor([[3.0, 1.0, 2.0], [5.0, 3.0, 1.0], [4.0, 5.0, 3.0]])[None, None]
    assert distance_profile(toeplitz).toeplitz_deviation == 0.0
    toeplitz[0, 0, 2, 1] = 5.5  # diagonal -1 now holds 5 and 5.5: midrange 5.25, off by 0.25
    assert distance_profile(toeplitz).toeplitz_deviation == 0.25


def scheme_inputs(name: str, n_q: int = 6, n_k: int = 6):
    scheme = make_scheme(name, 2, 4, seed=1, **SCHEME_PARAMS.get(name, {})).double()
    return scheme, randn(2, 2, n_q, 4, seed=2), randn(2, 2, n_k, 4, seed=3)


@pytest.mark.parametrize("block_cells", [1, 2 * 2 * 6 * 2, 10**9])  # 1 row, 2 rows, all rows
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("name", scheme_names())
def test_scheme_profile_in_blocks_is_the_brute_force(monkeypatch, name, causal, block_cells):
    monkeypatch.setattr(profile_module, "BLOCK_CELLS", block_cells)
    scheme, q, k = scheme_inputs(name, 5, 6)
    profile = scheme_profile(scheme, q, k, causal=causal)
    term = scheme.position_term(q, k, causal=causal)
    assert_profile(profile, diagonals(term, 0, causal))
    assert math.isclose(
        profile.toeplitz_deviation, nearest_toeplitz_distance(term, 0, causal), rel_tol=1e-15
    )


@pytest.mark.parametrize("name", ["t5", "alibi"])
@pytest.mark.parametrize("causal", [False, True])
def test_bias_schemes_are_exactly_toeplitz(name, causal):
    scheme, q, k = scheme_inputs(name)
    assert scheme_profile(scheme, q, k, causal=causal).toeplitz_deviation == 0.0


@pytest.mark.parametrize("name", scheme_names())
@pytest.mark.parametrize("causal", [False, True])
def test_every_position_only_part_is_toeplitz(name, causal):
    scheme, q, k = scheme_inputs(name)
    profile = scheme_profile(scheme, q, k, causal=causal, position_only=True)
    assert profile.toeplitz_deviation < 1e-12
    manual = scheme.position_term(content_free(q), content_free(k), causal=causal)
    assert nearest_toeplitz_distance(manual, 0, causal) < 1e-12


@pytest.mark.parametrize("name", ["shaw", "music", "xl", "rope"])
def test_content_dependent_schemes_are_not_toeplitz(name):
    scheme, q, k = scheme_inputs(name)
    assert scheme_profile(scheme, q, k).toeplitz_deviation > 0.1


def test_content_free_gives_every_position_the_mean():
    x = randn(2, 3, 5, 4, seed=0)
    free = content_free(x)
    for i in range(5):
        torch.testing.assert_close(free[:, :, i], sum(x[:, :, j] for j in range(5)) / 5)


@pytest.mark.parametrize("block_cells", [2 * 64 * 2, 10**9])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", ["t5", "alibi"])
def test_a_constant_diagonal_has_no_spread(monkeypatch, name, dtype, block_cells):
    """Every diagonal of a bias term holds one value: its spread is 0, not the rounding left by
    E[x^2] - E[x]^2 (which gave 6e-3 for ALiBi at n = 512 in float32), in the whole and
    pooled."""
    monkeypatch.setattr(profile_module, "BLOCK_CELLS", block_cells)
    scheme = make_scheme(name, 2, 4, seed=0).to(dtype)
    q = torch.randn(1, 2, 200, 4, generator=torch.Generator().manual_seed(0), dtype=dtype)
    profile = scheme_profile(scheme, q, q)
    assert profile.std.max() == 0.0
    assert (profile.low == profile.mean).all() and (profile.mean == profile.high).all()
    pooled = profile.pooled()
    assert (pooled.low <= pooled.mean).all() and (pooled.mean <= pooled.high).all()


def test_pooled_spread_of_two_constant_heads():
    """Head 0 all 1.0, head 1 all 3.0, every diagonal: pooled mean 2 and spread exactly 1 (half
    the cells 1 below the mean, half 1 above)."""
    term = torch.stack([torch.ones(4, 4), 3 * torch.ones(4, 4)])[None]  # (1, 2, 4, 4)
    pooled = distance_profile(term).pooled()
    assert (pooled.mean == 2.0).all() and (pooled.std == 1.0).all()


@pytest.mark.parametrize("block_cells", [1, 2 * 2 * 6 * 2, 10**9])  # 1 row, 2 rows, all rows
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("query_offset", [0, 3])
def test_distance_profile_in_blocks_is_the_brute_force(
    monkeypatch, block_cells, causal, query_offset
):
    monkeypatch.setattr(profile_module, "BLOCK_CELLS", block_cells)
    term = randn(2, 2, 5, 9, seed=4)
    profile = distance_profile(term, query_offset=query_offset, causal=causal)
    assert_profile(profile, diagonals(term, query_offset, causal))


def test_distance_profile_of_a_large_term_holds_block_sized_copies():
    """The copies by distance are made per block of rows: a (1, 4, 1024, 1024) float32 term
    (16 MiB) is profiled within a few times its own size, not the ~190 MiB that six float64
    copies of the whole term moved by distance would take."""
    script = (
        "import torch, resource\n"
        "from relpos_core.schemes.profile import distance_profile\n"
        "t = torch.randn(1, 4, 1024, 1024)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "distance_profile(t, causal=True)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert int(done.stdout) < 80 * 2**20, f"profiling grew the peak by {int(done.stdout):,} bytes"
