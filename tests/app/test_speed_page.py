"""The Speed & memory page: the memory chart is memory_bytes, a click measures, budgets refuse."""

from __future__ import annotations

import base64

import numpy as np

from explorer.stories.speed import views as speed
from relpos_core import logits_bytes, memory_bytes
from tests.app.conftest import assert_clean, chart_keys, chart_spec, open_page


def decode(value: dict | list) -> np.ndarray:
    if isinstance(value, list):
        return np.asarray(value, dtype=np.float64)
    return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))


def traces_by_name(at, key: str) -> dict[str, dict]:
    return {trace["name"]: trace for trace in chart_spec(at, key)["data"]}


def test_memory_chart_is_memory_bytes_with_the_music_transformer_point() -> None:
    at = open_page("speed", d_model="64", heads="4", k="3")  # head dim 16
    assert_clean(at)
    traces = traces_by_name(at, "speed_memory")
    ns = decode(traces["einsum"]["x"]).astype(int)
    assert ns[0] == 16 and ns[-1] == 65536
    for method in ("einsum", "matmul", "skew", "bucket", "banded", "loop"):
        expected = [memory_bytes(method, int(n), 16, 4, max_relative_position=3) for n in ns]
        name = speed.MEMORY_LABELS.get(method, method)
        np.testing.assert_array_equal(decode(traces[name]["y"]), expected)
    causal = [memory_bytes("skew", int(n), 16, 4, causal=True) for n in ns]
    np.testing.assert_array_equal(decode(traces["skew (causal)"]["y"]), causal)
    floor = [logits_bytes(int(n), 4) for n in ns]
    np.testing.assert_array_equal(decode(traces["fp32 logits (b, h, n, n)"]["y"]), floor)
    marked = traces["Music Transformer, n = 2048, d_model = 512"]
    np.testing.assert_array_equal(decode(marked["x"]), [2048, 2048])
    np.testing.assert_array_equal(decode(marked["y"]), [2048 * 2048 * 512 * 4, 2048 * 512 * 4])
    assert "8.6 GB" in marked["text"][0] and "4.2 MB" in marked["text"][1]
    assert "speed_timing" not in chart_keys(at)  # nothing measured before the click


def test_measure_now_draws_the_timing_chart_and_table() -> None:
    at = open_page("speed")
    at.multiselect(key="speed_methods").set_value(["sdpa", "banded", "bucket"]).run()
    at.select_slider(key="speed_max_n").set_value(32).run()
    assert at.slider(key="speed_repeats").value == 11  # enough repeats for quartiles by default
    at.slider(key="speed_repeats").set_value(5).run()
    at.button(key="speed_measure").click().run()
    assert_clean(at)
    traces = traces_by_name(at, "speed_timing")
    assert set(traces) == {"sdpa", "banded", "bucket"}
    for trace in traces.values():
        np.testing.assert_array_equal(decode(trace["x"]), [16, 32])
        assert (decode(trace["y"]) > 0).all()
        bars = trace["error_y"]  # the interquartile range around the median
        assert bars["type"] == "data" and not bars["symmetric"]
        assert (decode(bars["array"]) >= 0).all() and (decode(bars["arrayminus"]) >= 0).all()
    table = markdown_rows(at, "| method |")  # a markdown table: no pandas on the server
    assert [row[0] for row in table[1:]] == ["sdpa", "banded", "bucket"]
    assert table[0] == ["method", "n = 16", "n = 32"]
    shown = {(row[0], n): row[1 + c] for row in table[1:] for c, n in enumerate((16, 32))}
    for name, trace in traces.items():  # the table holds the charted quartiles, to 3 digits
        up, down = decode(trace["error_y"]["array"]), decode(trace["error_y"]["arrayminus"])
        for n, ms, plus, minus in zip(
            decode(trace["x"]), decode(trace["y"]), up, down, strict=True
        ):
            assert shown[(name, int(n))] == f"{ms:.3g} ({ms - minus:.3g}-{ms + plus:.3g})"
    assert any("load average" in c.value for c in at.caption)
    at.slider(key="k").set_value(3).run()  # the results stay for this session
    assert "speed_timing" in chart_keys(at)


