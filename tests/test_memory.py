"""memory_bytes against Huang et al. (2018) Sec. 3.4.1 and the per-method formulas; the guard."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relpos_core import (
    METHOD_NAMES,
    check_fits,
    device_memory_bytes,
    format_bytes,
    guard,
    logits_bytes,
    memory_bytes,
)
from relpos_core.methods.banded import block_rows


def test_music_transformer_example():
    """L = 2048, D = 512, float32: a^K takes ~8.5 GB, the causal skew's Er ~4.2 MB."""
    for method in ("einsum", "matmul"):
        assert memory_bytes(method, 2048, 512) == 2048 * 2048 * 512 * 4
        assert round(memory_bytes(method, 2048, 512) / 1e9, 2) == 8.59  # "8.5 GB"
    assert memory_bytes("skew", 2048, 512, causal=True) == 2048 * 512 * 4
    assert round(memory_bytes("skew", 2048, 512, causal=True) / 1e6, 2) == 4.19  # "4.2 MB"
    ratio = memory_bytes("einsum", 2048, 512) / memory_bytes("skew", 2048, 512, causal=True)
    assert ratio == 2048  # the skew saves a factor of L


sizes = st.integers(1, 300)


@given(
    n=sizes,
    d=sizes,
    heads=st.integers(1, 16),
    batch=st.integers(1, 8),
    bpv=st.sampled_from([2, 4, 8]),
    k=st.integers(0, 64),
)
def test_formulas_per_method(n, d, heads, batch, bpv, k):
    """einsum/matmul (n, n, d) shared by heads and batch; skew (2n-1, d) or (n, d) causal;
    bucket (b, h, n, 2k+1); banded the same plus one (b, h, rows, n) block; loop one (d,) vector."""
    kw = {"heads": heads, "batch": batch, "bytes_per_value": bpv}
    assert memory_bytes("einsum", n, d, **kw) == n * n * d * bpv
    assert memory_bytes("matmul", n, d, **kw) == n * n * d * bpv
    assert memory_bytes("skew", n, d, **kw) == (2 * n - 1) * d * bpv
    assert memory_bytes("skew", n, d, causal=True, **kw) == n * d * bpv
    bucket = batch * heads * n * (2 * k + 1) * bpv
    assert memory_bytes("bucket", n, d, max_relative_position=k, **kw) == bucket
    block = batch * heads * block_rows(n, n, batch * heads) * n * bpv
    assert memory_bytes("banded", n, d, max_relative_position=k, **kw) == bucket + block
    assert memory_bytes("loop", n, d, **kw) == d * bpv
    assert logits_bytes(n, heads, batch, bpv) == batch * heads * n * n * bpv


def test_every_listed_method_is_accepted():
    for method in METHOD_NAMES:
        assert memory_bytes(method, 8, 4, max_relative_position=2) > 0


@pytest.mark.parametrize("method", ["bucket", "banded"])
def test_bucket_and_banded_need_the_clip_distance(method):
    with pytest.raises(
        ValueError, match=rf"(?s)(?=.*max_relative_position)(?=.*{method})(?=.*None)"
    ):
        memory_bytes(method, 16, 8)


def test_device_memory_of_the_cpu_is_known():
    total = device_memory_bytes("cpu")
    assert total is None or total > 2**20
    assert device_memory_bytes() == total


def test_format_bytes_uses_binary_units():
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(2**20) == "1.0 MiB"
    assert format_bytes(8589934592) == "8.0 GiB"
    assert format_bytes(3 * 2**40) == "3.0 TiB"


def test_check_fits_refuses_above_the_limit_only():
    check_fits("small", 1000, max_bytes=1000)
    with pytest.raises(ValueError, match=r"big needs about 1000 B, more than max_bytes = 999 "):
        check_fits("big", 1000, max_bytes=999)
    with pytest.raises(ValueError, match="the device's total memory"):
        check_fits("huge", 2**70, max_bytes=None)


def _cgroup_tree(tmp_path, proc_lines, files):
    """A fake /proc/self/cgroup and /sys/fs/cgroup: ``files`` maps paths under the root to text."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    proc = tmp_path / "cgroup"
    proc.write_text("\n".join(proc_lines) + "\n")
    root = tmp_path / "sys"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text + "\n")
    return str(proc), str(root)


def test_cgroup_v1_limit_is_the_smallest_on_the_path(tmp_path):
    """A v1 child group without its own limit (the kernel's 'unlimited' 2^63 - 4096) is bound by
    its parent's 690 MiB; another controller's line is ignored."""
    proc, root = _cgroup_tree(
        tmp_path,
        ["9:name=systemd:/", "4:cpu,cpuacct:/app", "5:memory:/app/web"],
        {
            "memory/memory.limit_in_bytes": str(2**63 - 4096),
            "memory/app/memory.limit_in_bytes": str(690 * 2**20),
            "memory/app/web/memory.limit_in_bytes": str(2**63 - 4096),
        },
    )
    assert guard.cgroup_memory_limit(proc, root) == 690 * 2**20


def test_cgroup_v2_limit_and_no_limit(tmp_path):
    proc, root = _cgroup_tree(
        tmp_path, ["0::/user/app"], {"user/app/memory.max": "2899102924", "user/memory.max": "max"}
    )
    assert guard.cgroup_memory_limit(proc, root) == 2899102924
    proc, root = _cgroup_tree(tmp_path / "free", ["0::/"], {"memory.max": "max"})
    assert guard.cgroup_memory_limit(proc, root) is None
    assert guard.cgroup_memory_limit(str(tmp_path / "missing"), root) is None


def test_the_cpu_total_is_the_cgroup_limit_when_smaller(monkeypatch):
    monkeypatch.setattr(guard, "_physical_memory", lambda: 24 * 2**30)
    monkeypatch.setattr(guard, "cgroup_memory_limit", lambda: 690 * 2**20)
    assert device_memory_bytes("cpu") == 690 * 2**20
    with pytest.raises(ValueError, match="more than max_bytes = 723517440"):
        check_fits("demo", 700 * 2**20, max_bytes=None)
    monkeypatch.setattr(guard, "cgroup_memory_limit", lambda: None)
    assert device_memory_bytes("cpu") == 24 * 2**30
