"""The benchmark's GPU table (``--gpu-table``): its command, its goals, and a clean exit where
there is no CUDA device. No timing is asserted; the table itself is measured on a GPU."""

import pytest
import torch

from relpos_lab import bench


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA machine runs the table itself")
def test_without_cuda_the_gpu_table_says_so_and_runs_nothing(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert bench.main(["--gpu-table", "--json", str(out)]) is None
    printed = capsys.readouterr().out
    assert "torch sees no CUDA device here, so nothing was run" in printed
    assert not out.exists()


def test_the_gpu_table_is_the_issue_s_configuration():
    args = bench._parser().parse_args(bench.gpu_table_argv())
    assert (args.device, args.dtype, args.mode, args.causal) == ("cuda", "bf16", "train", False)
    assert args.n == [1024, 4096, 16384]
    assert (args.batch, args.heads, args.d, args.k) == (4, 16, 64, 64)
    assert args.methods == ["sdpa", "flex_key", "flex", "triton"]
    assert args.budget_mb >= 1e4  # every row runs on a large GPU


def row(method, n, ms, ratio, mb):
    return {"method": method, "n": n, "median_ms": ms, "ratio_to_sdpa": ratio, "peak_mb": mb}


def test_goal_lines_judge_time_memory_and_flex_key():
    report = {
        "config": {"n": [1024, 4096, 16384]},
        "results": [
            row("sdpa", 1024, 1.0, 1.0, 10.0),
            row("flex_key", 1024, 3.0, 3.0, 20.0),
            row("triton", 1024, 1.9, 1.9, 14.0),  # within 2x, 1.4x memory, ahead
            row("sdpa", 4096, 2.0, 1.0, 100.0),
            row("flex_key", 4096, 2.5, 1.25, 200.0),
            row("triton", 4096, 3.2, 1.6, 200.0),  # past 1.5x, 2x memory, behind
            {"method": "triton", "n": 16384, "skipped": "cuda only"},
        ],
    }
    first, second, third = bench.goal_lines(report)
    assert first == (
        "n = 1024: time 1.90x SDPA (goal 2.0x: met), memory 1.40x SDPA (goal 1.5x: met), "
        "1.9 ms vs flex_key 3.0 ms (goal: ahead: met)"
    )
    assert "time 1.60x SDPA (goal 1.5x: missed)" in second
    assert "memory 2.00x SDPA (goal 1.5x: missed)" in second
    assert "(goal: ahead: missed)" in second
    assert third == "n = 16384: triton or sdpa not measured"


def test_the_triton_and_flex_rows_need_cuda():
    inputs = bench.make_inputs(6, 16, 2, 2)
    for method in ("triton", "flex"):
        with pytest.raises(ValueError, match="cuda only"):
            bench.runner(method, inputs)
