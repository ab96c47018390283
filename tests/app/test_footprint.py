"""What a server process imports to draw every page: none of the heavy modules it never uses.

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

from explorer.frame.navigation import PAGES
from tests.app.conftest import ENTRY

NEVER = ("torch._dynamo", "torch._inductor", "sympy", "pandas", "pyarrow")

TOUR = f"""
import json, sys
from streamlit.testing.v1 import AppTest
errors = []
for stem in {[page.stem for page in PAGES]!r}:
    for query in ({{}}, {{"n": "1024"}}):
        at = AppTest.from_file({str(ENTRY)!r}, default_timeout=300)
        for key, value in query.items():
            at.query_params[key] = value
        if stem != "overview":
            at.switch_page(f"../../../pages/{{stem}}.py")
        at.run()
        errors += [f"{{stem}} {{query}}: {{e.value}}" for e in [*at.exception, *at.error]]
print(json.dumps({{"errors": errors, "loaded": [m for m in {NEVER!r} if m in sys.modules]}}))
"""


def test_every_page_draws_without_the_heavy_modules():
    done = subprocess.run(
        [sys.executable, "-c", TOUR], capture_output=True, text=True, timeout=900, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["errors"] == []
    assert report["loaded"] == []
