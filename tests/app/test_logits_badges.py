"""The agreement badges on Relative logits compare the whole of what each method computed.

A method wrong only in its last rows must turn its badge red: the banded method at k = 0 and
n = 65 once counted the last diagonal cell twice while a badge comparing the top-left corner
stayed green. The slip is put back here (the strip geometry it had) to check that it shows.
"""

from __future__ import annotations

from unittest import mock

import relpos_core.methods.banded as banded
from tests.app.conftest import assert_clean, open_page


def corner_slip(p0: int, p1: int, n_k: int, k: int) -> tuple[int, int]:
    """The strip's columns as they were: a lone row at k = 0 met its far parts left of its
    diagonal, so a block's last row counted its diagonal cell twice."""
    c0 = min(max(p0 - k + 1, 0), n_k)
    return c0, max(min(p1 + k - 1, n_k), c0)


def badges(at) -> dict[str, str]:
    """method -> its badge's markdown."""
    found = [m.value for m in at.markdown if "max |difference|" in m.value]
    return {b.split(" vs definition")[0].split("]")[-1].split()[-1]: b for b in found}


def test_a_method_wrong_in_its_last_row_gets_a_red_badge() -> None:
    # a seed no other test draws: the view is computed under the slip, and cached apart
    with mock.patch.object(banded, "strip_columns", corner_slip):
        at = open_page("logits", n="65", k="0", seed="4099")
    assert_clean(at)
    shown = badges(at)
    assert shown["banded"].startswith(":red-badge"), shown["banded"]
    assert "all 65 x 65 cells" in shown["banded"]
    others = [b for name, b in shown.items() if name != "banded"]
    assert others and all(b.startswith(":green-badge") for b in others), others


def test_every_badge_says_which_cells_it_compared() -> None:
    at = open_page("logits", n="65", k="0")
    assert_clean(at)
    shown = badges(at)
    assert set(shown) == {"loop", "einsum", "matmul", "skew", "bucket", "banded"}, shown
    assert all(b.startswith(":green-badge") for b in shown.values()), shown
    for name in ("skew", "bucket", "banded"):  # every cell drawn
        assert "all 65 x 65 cells" in shown[name], shown[name]
    assert "its 45 x 45 block" in shown["loop"]  # 2048 pairs one at a time
