"""Garbage is collected after a run, not inside it: Streamlit's own full collection at the end of
each script run is switched off, and explorer.frame.host's collector thread runs one instead."""

from __future__ import annotations

import gc
import sys
import threading
import time
import tomllib
import types
import weakref
from pathlib import Path

import pytest

from explorer.frame import host
from explorer.frame.failures import guarded_view
from explorer.frame.memory import collect_all, release_memory

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

    before = host.collections_done()
    gc.callbacks.append(watch)
    try:
        action()
        deadline = time.monotonic() + timeout_s
        while host.collections_done() == before and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        gc.callbacks.remove(watch)
    assert host.collections_done() > before, "the collector thread never collected"
    return seen


def test_a_request_is_served_by_one_full_collection_on_the_collector_thread():
    threads = full_collections_during(lambda: [host.collect_soon() for _ in range(5)])
    assert "after-run-gc" in threads
    assert threading.current_thread().name not in threads


def test_a_fragment_rerun_asks_for_a_collection_even_when_it_fails():
    def view() -> None:
        raise RuntimeError("a bug in a view")

    threads = full_collections_during(guarded_view(view))
    assert threads.count("after-run-gc") >= 1


@pytest.fixture(autouse=True)
def unfrozen_after():
    """The frozen objects go back to the collector's generations: no other test inherits them."""
    yield
    gc.unfreeze()


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_the_collector_freezes_what_survives_once_new_code_has_loaded(monkeypatch):
    monkeypatch.setitem(sys.modules, "newly_loaded_module", types.ModuleType("newly_loaded"))
    full_collections_during(host.collect_soon)
    assert gc.get_freeze_count() > 1000  # this process's modules at least
    before = gc.get_freeze_count()
    survivor = Node()
    gc.collect()
    assert gc.get_freeze_count() == before  # a plain collection freezes nothing new
    del survivor


def test_frozen_cyclic_garbage_waits_for_the_next_full_refreeze():
    node = Node()
    alive = weakref.ref(node)
    gc.freeze()
    del node
    gc.collect()
    assert alive() is not None, "a frozen cycle is skipped by an ordinary collection"
    collect_all()
    assert alive() is None, "collect_all reaches the frozen objects too"
    assert gc.get_freeze_count() > 0  # and freezes what survived


def test_releasing_memory_for_a_refused_view_collects_frozen_garbage():
    node = Node()
    alive = weakref.ref(node)
    gc.freeze()
    del node
    release_memory()
    assert alive() is None
