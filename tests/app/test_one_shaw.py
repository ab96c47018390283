"""Shaw's model is one model on every page: on random weights the scheme pages (Position schemes,
Compare schemes) draw it from the same q, k, v and tables as the Shaw pages (Relative logits,
Attention), so the numbers each page draws for the same pair agree."""

from __future__ import annotations

import numpy as np

from explorer.frame.params import ViewParams
from tests.app.conftest import assert_clean, open_page
from tests.app.panels import panel_z

VIEW = {"weights": "random", "n": "37", "k": "5"}  # n = 37: a pair 36 apart, past k = 5
PAIR = (0, 36)
CLOSE = {"rtol": 1e-4, "atol": 1e-5}


def heads_drawn(page: str, key: str, heads: int, **query: str) -> np.ndarray:
    """(heads, n, n): every head's panel of the chart ``chart_<key>`` of ``page``."""
    at = open_page(page, **VIEW, **query)
    assert_clean(at)
    return np.stack([panel_z(at, key, h) for h in range(heads)])


def test_position_schemes_draws_the_relative_term_of_relative_logits() -> None:
    """Shaw's position term is q_i · w^K_clip(j-i, k) / sqrt(d): one number per pair whatever
    the page (it was 0.1547 on Position schemes and -0.3636 on Relative logits at (0, 36))."""
    heads = ViewParams().heads
    shaw_pages = heads_drawn("logits", "logits_heads", heads)
    schemes_page = heads_drawn("family", "family_heads", heads, scheme="shaw")
    assert np.isfinite(shaw_pages[:, PAIR[0], PAIR[1]]).all()
    np.testing.assert_allclose(schemes_page[:, PAIR[0], PAIR[1]], shaw_pages[:, PAIR[0], PAIR[1]],
                               **CLOSE)  # fmt: skip
    np.testing.assert_allclose(schemes_page, shaw_pages, **CLOSE)


def test_compare_draws_the_attention_pages_weights() -> None:
    """Compare's scheme A = Shaw draws the weights the Attention page draws, head by head."""
    heads = ViewParams().heads
    attention = heads_drawn("attention", "attention_heads", heads)
    for head in range(heads):
        at = open_page("compare", **VIEW, compare_a="shaw", compare_head=str(head))
        assert_clean(at)
        compared = panel_z(at, "compare_weights", 0)
        np.testing.assert_allclose(compared[PAIR], attention[head][PAIR], **CLOSE)
        np.testing.assert_allclose(compared, attention[head], **CLOSE)