def test_over_budget_sizes_are_refused_with_a_message() -> None:
    at = open_page("speed", d_model="128", heads="1")  # head dim 128
    at.multiselect(key="speed_methods").set_value(["einsum", "banded"]).run()
    at.select_slider(key="speed_max_n").set_value(2048).run()
    assert_clean(at)
    shown = " ".join(w.value.replace("\\", "") for w in at.warning)
    assert "refused" in shown and "einsum" in shown and "256.0 MiB" in shown
    assert "n (sequence length) = 1024" in shown  # a^K (1024, 1024, 128) alone is 512 MiB
    assert "banded** refused" not in shown


def test_a_second_measurement_waits_for_the_first() -> None:
    """Two measurements at once would time each other: while one holds the server's lock,
    another session's click explains and measures nothing."""
    from explorer.stories.speed import benchmark

    at = open_page("speed")
    at.select_slider(key="speed_max_n").set_value(32).run()
    lock = benchmark.measurement_lock()
    assert lock.acquire(blocking=False)
    try:
        at.button(key="speed_measure").click().run()
    finally:
        lock.release()
    assert_clean(at)
    assert "speed_timing" not in chart_keys(at)
    assert any("Another session is measuring" in info.value for info in at.info)
    at.button(key="speed_measure").click().run()
    assert "speed_timing" in chart_keys(at)


def test_a_busy_machine_and_a_wide_spread_are_named() -> None:
    from explorer.stories.speed import views as speed

    row = {"method": "banded", "n": 16, "min_ms": 0.1, "q1_ms": 0.2, "median_ms": 0.3,
           "q3_ms": 0.9, "max_ms": 2.0}  # fmt: skip
    result = speed.BenchResult(8, 2, 2, 11, rows=[row], load=(3.5, 4.2), cores=2)
    notes = speed.noise_notes(result)
    assert "load average 4.2 on 2 core(s)" in notes[0]
    assert "banded at n = 16" in notes[1]
    quiet = speed.BenchResult(8, 2, 2, 11, rows=[{**row, "q3_ms": 0.35}], load=(0.5, 0.7))
    assert speed.noise_notes(quiet) == []


def test_the_benchmark_warms_up_and_times_every_repeat(monkeypatch) -> None:
    from explorer.stories.speed import benchmark as speed

    calls: dict[str, int] = {}

    def fake_runner(method, inputs):
        def call():
            calls[method] = calls.get(method, 0) + 1

        return call

    monkeypatch.setattr(speed.bench, "runner", fake_runner)
    result = speed.run_benchmark(("sdpa", "banded"), (16,), 8, 2, 2, 7, lambda *a: None)
    assert [(r["method"], r["n"]) for r in result.rows] == [("sdpa", 16), ("banded", 16)]
    assert all(count >= 7 + speed.WARMUP_CALLS for count in calls.values())
    for row in result.rows:
        assert row["min_ms"] <= row["q1_ms"] <= row["median_ms"] <= row["q3_ms"] <= row["max_ms"]


def test_the_page_offers_only_methods_this_server_can_run() -> None:
    at = open_page("speed")
    assert_clean(at)
    assert not at.warning  # nothing refused at the default selection
    offered = set(at.multiselect(key="speed_methods").options)
    assert offered == {"sdpa", "plain", "banded", "bucket", "skew", "matmul", "einsum"}


def markdown_rows(at, head: str) -> list[list[str]]:
    """The cells of the markdown table that starts with ``head``, unescaped, header first."""
    text = next(m.value for m in at.markdown if m.value.startswith(head))
    lines = [line for line in text.splitlines() if not line.startswith("|---")]
    return [[c.strip().replace("\\", "") for c in line.strip("|").split(" | ")] for line in lines]
