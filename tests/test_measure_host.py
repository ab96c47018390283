"""scripts/measure_host.py's parts that need no browser: cgroup files, the command that joins a
cgroup, the spinning neighbours and the tables. One test uses a real cgroup-v1 memory limit
where this process may create one (root on a cgroup-v1 host) and is skipped elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.measure_host import (
    CGROUP_CPU_ROOT,
    CGROUP_MEMORY_ROOT,
    MIB,
    busy_cpu,
    busy_ratio,
    cpu_cgroup,
    join_cgroup_prefix,
    keypress_markdown,
    memory_cgroup,
    memory_markdown,
    memory_totals,
    normal_query,
    oom_kills,
    parse_memory_stat,
    table,
)

MACHINE = {
    "cpu": "CPU",
    "cores": 2,
    "torch": "2.13.0",
    "load_avg_start": (1, 1, 1),
    "load_avg_end": (2, 2, 2),
}


def test_cgroup_files_are_read() -> None:
    assert oom_kills("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3
    assert oom_kills("oom_kill_disable 0\nunder_oom 0\n") == 0  # an older kernel: no count
    assert parse_memory_stat("cache 4096\nrss 8192\ntotal_rss 8192\n") == {
        "cache": 4096,
        "rss": 8192,
        "total_rss": 8192,
    }


def test_queries_get_their_question_mark() -> None:
    assert [normal_query(q) for q in ("", "n=1024", "?n=1024")] == ["", "?n=1024", "?n=1024"]


def test_the_prefix_writes_the_pid_that_then_runs_the_command(tmp_path: Path) -> None:
    procs = tmp_path / "cgroup.procs"
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    done = subprocess.run([*join_cgroup_prefix(procs), *command], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert procs.read_text().strip() == done.stdout.strip()  # exec kept the PID


def test_spinning_neighbours_are_killed_on_exit() -> None:
    with busy_cpu(2) as spinners:
        assert [spinner.poll() for spinner in spinners] == [None, None]
    assert all(spinner.returncode is not None for spinner in spinners)


@pytest.mark.skipif(
    not os.access(CGROUP_MEMORY_ROOT, os.W_OK), reason="needs a writable cgroup-v1 memory root"
)
def test_a_process_over_the_limit_is_killed_and_counted() -> None:
    grow = "x = b'x' * (300 << 20)"  # written, so every page is really used
    with memory_cgroup(100) as cgroup:
        assert int(cgroup.read("memory.limit_in_bytes")) == 100 * MIB
        done = subprocess.run([*cgroup.prefix, sys.executable, "-c", grow], capture_output=True)
        assert done.returncode == -9  # SIGKILL from the OOM killer
        assert cgroup.oom_kills() == 1
        assert 50 * MIB < cgroup.peak() <= 100 * MIB
        path = cgroup.path
    assert not path.exists()


SPIN_CPU_S = """
import time
start = time.monotonic()
while time.process_time() < 0.2:  # 0.2 s of this process's own CPU time
    pass
