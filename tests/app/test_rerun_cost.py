"""What every rerun pays after the page: Streamlit's full garbage collection skips the objects
of the modules already loaded (explorer.frame.memory.freeze_loaded_code), which app.py freezes
after a run that loaded new ones."""

from __future__ import annotations

import gc

from streamlit.testing.v1 import AppTest

from tests.app.conftest import ENTRY, assert_clean


def test_a_run_leaves_the_loaded_modules_frozen():
    at = AppTest.from_file(str(ENTRY), default_timeout=120)
    at.query_params["weights"] = "random"
    assert_clean(at.run())
    frozen = gc.get_freeze_count()
    assert frozen > 100_000  # torch's, plotly's and the app's objects, not a handful
    tracked = len(gc.get_objects(generation=2))
    assert tracked < frozen  # what a full collection still walks is the smaller part
