"""One view at a time in the whole process: a page run waits while another visitor's holds the
view slot (explorer.frame.memory.VIEW_SLOT), and runs as soon as it is released.

What a rerun holds outside the caches (tensors it computed and did not keep, figures being
built) is bounded by one view only if no two reruns run at once; four visitors at n = 1024 took
the server past 690 MB when only the computations were serialized.
"""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from explorer.frame import failures, memory
from tests.app.conftest import ENTRY, assert_clean


def test_a_page_run_waits_for_the_view_slot():
    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    at.query_params["weights"] = "random"
    at.run()  # a first run loads the modules, so the timed runs below only draw
    held = threading.Event()
    release = threading.Event()

    def other_visitor() -> None:
        with memory.one_view_at_a_time():
            held.set()
            release.wait(30)

    visitor = threading.Thread(target=other_visitor)
    visitor.start()
    held.wait(10)
    try:
        with pytest.raises(RuntimeError, match="timed out"):
            at.run(timeout=3)  # the page cannot run while the slot is held elsewhere
    finally:
        release.set()
        visitor.join(10)
    at = AppTest.from_file(str(ENTRY), default_timeout=60)
    at.query_params["weights"] = "random"
    assert_clean(at.run())  # released: the next run draws


def test_a_fragment_rerun_takes_the_slot_too():
    order = []
    started = threading.Event()

    def part() -> None:
        order.append("fragment")

    def other_visitor() -> None:
        with memory.one_view_at_a_time():
            started.set()
            time.sleep(0.6)
            order.append("other view")

    visitor = threading.Thread(target=other_visitor)
    visitor.start()
    started.wait(10)
    failures.guarded_view(part)()  # what failures.fragment hands st.fragment to rerun
    visitor.join(10)
    assert order == ["other view", "fragment"]


def test_the_slot_is_reentrant_for_a_fragment_inside_a_page_run():
    with memory.one_view_at_a_time(), memory.one_view_at_a_time():
        assert memory.VIEW_SLOT._is_owned()  # type: ignore[attr-defined]
    assert not memory.VIEW_SLOT._is_owned()  # type: ignore[attr-defined]
