"""The server's memory policy (explorer.frame.memory): caches bounded by bytes for the whole
process, and a computation refused before it would pass the process's limit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.frame import memory
from explorer.frame.cache_ledger import Ledger, value_bytes
from explorer.frame.memory import admit, cached


def test_value_bytes_counts_arrays_tensors_and_text_once():
    array = np.zeros((8, 16), np.float32)  # 512 B
    tensor = torch.zeros(4, 4, dtype=torch.float64)  # 128 B
    shared = [array, array, {"t": tensor, "s": "abcd"}]  # the array twice: counted once
    assert value_bytes(shared) == 512 + 128 + 2 + 4  # keys "t" and "s", then "abcd"
    assert value_bytes(None) == value_bytes(3) == 0


def test_ledger_clears_the_least_recently_used_beyond_its_budget():
    cleared = []
    ledger = Ledger(budget=100)
    for key, size in (("a", 40), ("b", 40)):
        ledger.enter(("f", key), lambda key=key: cleared.append(key), size, per_function=8)
    ledger.enter(("f", "a"), lambda: cleared.append("a"), 40, per_function=8)  # a is used again
    ledger.enter(("f", "c"), lambda: cleared.append("c"), 40, per_function=8)  # 120 > 100
    assert cleared == ["b"] and ledger.bytes == 80 and len(ledger) == 2
    ledger.enter(("g", "x"), lambda: cleared.append("x"), 30, per_function=8)
    assert cleared == ["b", "a"] and ledger.bytes == 70


def test_ledger_keeps_what_is_costly_to_compute_again_per_byte():
    """GreedyDual-Size: a small value that took seconds (a model's pass over a passage) outlives
    large maps computed in milliseconds, even when they were used after it; what is never used
    again ages out all the same."""
    cleared = []
    ledger = Ledger(budget=1000)
    ledger.enter(("pass", 0), lambda: cleared.append("pass"), 100, 8, cost_s=5.0)  # 0.05 s/B
    for key in range(4):  # 400 B maps at 0.2 s: 0.0005 s/B, each used after the pass
        ledger.start_run()  # each drawn by a view of its own
        ledger.enter(("map", key), lambda key=key: cleared.append(key), 400, 8, cost_s=0.2)
    assert cleared == [0, 1]  # the maps went, oldest first; least recently used was the pass
    assert ledger.bytes == 900
    # maps that keep coming raise the inflation until the pass, never used again, goes too
    for key in range(4, 1000):
        ledger.start_run()
        ledger.enter(("map", key), lambda key=key: cleared.append(key), 400, 8, cost_s=0.2)
    assert "pass" in cleared


def test_a_views_own_values_go_last_whatever_they_cost():
    cleared = []
    ledger = Ledger(budget=1000)
    ledger.enter(("pass", 0), lambda: cleared.append("pass"), 100, 8, cost_s=5.0)
    ledger.start_run()  # a view whose maps together fill the budget
    for key in range(3):
        ledger.enter(("map", key), lambda key=key: cleared.append(key), 310, 8)
    assert cleared == ["pass"]  # not its own first map, however cheap
    ledger.enter(("map", 3), lambda: cleared.append(3), 310, 8)
    assert cleared == ["pass", 0]  # then its own, least recently used first


def test_ledger_follows_streamlits_own_entry_limit():
    ledger = Ledger(budget=10**9)
    for key in range(5):
        ledger.enter(("f", key), lambda: None, 10, per_function=3)
    assert len(ledger) == 3 and ledger.bytes == 30  # the two oldest left Streamlit's cache


def test_cached_values_are_evicted_by_bytes_and_large_ones_are_not_kept(monkeypatch):
    ledger = Ledger(budget=3 * 8 * 2**10)  # three of the 8 KiB values below
    monkeypatch.setattr(memory, "LEDGER", ledger)
    monkeypatch.setattr(memory, "ENTRY_MAX_BYTES", 64 * 2**10)
    calls = []

    @cached(16)
    def block(size: int, seed: int) -> np.ndarray:
        calls.append((size, seed))
        return np.full(size, seed, np.float32)

    block.clear()
    for seed in range(4):
        block(2048, seed)  # 8 KiB each: the fourth pushes the first out
    assert ledger.bytes == 3 * 8 * 2**10
    block(2048, 3)
    assert calls.count((2048, 3)) == 1  # still cached
    block(2048, 0)
    assert calls.count((2048, 0)) == 2  # evicted, so computed again
    block(2**15, 9), block(2**15, 9)  # 128 KiB: over ENTRY_MAX_BYTES, never kept
    assert calls.count((2**15, 9)) == 2
    block.clear()


def test_admit_empties_the_caches_before_it_refuses(monkeypatch):
    resident = {"bytes": 600 * 2**20}
    cleared = []

    def release():
        cleared.append(True)
        resident["bytes"] -= 100 * 2**20  # what the caches held

    monkeypatch.setattr(memory, "limit_bytes", lambda: 690 * 2**20)
    monkeypatch.setattr(memory, "resident_bytes", lambda: resident["bytes"])
    monkeypatch.setattr(memory, "release_memory", release)
    admit("small view", 1 * 2**20)  # 600 + 1 > 690 - 128: so caches go first
    assert cleared == [True]
    admit("small view", 1 * 2**20)  # 500 + 1 fits: nothing more to clear
    assert cleared == [True]
    with pytest.raises(ValueError) as refused:
        admit("distance profile", 300 * 2**20, wait_s=0.3)
    message = str(refused.value)
    assert "distance profile needs about 300.0 MiB" in message
    assert "of the 690.0 MiB it may use" in message and "choose a smaller n" in message


def test_admit_does_nothing_without_a_known_limit(monkeypatch):
    monkeypatch.setattr(memory, "limit_bytes", lambda: None)
    admit("anything", 2**60)


def test_admit_waits_for_memory_other_reruns_free(monkeypatch):
    readings = iter([650, 650, 640, 600, 520, 500] + [500] * 100)  # MiB, falling as they finish
    monkeypatch.setattr(memory, "limit_bytes", lambda: 690 * 2**20)
    monkeypatch.setattr(memory, "resident_bytes", lambda: next(readings) * 2**20)
    monkeypatch.setattr(memory, "release_memory", lambda: None)
    monkeypatch.setattr(memory.time, "sleep", lambda s: None)
    admit("attention", 40 * 2**20, wait_s=60)  # 520 + 40 > 562; 500 + 40 fits
    assert next(readings) == 500  # it stopped reading as soon as the room was there


def test_a_cached_view_is_one_read_only_value_for_every_visitor():
    """Every rerun gets the same arrays (no copy per visitor), and none can write into them;
    a resource (a model) is shared as it is."""

    @cached(4)
    def view(n: int) -> dict[str, np.ndarray]:
        return {"z": np.arange(n, dtype=np.float32)}

    @cached(4, resource=True)
    def model(n: int) -> list[np.ndarray]:
        return [np.zeros(n)]

    first, second = view(3), view(3)
    assert first["z"] is second["z"]
    assert not first["z"].flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        first["z"][0] = 1.0
    assert model(2)[0] is model(2)[0] and model(2)[0].flags.writeable
    view.clear()
    model.clear()


def test_the_heap_is_trimmed_after_a_computation_and_not_after_a_hit(monkeypatch):
    trims = []
    monkeypatch.setattr(memory, "trim_heap", lambda: trims.append(1))
    monkeypatch.setattr(memory, "COMPUTED_S", 0.0)  # every miss counts as a computation

    @cached(4)
    def view(n: int) -> np.ndarray:
        return np.zeros(n)

    view(5)
    assert len(trims) == 1
    monkeypatch.setattr(memory, "COMPUTED_S", 1.0)  # a hit takes far less than a second
    view(5)
    assert len(trims) == 1
    view.clear()


def test_a_hit_is_not_walked_again_and_a_recomputed_value_is(monkeypatch):
    """Sizing and locking a value walks everything it holds (a rerun's cached views are many
    thousands of objects): a cache hit only marks its entry used."""
    ledger = Ledger(budget=2**20)
    monkeypatch.setattr(memory, "LEDGER", ledger)
    walked = []
    monkeypatch.setattr(memory, "value_bytes", lambda value: walked.append(value) or 64)

    @cached(4)
    def view(n: int) -> dict[str, np.ndarray]:
        return {"z": np.zeros(n, np.float32)}

    view.clear()
    first = view(16)
    view(16), view(16)
    assert len(walked) == 1 and ledger.bytes == 64
    view.clear()  # Streamlit drops it (another key, its own entry limit): a new object
    second = view(16)
    assert second is not first and len(walked) == 2
    assert not second["z"].flags.writeable
    view.clear()
