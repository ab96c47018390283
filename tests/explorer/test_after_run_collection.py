"""Garbage is collected after a view, not inside it: Streamlit's own full collection at the end of
each script run is switched off, and explorer.frame.memory's collector thread runs one once the
outermost view releases the view slot."""

from __future__ import annotations

import gc
import threading
import time
import tomllib
from pathlib import Path

from explorer.frame import memory
from explorer.frame.failures import guarded_view

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_streamlit_collects_nothing_inside_the_run():
    runner = tomllib.loads(CONFIG.read_text()).get("runner", {})
    assert runner.get("postScriptGC") is False


def full_collections_during(action, timeout_s: float = 5.0) -> list[str]:
    """The threads that ran a full (generation 2) collection while ``action`` ran and until
    the collector thread finished its next collection."""
    seen: list[str] = []

    def watch(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            seen.append(threading.current_thread().name)

    before = memory.collections_done()
    gc.callbacks.append(watch)
    try:
        action()
        deadline = time.monotonic() + timeout_s
        while memory.collections_done() == before and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        gc.callbacks.remove(watch)
    assert memory.collections_done() > before, "the collector thread never collected"
    return seen


def test_a_request_is_served_by_one_full_collection_on_the_collector_thread():
    threads = full_collections_during(lambda: [memory.collect_soon() for _ in range(5)])
    assert "after-run-gc" in threads
    assert threading.current_thread().name not in threads


def test_a_fragment_rerun_asks_for_a_collection_even_when_it_fails():
    def view() -> None:
        raise RuntimeError("a bug in a view")

    threads = full_collections_during(guarded_view(view))
    assert threads.count("after-run-gc") >= 1


def test_a_fragment_drawn_inside_a_page_run_waits_for_the_page(monkeypatch):
    """The collection is asked for once, when the page run ends: a fragment's first drawing
    inside the run must not start the clock, or the collection lands inside a long run."""
    asked = []
    monkeypatch.setattr(memory, "collect_soon", lambda: asked.append(1))
    with memory.one_view_at_a_time():
        guarded_view(lambda: None)()  # a fragment drawn by the page
        assert asked == []
    assert asked == [1]
