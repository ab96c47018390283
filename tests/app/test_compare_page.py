"""The Compare schemes page through app.py: both schemes' weights equal the core's, and the
difference is B - A."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.frame.params import ViewParams
from explorer.weights.example import derived_seed, example_inputs
from relpos_core.schemes import make_scheme
from relpos_core.schemes.catalogue import scheme_names
from tests.app.conftest import assert_clean, chart_keys, open_page
from tests.app.panels import panel_z

CLOSE = {"rtol": 1e-4, "atol": 1e-4}


def scheme_weights(params: ViewParams, name: str, head: int) -> np.ndarray:
    """One head's attention weights of scheme ``name`` on the view's own q, k, v."""
    options = {"shaw": {"max_relative_position": params.k}}.get(name, {})
    scheme = make_scheme(
        name, params.heads, params.head_dim, derived_seed(params.seed, "scheme:" + name), **options
    )
    inputs = example_inputs(params)
    with torch.no_grad():
        if name == "shaw":  # Shaw's tables: the view's own, as every page draws them
            scheme.table_k.copy_(inputs.table_k)
            scheme.table_v.copy_(inputs.table_v)
        return scheme(inputs.q, inputs.k, inputs.v, mask=inputs.mask, causal=params.causal)[1][
            0, head
        ].numpy()


def test_compare_page_draws_both_schemes_weights_and_their_difference() -> None:
    at = open_page("compare", mask="padding")
    assert_clean(at)
    at.button_group(key="compare_b").set_value("alibi").run()
    at.button_group(key="compare_head").set_value(1).run()
    assert_clean(at)
    params = ViewParams(mask="padding")
    weights = {name: scheme_weights(params, name, 1) for name in ("shaw", "alibi")}
    a, b = panel_z(at, "compare_weights", 0), panel_z(at, "compare_weights", 1)
    allowed = np.arange(8) < 6  # the last two keys are padding: blank
    assert np.isnan(a[:, ~allowed]).all()
    np.testing.assert_allclose(a[:, allowed], weights["shaw"][:, allowed], **CLOSE)
    np.testing.assert_allclose(b[:, allowed], weights["alibi"][:, allowed], **CLOSE)
    diff = panel_z(at, "compare_diff")
    np.testing.assert_allclose(diff[:, allowed], (b - a)[:, allowed], **CLOSE)
    metric = at.metric[0]
    assert float(metric.value) == pytest.approx(float(np.nanmax(np.abs(b - a))), rel=1e-2)


def test_bad_scheme_in_the_url_warns_and_compares_the_default() -> None:
    at = open_page("compare", compare_a="nope", compare_b="t5", t5_buckets="abc")
    assert_clean(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert (
        f"URL parameter compare_a: must be one of {', '.join(scheme_names())}, got 'nope'; "
        "using shaw"
    ) in warnings
    assert "t5_buckets: must be one of 8, 16, 32, 64, 128, got 'abc'; using 32" in warnings
    assert {"compare_weights", "compare_diff"} <= chart_keys(at)
    params = ViewParams()
    np.testing.assert_allclose(
        panel_z(at, "compare_weights", 1), scheme_weights(params, "t5", 0), **CLOSE
    )


ODD = {"d_model": "8", "heads": "8"}  # head width 1: RoPE needs an even one


def warnings_of(at) -> str:
    return " ".join(w.value for w in at.warning).replace("\\", "")


@pytest.mark.parametrize(("a", "b", "drawn"), [("rope", "t5", "B"), ("alibi", "rope", "A")])
def test_a_scheme_that_cannot_run_leaves_the_other_drawn(a: str, b: str, drawn: str) -> None:
    """RoPE's refusal at an odd head width is RoPE's alone: the other scheme is drawn, its
    weights those of its definition, and no difference is claimed."""
    at = open_page("compare", **ODD, compare_a=a, compare_b=b, compare_head="3")
    assert_clean(at)
    assert "RoPE (Su et al. 2021) cannot run on this view: head_dim (d) must be even" in (
        warnings_of(at)
    )
    assert chart_keys(at) == {"compare_weights"}
    params = ViewParams(d_model=8, heads=8)
    runs = b if drawn == "B" else a
    np.testing.assert_allclose(
        panel_z(at, "compare_weights"), scheme_weights(params, runs, 3), **CLOSE
    )
    words = " ".join(c.value for c in at.caption).replace("\\", "")
    other = "A" if drawn == "B" else "B"
    assert f"Only {drawn} is drawn: {other} cannot run on this view" in words
    assert not at.metric  # no |B - A| without both


def test_two_schemes_that_cannot_run_are_each_refused() -> None:
    at = open_page("compare", **ODD, compare_a="rope", compare_b="rope")
    assert_clean(at)
    assert warnings_of(at).count("cannot run on this view") == 1  # one scheme, said once
    assert not chart_keys(at)
    links = [link.proto.label for link in at.get("page_link")]  # the page ended as a page does
    assert "Previous: Position schemes" in links and "Next: Predict" in links, links


def test_an_even_head_width_draws_both() -> None:
    at = open_page("compare", d_model="16", heads="8", compare_a="rope", compare_b="t5")
    assert_clean(at)
    assert "cannot run" not in warnings_of(at)
    assert {"compare_weights", "compare_diff"} <= chart_keys(at)
