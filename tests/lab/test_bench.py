"""The benchmark runs at tiny sizes and writes the JSON it promises. No timing is asserted."""

import json

import pytest
import torch

from relpos_lab import bench

ROW_KEYS = {"method", "n", "median_ms", "sdpa_ms", "ratio_to_sdpa", "peak_mb", "skipped"}


def test_bench_writes_json_with_the_expected_keys(tmp_path, capsys):
    out = tmp_path / "sub" / "bench.json"
    argv = ["--n", "8", "12", "--d", "4", "--heads", "2", "--k", "2", "--repeats", "2"]
    argv += ["--methods", "sdpa", "banded", "bucket", "--json", str(out)]
    bench.main(argv)
    report = json.loads(out.read_text())
    assert set(report) == {"machine", "config", "results", "load_average_1min_at_end"}
    assert {"cpu", "cores", "torch"} <= set(report["machine"])
    assert report["config"]["n"] == [8, 12] and report["config"]["k"] == 2
    assert len(report["results"]) == 6
    for row in report["results"]:
        assert ROW_KEYS <= set(row)
        assert row["skipped"] is None
        assert row["median_ms"] > 0 and row["ratio_to_sdpa"] > 0
        assert row["peak_mb"] >= 0
    printed = capsys.readouterr().out
    assert "| method | n = 8 | n = 12 |" in printed
    assert "| banded |" in printed


def test_methods_over_the_memory_budget_are_skipped_not_run(tmp_path, capsys):
    out = tmp_path / "bench.json"
    argv = ["--n", "64", "--d", "8", "--heads", "1", "--k", "1", "--repeats", "1", "--no-memory"]
    argv += ["--methods", "banded", "einsum", "--budget-mb", "0.1", "--json", str(out)]
    bench.main(argv)
    rows = {row["method"]: row for row in json.loads(out.read_text())["results"]}
    assert rows["einsum"]["skipped"].startswith("needs ~")
    assert "median_ms" not in rows["einsum"]
    assert "skipped (needs ~" in capsys.readouterr().out


def test_every_method_runs_and_matches_plain_shapes():
    inputs = bench.make_inputs(6, 4, 2, 2)
    for method in bench.METHODS:
        if method in bench.GPU_METHODS:  # FlexAttention rows: CUDA only
            with pytest.raises(ValueError, match="cuda only"):
                bench.runner(method, inputs)
            continue
        assert bench.runner(method, inputs)().shape == (1, 2, 6, 4)
    with pytest.raises(ValueError, match="method must be one of"):
        bench.runner("loop", inputs)


def test_causal_rows_mask_both_sdpa_and_the_relative_call(tmp_path):
    """With --causal, SDPA runs is_causal and each method runs causal=True: with zero tables the
    relative rows equal SDPA; the child process measures the same causal call."""
    inputs = list(bench.make_inputs(12, 4, 2, 2))
    inputs[3], inputs[4] = torch.zeros_like(inputs[3]), torch.zeros_like(inputs[4])
    sdpa = bench.runner("sdpa", tuple(inputs), causal=True)()
    q, k, v = inputs[:3]
    torch.testing.assert_close(sdpa, torch.nn.functional.scaled_dot_product_attention(
        q, k, v, is_causal=True
    ))  # fmt: skip
    for method in ("banded", "bucket"):
        torch.testing.assert_close(bench.runner(method, tuple(inputs), causal=True)(), sdpa)
    out = tmp_path / "bench.json"
    argv = ["--n", "12", "--d", "4", "--heads", "2", "--k", "2", "--repeats", "1", "--causal"]
    bench.main(argv + ["--methods", "sdpa", "plain", "banded", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["config"]["causal"] is True
    assert [row["method"] for row in report["results"]] == ["sdpa", "banded"]  # no plain row


def test_markdown_table_marks_skips():
    report = {
        "results": [
            {"method": "sdpa", "n": 8, "median_ms": 1.0, "ratio_to_sdpa": 1.0, "peak_mb": 2.0},
            {"method": "einsum", "n": 8, "skipped": "needs ~9 MB > budget 1 MB"},
        ]
    }
    table = bench.markdown_table(report)
    assert "| sdpa | 1.0 ms · 2.0 MB · 1.00x |" in table
    assert "| einsum | skipped (needs ~9 MB > budget 1 MB) |" in table


def test_bad_arguments_exit_with_a_message():
    with pytest.raises(SystemExit, match="--heads must be >= 1"):
        bench.main(["--heads", "0"])


@pytest.mark.parametrize("mode", ["train", "layer"])
def test_training_modes_write_rows_for_every_method(tmp_path, mode):
    out = tmp_path / "bench.json"
    argv = ["--mode", mode, "--n", "8", "--d", "4", "--heads", "2", "--k", "2", "--repeats", "1"]
    argv += ["--methods", "sdpa", "plain", "banded", "bucket", "--no-memory", "--json", str(out)]
    bench.main(argv)
    report = json.loads(out.read_text())
    assert report["config"]["mode"] == mode
    methods = {row["method"] for row in report["results"]}
    assert methods == (
        {"sdpa", "banded", "bucket"} if mode == "layer" else {"sdpa", "plain", "banded", "bucket"}
    )
    assert all(row["median_ms"] > 0 for row in report["results"])


def test_train_mode_computes_the_same_gradients_with_every_relative_method():
    grads = {}
    for method in bench.RELATIVE_METHODS:
        inputs = bench.make_inputs(6, 4, 2, 2, grad=True)
        bench.runner(method, inputs, "train")()
        grads[method] = [t.grad.clone() for t in inputs]
    for method, got in grads.items():
        for g, want in zip(got, grads["einsum"], strict=True):
            assert g.abs().sum() > 0, method
            torch.testing.assert_close(g, want, atol=1e-5, rtol=1e-4)


def test_layer_mode_runs_the_relative_layer_and_its_sdpa_twin():
    inputs = bench.make_inputs(5, 4, 2, 1)
    for method in ("sdpa", "banded"):
        out = bench.runner(method, inputs, "layer")()
        assert out.shape == (1, 5, 8)
    with pytest.raises(ValueError, match="SDPA layer only"):
        bench.runner("plain", inputs, "layer")


def test_busy_rows_report_the_worst_call_and_stop_their_spinners(tmp_path, capsys, monkeypatch):
    """--busy N times each row beside N spinning processes, reports the worst call and the worst
    per-repeat ratio beside the medians, and leaves no spinner behind."""
    started = []
    popen = bench.subprocess.Popen

    def spy(*args, **kwargs):
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(bench.subprocess, "Popen", spy)
    out = tmp_path / "bench.json"
    argv = ["--n", "16", "--d", "4", "--heads", "1", "--k", "2", "--repeats", "3", "--no-memory"]
    bench.main([*argv, "--methods", "sdpa", "banded", "--busy", "1", "--json", str(out)])
    report = json.loads(out.read_text())
    assert report["config"]["busy"] == 1
    assert len(started) == 2  # one spinner for each row's timing
    assert all(p.poll() is not None for p in started)  # all stopped
    for row in report["results"]:
        assert row["worst_ms"] >= row["median_ms"] > 0
        assert row["sdpa_worst_ms"] >= row["sdpa_ms"] > 0
        assert row["worst_ratio"] >= row["ratio_to_sdpa"] > 0
    printed = capsys.readouterr().out
    assert "1 busy processes beside it" in printed and "(worst " in printed
    with pytest.raises(SystemExit, match="--busy must be >= 0, got -1"):
        bench.main([*argv, "--busy", "-1"])
