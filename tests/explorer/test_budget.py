"""explorer.frame.budget: the estimates against hand-computed byte counts, and the refusals."""

from __future__ import annotations

import pytest

from explorer.frame.budget import (
    REQUEST_BUDGET_BYTES,
    estimate_bytes,
    format_bytes,
    largest_n,
    plan_compute,
)
from relpos_core import memory_bytes

MiB = 2**20


def test_budget_is_256_mib() -> None:
    assert REQUEST_BUDGET_BYTES == 268_435_456


def test_music_transformer_einsum_by_hand() -> None:
    # a^K (2048, 2048, 512) float32 + int64 index (2048, 2048) + one kept (1, 1, 2048, 2048)
    expected = 2048 * 2048 * 512 * 4 + 2048 * 2048 * 8 + 2048 * 2048 * 4
    assert expected == 8_640_266_240
    assert estimate_bytes("einsum", 2048, 512, k=16) == expected
    assert estimate_bytes("matmul", 2048, 512, k=16) == expected


def test_einsum_on_a_block_of_rows_by_hand() -> None:
    # 16 query rows of n = 4096, d = 64: a^K (16, 4096, 64), index (16, 4096), 2 kept (1,8,16,4096)
    expected = 16 * 4096 * 64 * 4 + 16 * 4096 * 8 + 2 * 8 * 16 * 4096 * 4
    assert expected == 21_495_808
    assert estimate_bytes("einsum", 4096, 64, 8, k=16, rows=16, traces=2) == expected


def test_skew_counts_its_relative_layout_copies() -> None:
    # n = 4096, d = 64, 8 heads: Er (8191, 64), three (1, 8, 4096, 8192) copies, one kept logits
    er = 8191 * 64 * 4
    copies = 3 * 8 * 4096 * 8192 * 4
    kept = 8 * 4096 * 4096 * 4
    assert er + copies + kept == 3_760_193_280
    assert estimate_bytes("skew", 4096, 64, 8, k=16) == 3_760_193_280
    # causal: Er has n rows, not 2n - 1; rows are ignored (the skew is all rows or nothing)
    causal = 4096 * 64 * 4 + copies + kept
    assert estimate_bytes("skew", 4096, 64, 8, k=16, causal=True, rows=10) == causal


def test_bucket_and_banded_by_hand() -> None:
    # bucket, n = 512, 8 heads, k = 16: Q w^T (1,8,512,33), index (512,512) int64, 3 kept
    bucket = 8 * 512 * 33 * 4 + 512 * 512 * 8 + 3 * 8 * 512 * 512 * 4
    assert bucket == 27_803_648
    assert estimate_bytes("bucket", 512, 64, 8, k=16, traces=3) == bucket
    # banded, n = 4096, 8 heads: Q w^T plus its block buffer(s), nothing kept; the block size
    # is the banded module's to tune, so the buffer comes from memory_bytes
    buffers = memory_bytes("banded", 4096, 64, 8, max_relative_position=16) - 8 * 4096 * 33 * 4
    assert 0 < buffers <= 2 * 8 * 256 * 4096 * 4  # at most two (8, 256, 4096) float32 blocks
    assert estimate_bytes("banded", 4096, 64, 8, k=16, traces=0) == 8 * 4096 * 33 * 4 + buffers


def test_baselines_hold_only_what_they_keep() -> None:
    assert estimate_bytes("sdpa", 4096, 64, 8, k=0, traces=0) == 0
    assert estimate_bytes("plain", 1024, 64, 8, k=0, traces=2) == 2 * 8 * 1024 * 1024 * 4


def test_a_plan_within_budget_carries_its_numbers() -> None:
    plan = plan_compute("attention", "bucket", 4096, 16, 1, k=2, rows=512, traces=6)
    assert plan.bytes == 1 * 512 * 5 * 4 + 512 * 4096 * 8 + 6 * 512 * 4096 * 4
    assert plan.bytes == 67_119_104 and plan.budget == REQUEST_BUDGET_BYTES
    assert (plan.n, plan.rows, plan.heads, plan.traces) == (4096, 512, 1, 6)


def test_over_budget_names_parameters_values_estimate_and_budget() -> None:
    with pytest.raises(ValueError) as caught:
        plan_compute("relative logits", "einsum", 2048, 512, k=16)
    message = str(caught.value)
    for part in (
        "relative logits",
        "'einsum'",
        "n (sequence length) = 2048",
        "d (head dim) = 512",
        "heads = 1",
        "8.0 GiB",  # 8_640_266_240 B
        "256.0 MiB",
    ):
        assert part in message, (part, message)


def test_the_limit_is_inclusive_and_custom_budgets_work() -> None:
    need = estimate_bytes("plain", 64, 8, k=0, traces=2)  # 2 * 64 * 64 * 4 = 32768
    assert need == 32_768
    assert plan_compute("x", "plain", 64, 8, k=0, traces=2, budget=need).bytes == need
    with pytest.raises(ValueError, match="32.0 KiB.*32.0 KiB"):
        plan_compute("x", "plain", 64, 8, k=0, traces=2, budget=need - 1)


def test_largest_n_is_the_boundary() -> None:
    # einsum, d = 512, one kept tensor: n^2 * (512*4 + 8 + 4) = 2060 n^2 bytes
    n = largest_n("einsum", 512, k=16)
    assert n == 360 and 2060 * 360**2 <= 256 * MiB < 2060 * 361**2
    assert largest_n("banded", 64, 8, k=16, traces=0, n_max=65536) == 65536


def test_bad_arguments_name_themselves() -> None:
    with pytest.raises(ValueError, match="method must be one of"):
        estimate_bytes("flash", 8, 8, k=1)
    with pytest.raises(ValueError, match=r"rows must be in \[1, 8\], got 9"):
        estimate_bytes("bucket", 8, 8, k=1, rows=9)
    with pytest.raises(ValueError, match="k \\(clip distance\\) must be >= 0, got -1"):
        estimate_bytes("bucket", 8, 8, k=-1)


def test_format_bytes() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(8_640_266_240) == "8.0 GiB"
