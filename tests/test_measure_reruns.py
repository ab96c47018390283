"""scripts/measure_reruns.py on one small page: its reruns run the page, the warm ones hit the
caches and the cold ones miss them, under the visitor's default (trained) weights, where the
seed control is disabled, and under random weights."""

from __future__ import annotations

import pytest

from scripts.measure_reruns import measure


@pytest.mark.parametrize("weights", ["trained", "random"])
def test_cold_reruns_compute_and_warm_ones_do_not(weights: str) -> None:
    row = measure(8, "lookup", repeats=2, d_model=16, heads=2, weights=weights)
    assert row["page"] == "lookup" and row["weights"] == weights
    assert row["warm_ms"] > 0 and row["cold_ms"] > 0
    assert row["warm_computed"] == 0  # nothing changed: every view from the caches
    assert row["cold_computed"] >= 2  # a new k or seed: at least one view per rerun computed