print(time.monotonic() - start)
"""


@pytest.mark.skipif(
    not os.access(CGROUP_CPU_ROOT, os.W_OK), reason="needs a writable cgroup-v1 cpu root"
)
def test_a_cpu_quota_stretches_a_spin_to_its_share() -> None:
    """0.2 s of CPU under a quarter core's quota takes at least 0.8 s less one period's
    allowance (25 ms): asserted with margin at 0.5 s; alone it takes 0.2 s."""
    with cpu_cgroup(0.25) as prefix:
        path = Path(prefix[-1]).parent
        assert int((path / "cpu.cfs_quota_us").read_text()) == 25_000
        done = subprocess.run([*prefix, sys.executable, "-c", SPIN_CPU_S], capture_output=True)
        assert done.returncode == 0, done.stderr
        assert float(done.stdout) >= 0.5
    assert not path.exists()


def view(
    url: str, drew: bool = True, boxes: int = 0, alive: bool = True, refusals: int = 0
) -> dict:
    return {
        "url": url,
        "drew": drew,
        "failure": None if drew else "ServerGone: gone",
        "error_boxes": boxes,
        "error_texts": ["boom"] * boxes,
        "refusals": ["window profile needs about 32.5 MiB"] * refusals,
        "charts": 1,
        "server_alive": alive,
        "seconds": 1.0,
    }


def memory_report(views: list[list[dict]], alive_end: bool) -> dict:
    cgroup = {"peak_bytes": 690 * MIB, "usage_bytes": 600 * MIB, "oom_kills": 0 if alive_end else 1}
    result = {
        "sessions": len(views),
        "views": views,
        "server_alive_end": alive_end,
        "server_exit_code": None if alive_end else -9,
        "cgroup": cgroup,
        "rss_peak_bytes": 650 * MIB,
        "wall_s": 12.5,
        "session_errors": [],
    }
    settings = {
        "no_limit": False,
        "limit_mb": 690.0,
        "drop_caches": False,
        "view_timeout": 120.0,
        "views": ["/", "/lookup"],
        "pages": ["overview", "lookup"],
        "queries": [""],
    }
    return {"machine": MACHINE, "settings": settings, "results": [result]}


def test_a_run_where_the_server_died_fails_and_says_where() -> None:
    report = memory_report([[view("/"), view("/lookup", drew=False, alive=False)]], False)
    totals = memory_totals(report["results"][0], views_per_session=2)
    assert (totals["drawn"], totals["total"], totals["ok"]) == (1, 2, False)
    text = memory_markdown(report)
    assert "| 1 | 1 / 2 | 0 | 0 | no (exit -9) | 690 | 600 | 1 | 650 | 12.5 |" in text
    assert "first failing view /lookup: ServerGone: gone" in text


def test_a_view_refused_in_words_is_counted_and_named() -> None:
    report = memory_report([[view("/"), view("/family?n=1024", refusals=1)]], True)
    totals = memory_totals(report["results"][0], views_per_session=2)
    assert totals["refused"] == 1 and totals["ok"]  # drawn, in words: no dead server
    text = memory_markdown(report)
    assert "| 1 | 2 / 2 | 0 | 1 | yes |" in text
    assert "1 views refused, the first /family?n=1024: window profile needs about" in text


def test_an_error_box_fails_a_run_and_a_clean_run_passes() -> None:
    boxed = memory_report([[view("/"), view("/lookup", boxes=1)]], True)
    assert not memory_totals(boxed["results"][0], 2)["ok"]
    clean = memory_report([[view("/"), view("/lookup")], [view("/"), view("/lookup")]], True)
    assert memory_totals(clean["results"][0], 2)["ok"]


def keypress_run(threads: int, busy: int, medians: dict[str, float]) -> dict:
    pages = {}
    for stem, median in medians.items():
        stat = {"median": median, "min": median, "max": median, "n": 1}
        pages[stem] = {"presses": [{}], "redraw_ms": stat, "idle_ms": stat, "error_boxes": 0}
    return {"threads": threads, "busy": busy, "pages": pages}


def test_busy_over_quiet_is_the_median_of_the_pages_ratios() -> None:
    runs = [
        keypress_run(1, 0, {"a": 100, "b": 200, "c": 100}),
        keypress_run(1, 2, {"a": 300, "b": 200, "c": 150}),
        keypress_run(2, 2, {"a": 500, "b": 500, "c": 500}),  # no quiet run to compare with
    ]
    assert busy_ratio(runs, 1, 2, "redraw_ms") == 1.5  # ratios 3, 1, 1.5
    assert busy_ratio(runs, 1, 0, "redraw_ms") == 1.0
    assert busy_ratio(runs, 2, 2, "redraw_ms") is None
    report = {
        "machine": MACHINE,
        "settings": {"repeats": 1, "pages": ["a", "b", "c"]},
        "results": runs,
    }
    text = keypress_markdown(report)
    assert "| page | threads 1, busy 0 | threads 1, busy 2 | threads 2, busy 2 |" in text
    assert "| busy / quiet (median over pages) | 1.00x | 1.50x | – |" in text


def test_tables_align_numbers_right() -> None:
    assert table(["a", "b"], [["x", 1]]).splitlines() == ["| a | b |", "|---|---:|", "| x | 1 |"]
