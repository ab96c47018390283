"""The estimate the guard trusts (``attention_bytes``) bounds each method's measured peak.

The peak is measured as ``scripts/measure_memory.py`` does: the running sum of the
allocation and free events torch's CPU allocator reports to the profiler, an exact count of
live tensor bytes that does not depend on timing or on the machine's load. Small sizes only;
the script measures n = 1024 and beyond.
"""

import sys
from pathlib import Path

import pytest
import torch

from relpos_core import METHOD_NAMES, attention_bytes, get_method, relative_attention
from scripts.measure_memory import Case, estimate, measure, peak_bytes
from tests import call_peaks, resident

MODES = ("forward", "train", "trace", "weights", "train+weights")
SHAPES = [
    (1, 2, 48, 48, 8, 8, 3),  # square
    (2, 1, 20, 36, 4, 6, 40),  # rectangular, queries at the last positions, k beyond n
]


def cases():
    for method in METHOD_NAMES:
        for shape in SHAPES:
            for mode in MODES:
                n = 6 if method == "loop" else None  # the definition is slow by design
                b, h, n_q, n_k, d, d_v, k = shape
                n_q, n_k = (n, n) if n else (n_q, n_k)
                if method == "skew":
                    n_k = n_q
                variant = {"causal": True, "mask": "key"} if mode == "trace" else {}
                yield Case(method, b, h, n_q, n_k, d, d_v, k, mode, **variant)


@pytest.mark.parametrize(
    "case", list(cases()), ids=lambda c: f"{c.method}-{c.n_q}x{c.n_k}-{c.mode}"
)
def test_the_measured_peak_stays_under_the_estimate(case):
    assert measure(case) <= estimate(case)


@pytest.mark.parametrize("method", ["banded", "bucket", "skew", "einsum"])
def test_the_estimate_is_not_far_above_the_peak(method):
    """An estimate far above the truth would refuse calls that fit: within 2x at n = 128."""
    for mode in ("forward", "train"):
        case = Case(method, 1, 4, 128, 128, 16, 16, 8, mode)
        assert estimate(case) <= 2 * measure(case), mode


def test_the_measurement_counts_what_a_call_holds():
    """The counter against known allocations: two 1 MiB tensors at once, then one freed."""

    def call():
        a = torch.empty(2**18)  # 1 MiB of float32
        b = torch.empty(2**18)
        del a
        c = torch.empty(2**17)
        return b, c

    assert peak_bytes(call) == 2 * 2**20


def test_a_call_at_the_estimate_runs_and_one_byte_less_is_refused():
    q = torch.randn(1, 2, 40, 8)
    table = torch.randn(7, 8)
    need = attention_bytes(get_method("einsum"), (1, 2, 40, 40, 8, 8), 3, causal=True)
    relative_attention(q, q, q, table, table, method="einsum", causal=True, max_bytes=need)
    with pytest.raises(ValueError, match="needs about"):
        relative_attention(q, q, q, table, table, method="einsum", causal=True, max_bytes=need - 1)


# The resident set of the fused path, in a child process (``tests.resident``): a causal block
# is as wide as the last key it sees, and temporaries made per block grew with it; the heap
# kept every one it freed (at n = 131072 the resident set reached 11x the estimate).
RESIDENT = [
    Case("banded", 1, 1, 8192, 8192, 8, 8, 4, "forward", causal=True),
    Case("banded", 1, 1, 8192, 8192, 8, 8, 4, "train", causal=True),
    Case("banded", 1, 1, 8192, 8192, 8, 8, 4, "forward", causal=True, dropout=0.1),
    Case("banded", 1, 1, 8192, 8192, 8, 8, 4, "train", causal=True, mask="key"),
    Case("banded", 1, 1, 8192, 8192, 8, 8, 4, "train"),
]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not Path("/proc/self/clear_refs").exists(),
    reason="reads the resident set's high-water mark from /proc (Linux)",
)
@pytest.mark.parametrize(
    "case",
    RESIDENT,
    ids=lambda c: f"{c.mode}-{'causal' if c.causal else 'full'}-{c.mask}-p{c.dropout}",
)
def test_the_resident_set_of_the_fused_path_stays_near_the_estimate(case):
    """The resident set is what the machine sees; it may hold a little more than the live
    tensors (the allocator's own pieces), never a multiple of the estimate."""
    assert resident.run(case) <= 1.5 * estimate(case)


def test_every_public_call_is_guarded_by_an_estimate_near_its_peak():
    """Each public call that allocates (``tests.call_peaks``: every method, modes, half
    precision, head views, expanded inputs, the schemes) asks the guard about an estimate
    that its measured peak stays within 1.5x of, and that is not far above it either."""
    results = call_peaks.run()
    unguarded = sorted(name for name, (need, _) in results.items() if need is None)
    assert not unguarded, f"no guard asked before these allocated: {unguarded}"
    over = {n: round(peak / need, 2) for n, (need, peak) in results.items() if peak > 1.5 * need}
    assert not over, f"measured peak / estimate above 1.5: {over}"
    cautious = {
        n: round(need / peak, 2) for n, (need, peak) in results.items() if need > 3 * peak + 2**20
    }
    assert not cautious, f"estimate / measured peak above 3: {cautious}"
