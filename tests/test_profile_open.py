"""scripts/profile_open.py sums a CPU profile's samples by what ran, each sample with the time
until the next one, as Chromium's DevTools count self time."""

from __future__ import annotations

import pytest

from scripts.profile_open import PARTS, part_of, self_times


def frame(name: str, url: str = "") -> dict:
    return {"functionName": name, "url": url}


def test_each_node_is_counted_as_what_ran() -> None:
    assert part_of(frame("(root)")) is None
    assert part_of(frame("(idle)")) == "waiting"
    assert part_of(frame("(garbage collector)")) == "GC"
    assert part_of(frame("(program)")) == "native"
    assert part_of(frame("draw", "http://h/static/js/plotly.min.abc.js")) == "plotly.js"
    assert part_of(frame("render", "http://h/static/js/index.abc.js")) == "Streamlit"


def test_self_time_is_each_sample_times_the_delta_after_it() -> None:
    profile = {
        "nodes": [
            {"id": 1, "callFrame": frame("(root)")},
            {"id": 2, "callFrame": frame("(idle)")},
            {"id": 3, "callFrame": frame("plot", "http://h/static/js/Plotly.123.js")},
            {"id": 4, "callFrame": frame("(program)")},
        ],
        # the first delta is the start's; each sample lasts until the next one
        "samples": [2, 3, 3, 4, 1],
        "timeDeltas": [50, 1000, 2000, 3000, 500],
    }
    times = self_times(profile)
    assert list(times) == list(PARTS)
    assert times["waiting"] == pytest.approx(1.0)
    assert times["plotly.js"] == pytest.approx(5.0)
    assert times["native"] == pytest.approx(0.5)
    assert times["GC"] == 0 and times["Streamlit"] == 0
