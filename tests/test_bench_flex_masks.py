"""scripts/bench_flex_masks.py without timing: its table's arithmetic on hand numbers, and the
masks it measures skip the share of 128-blocks their shapes give in closed form."""

from __future__ import annotations

import pytest
import torch

from relpos_core import mask_mods as mm
from scripts.bench_flex_masks import BLOCK, Row, masks, paired_ratio, table


def test_table_writes_times_in_ms_the_ratio_and_the_share_skipped():
    rows = [
        Row(1024, "causal", 28 / 64, 0.0123, 0.010, 0.020, 0.5, 12.0, 3e-7),
        Row(4096, "none (every block full)", 0.0, None, 0.75, 0.25, 3.0, 15.0, 1e-6, "eager (x)"),
    ]
    lines = table(rows).splitlines()
    assert len(lines) == 4 and lines[1].count("|") == lines[0].count("|") == 10
    assert lines[2] == "| 1024 | causal | 44 % | 12.3 | 10.0 | 20.0 | 0.50 | 3.0e-07 | compiled |"
    assert lines[3] == (
        "| 4096 | none (every block full) | 0 % | no mask | 750.0 | 250.0 | 3.00 | 1.0e-06 "
        "| eager (x) |"
    )


def test_the_ratio_is_the_median_of_each_rounds_ratio():
    # rounds 2/1, 3/6, 10/4: ratios 2, 0.5, 2.5 -> 2 (the medians' quotient would be 3/4)
    assert paired_ratio([2.0, 3.0, 10.0], [1.0, 6.0, 4.0]) == 2.0
    assert paired_ratio([1.0, 4.0], [2.0, 2.0]) == pytest.approx((0.5 + 2.0) / 2)


@pytest.mark.parametrize("n", [1024, 4096])
def test_the_measured_masks_skip_what_their_shapes_say(n):
    b = n // BLOCK  # blocks per side
    # causal: the b(b - 1)/2 blocks above the diagonal; window 128 = one block: all but the
    # diagonal and the one below it; sinks add the first column (the sinks' block) below those;
    # prefix n/4: the blocks above the diagonal and right of the prefix's b/4 columns; 4 documents:
    # all but the 4 diagonal squares of (b/4)^2; causal AND document: those squares' upper parts
    q = b // 4
    want = {
        "none (every block full)": 0,
        "causal": b * (b - 1) // 2,
        "sliding window 128": b * b - b - (b - 1),
        "sinks 4 + window 128": b * b - b - (b - 1) - (b - 2),
        f"prefix-LM, prefix {n // 4}": q * (b - q) + (b - q) * (b - q - 1) // 2,
        "document, 4 equal segments": b * b - 4 * q * q,
        "causal AND document": b * b - 4 * q * (q + 1) // 2,
    }
    measured = masks(n)
    assert [name for name, _ in measured] == list(want)
    for name, mod in measured[1:]:
        _, skipped = mm.block_kinds(mod, n, n, BLOCK)
        assert skipped == pytest.approx(want[name] / b**2), name
    segments = measured[5][1].closes_over["segments"]
    assert torch.equal(segments.bincount(), torch.full((4,), n // 4))
