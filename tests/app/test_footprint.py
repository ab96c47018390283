"""What a server process imports to draw every page: none of the heavy modules it never uses;
and what drawing a view again computes: nothing, its values are all cached.

The host a shared link runs on gives the whole server as little as 690 MB. Measured on two
cores: torch's compiler stack (torch._dynamo, pulled in by a decorator or a custom op's first
call) costs 70 MB and 1.5 s, sympy (pulled in by torch.broadcast_shapes) about 30 MB, pandas
with pyarrow about 65 MB. The check runs in a fresh interpreter, since the test process itself
imports all of them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from explorer.frame.navigation import PAGES
from tests.app.conftest import ENTRY

NEVER = ("torch._dynamo", "torch._inductor", "sympy", "pandas", "pyarrow")

TOUR = f"""
import json, sys
from streamlit.testing.v1 import AppTest
from explorer.frame.memory import COMPUTED
errors, recomputed = [], {{}}
for stem in {[page.stem for page in PAGES]!r}:
    for query in ({{}}, {{"n": "1024"}}):
        at = AppTest.from_file({str(ENTRY)!r}, default_timeout=300)
        for key, value in query.items():
            at.query_params[key] = value
        if stem != "overview":
            at.switch_page(f"../../../pages/{{stem}}.py")
        at.run()
        errors += [f"{{stem}} {{query}}: {{e.value}}" for e in [*at.exception, *at.error]]
        before = COMPUTED.copy()
        at.run()  # the same view again, as a rerun that changed nothing
        again = COMPUTED - before
        if again:
            recomputed[f"{{stem}} {{query}}"] = dict(again)
print(json.dumps({{
    "errors": errors,
    "loaded": [m for m in {NEVER!r} if m in sys.modules],
    "recomputed": recomputed,
}}))
"""


@pytest.fixture(scope="module")
def tour() -> dict:
    """Every page at its default and at n = 1024 (trained weights), each run twice, in a fresh
    interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", TOUR], capture_output=True, text=True, timeout=900, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_page_draws_without_the_heavy_modules(tour):
    assert tour["errors"] == []
    assert tour["loaded"] == []


def test_a_view_drawn_again_computes_nothing(tour):
    """Every value a view needs stays cached while it is drawn again: a view's working set fits
    the cache's byte budget and each cached function's entry count (Position schemes at
    n = 1024 once pushed out its own first values, and every rerun recomputed all six models)."""
    assert tour["recomputed"] == {}
